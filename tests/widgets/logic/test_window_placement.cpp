// The main window on the screen it opens on (issue 36: at 1366×768 the first launch opened 1500×950 and a
// restart restored 1600×1000, the timeline, pane tabs and status bar off-screen).
#include "check.h"
#include "logic/WindowPlacement.h"

TEST_CASE(the_first_window_fits_small_screens_and_keeps_its_size_on_large_ones) {
  const ScreenRect full{0, 0, 2560, 1440};
  REQUIRE(firstWindowRect(full) == (ScreenRect{530, 245, 1500, 950}));  // centred
  for (const ScreenRect screen : {ScreenRect{0, 0, 1366, 740}, ScreenRect{0, 0, 1280, 720}}) {
    const ScreenRect r = firstWindowRect(screen);
    REQUIRE(r == screen);  // the whole available area, no more
  }
  // An available area that starts below a top panel.
  REQUIRE(firstWindowRect({0, 32, 1366, 736}) == (ScreenRect{0, 32, 1366, 736}));
}

TEST_CASE(a_remembered_geometry_is_brought_onto_the_screen) {
  const ScreenRect small{0, 0, 1366, 768};
  // Remembered on a larger screen: shrunk to the available area and moved onto it.
  REQUIRE(fitWindowRect({100, 50, 1600, 1000}, small) == (ScreenRect{0, 0, 1366, 768}));
  // Partly off the right and bottom edges: moved back, size kept.
  REQUIRE(fitWindowRect({1000, 600, 800, 400}, small) == (ScreenRect{566, 368, 800, 400}));
  // On a second screen that is gone (negative or far coordinates): back onto this one.
  REQUIRE(fitWindowRect({-2000, -300, 900, 700}, small) == (ScreenRect{0, 0, 900, 700}));
  REQUIRE(fitWindowRect({4000, 2000, 900, 700}, small) == (ScreenRect{466, 68, 900, 700}));
  // Already inside: unchanged.
  REQUIRE(fitWindowRect({10, 20, 1200, 700}, small) == (ScreenRect{10, 20, 1200, 700}));
  // A screen whose available area does not start at 0 (a panel on the left and at the top).
  REQUIRE(fitWindowRect({0, 0, 1366, 768}, {48, 32, 1318, 736}) == (ScreenRect{48, 32, 1318, 736}));
}

TEST_MAIN()

// Where the main window goes on the screen it opens on: the first launch's size, and a remembered
// geometry (from a larger screen, or one no longer attached) brought back onto this one. Plain C++ (no Qt).
#pragma once

struct ScreenRect {
  int x = 0, y = 0, width = 0, height = 0;
  bool operator==(const ScreenRect& o) const {
    return x == o.x && y == o.y && width == o.width && height == o.height;
  }
};

// The first launch: 1500 × 950 where the screen has room, else the whole available area.
ScreenRect firstWindowRect(const ScreenRect& available);
// `wanted` made to fit `available`: no wider or taller than it, and moved inside it where it sticks out.
ScreenRect fitWindowRect(const ScreenRect& wanted, const ScreenRect& available);

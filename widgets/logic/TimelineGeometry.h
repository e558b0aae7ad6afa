// The removal timeline's arithmetic, apart from its drawing (TimelineWidget draws and forwards input, and
// asks these): which x pixel a step is drawn at and which step and row lie under a pixel, the axis ticks,
// which marker a click hits, the visible step range's fit / zoom / pan rules, and what a drag does to event
// steps (kept inside the steps not yet trained and the step budget; the gap drag). Plain C++ (no Qt, no
// torch: pixels are plain numbers), so it is tested headless (tests/widgets/logic).
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "schedule/schedule.h"

// The visible step range. The loss plot and the timeline keep theirs equal.
struct TimelineRange {
  double first = 0, last = 1;

  static constexpr double kMinSpan = 4;  // never closer than a few steps across
  // [first, last], widened about its middle to kMinSpan when narrower.
  static TimelineRange normalized(double first, double last);
  // The whole step budget [0, maxSteps], with 2 % of it (at least one step) of room on each side.
  static TimelineRange fit(int64_t maxSteps);
  // What the timeline and the plots show until the user zooms or pans: the steps trained and the events
  // still to come (`lastPending`, the step of the last; −1: none), with a quarter more, so a long run is
  // not a sliver at the left of its budget (step 232 of 100,000). The whole budget while nothing is trained
  // or pending, once the run is done, and once the later of the steps trained and the last event to come
  // reaches past a fifth of the budget (a schedule laid over the run, into whose later part one may drag
  // events; its end marker stays in view when the last event has fired).
  static TimelineRange automatic(int64_t maxSteps, int64_t stepsDone, int64_t lastPending);

  double span() const { return last - first; }
  bool same(const TimelineRange& o) const;  // equal to within 1e-9 of a step
  // The wheel's zoom: the step `anchor` (under the cursor) stays put, the span scales by 0.85 per notch
  // (120 units of angle) turned away from the user, by 1/0.85 per notch towards. Not normalized.
  TimelineRange zoomedAbout(double anchor, double wheelAngle) const;
};

// Where things are drawn: the plot area (in widget pixels; the row names are left of it, the step axis
// above it) and the step range shown across it. Rows are kRows equal bands, top to bottom.
struct TimelineGeometry {
  static constexpr int kRows = 5;  // LN_mlp, LN_qk, LN_v, LN_f, treatments
  static constexpr int kRightMargin = 14, kAxisHeight = 22, kBottomMargin = 4;
  static constexpr int kMarkerRadius = 8;  // a click within kMarkerRadius + 2 px hits a marker
  // A row fits a marker with its selection outline, and its name.
  static constexpr int kMinRowHeight = 2 * kMarkerRadius + 8;

  // The widget height that shows the step axis and every row at `rowHeight` px each.
  static int widgetHeightFor(int rowHeight) { return kAxisHeight + kRows * rowHeight + kBottomMargin; }

  double left = 0, top = 0, width = 10, height = 10;  // the plot area
  TimelineRange view;

  // The plot area of a widget of the given size whose row names take `leftMargin` px: at least 10×10 px.
  static TimelineGeometry forWidget(int widgetWidth, int widgetHeight, int leftMargin, TimelineRange view);

  double bottom() const { return top + height; }
  double xOf(double step) const;   // exact
  int markerX(double step) const;  // xOf rounded to the nearest pixel: where markers are drawn
  double stepOf(double x) const;   // exact (fractional) step under x
  int64_t stepAt(double x) const;  // the nearest whole step: what a click or drag snaps to
  int rowY(int row) const;         // the middle of a row, truncated to a pixel
  int rowAt(double y) const;       // -1 above or below the rows
  // Dragging the background `dx` px (rightwards) from where the view started at `pressFirst`: the content
  // follows the mouse, the span stays.
  TimelineRange panned(double pressFirst, double dx) const;

  // Axis ticks: about one per 90 px, at 1, 2 or 5 × a power of ten steps (at least one step apart).
  double tickSpacing() const;
  std::vector<double> ticks() const;  // the tick steps in view, none before step 0

  struct Marker {
    int64_t id = 0;
    int x = 0, y = 0;
  };
  // The marker nearest (x, y) within kMarkerRadius + 2 px; on a tie the later one in `markers` (drawn on
  // top). -1 when none.
  static int64_t markerAt(const std::vector<Marker>& markers, int x, int y);

  // The row an event is drawn in: its site kind's row for MakeFake, the treatments row otherwise.
  static int rowOf(const nf::ScheduleEvent& e);
  // The site kind whose events a row holds (rows 0–3; the treatments row has none: clamped to LN_f).
  static nf::SiteKind kindOfRow(int row);
};

// One mouse drag on the timeline, from press to release.
struct TimelineDrag {
  enum class Kind { None, Events, Gap, Pan };
  Kind kind = Kind::None;
  double pressX = 0;                    // widget x of the press
  double pressViewFirst = 0;            // the view's first step at the press: a pan moves from there
  int64_t pressedId = -1;               // the event pressed, -1 for the background
  std::map<int64_t, int64_t> from, to;  // the moving events: id → step at the press / shown now
  std::vector<int64_t> gapOrder;        // a gap drag's events, first to last (fixed at the press)
  int64_t gapFrom = 0, gapTo = 0;       // a gap drag's gap at the press / now

  // Applied events (before the steps done) are locked: they never move.
  static bool locked(const nf::ScheduleEvent& e, int64_t stepsDone) { return e.step < stepsDone; }
  // A step an edit may put an event at: [stepsDone, maxSteps − 1] (stepsDone once the run is finished).
  static int64_t clampToEditable(int64_t step, int64_t stepsDone, int64_t maxSteps);
  // The unlocked events a Shift-drag of `pressedId` spaces out, by step: the selection when it holds
  // more than one event including the pressed one, else the pressed event's row (its layer group).
  static std::vector<int64_t> gapGroup(const nf::Schedule& schedule, const std::set<int64_t>& selected,
                                       int64_t pressedId, int64_t stepsDone);

  // Starts dragging the unlocked event `pressedId` (already selected). Shift on the first event of its
  // gap group (of two or more) changes the group's gap; otherwise the selection's unlocked events move.
  void startEvents(const nf::Schedule& schedule, const std::set<int64_t>& selected, int64_t pressedId,
                   bool shift, int64_t stepsDone);
  // The mouse is `delta` whole steps from the press: sets `to`. Events: all move by the same number of
  // steps, clamped so that every one stays in [stepsDone, maxSteps − 1] (none moves when that cannot
  // be: the playhead has passed one). Gap: the first stays, event i goes to first + i·gap, the gap at
  // least 0 and small enough that the last stays before maxSteps.
  void moveBy(int64_t delta, int64_t stepsDone, int64_t maxSteps);
  bool movesEvents() const { return kind == Kind::Events || kind == Kind::Gap; }
  int64_t shownStep(const nf::ScheduleEvent& e) const;  // where `to` puts it, or its own step
  // (id, new step) for each event the drop would actually move, in id order.
  std::vector<std::pair<int64_t, int64_t>> moves(const nf::Schedule& schedule) const;
};

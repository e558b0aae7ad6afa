// The removal timeline's arithmetic, headless (no Qt): a step is drawn where a click on it lands, clicks snap
// to whole steps, rows and markers are hit where they are drawn, zoom keeps the step under the cursor, a pan
// follows the mouse, and drags keep events inside [steps done, max steps − 1]. Expected values are worked
// out by hand in the tables.
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "check.h"
#include "logic/TimelineGeometry.h"

using nf::EventAction;
using nf::ScheduleEvent;
using nf::SiteKind;

namespace {

bool near(double a, double b, double tolerance = 1e-9) { return std::abs(a - b) <= tolerance; }

TimelineGeometry plot(double left, double width, double first, double last) {
  TimelineGeometry g;
  g.left = left;
  g.top = 22;
  g.width = width;
  g.height = 174;
  g.view = {first, last};
  return g;
}

// The small removal the GUI tests use: LN_mlp layers 0 and 1 at 10 and 20, LN_qk layers 0 and 1 at 30 and
// 32, and the end of the position-0 treatment at 36; 40 steps in all.
nf::Schedule smallSchedule() {
  nf::Schedule s;
  s.events = {{1, 10, EventAction::MakeFake, SiteKind::Mlp, 0},
              {2, 20, EventAction::MakeFake, SiteKind::Mlp, 1},
              {3, 30, EventAction::MakeFake, SiteKind::Qk, 0},
              {4, 32, EventAction::MakeFake, SiteKind::Qk, 1},
              {5, 36, EventAction::EndPos0Treatment, SiteKind::Mlp, -1}};
  return s;
}

}  // namespace

TEST_CASE(steps_are_drawn_at_the_pixels_worked_out_by_hand) {
  struct Row {
    double left, width, first, last;
    double step, x;
  };
  const Row rows[] = {
      {60, 800, 0, 40, 0, 60},  // 20 px per step
      {60, 800, 0, 40, 10, 260},         {60, 800, 0, 40, 40, 860},
      {60, 800, -2.5, 37.5, 0, 110},  // the view starts before step 0
      {0, 400, -10, 90, -10, 0},      // 4 px per step
      {0, 400, -10, 90, 0, 40},          {0, 400, -10, 90, 90, 400},
      {100, 300, 1000, 1600, 1300, 250},  // 2 steps per px
      {100, 300, 1000, 1600, 1600, 400},
  };
  for (const Row& r : rows) {
    const TimelineGeometry g = plot(r.left, r.width, r.first, r.last);
    REQUIRE_MSG(near(g.xOf(r.step), r.x), "step " << r.step << " at x " << g.xOf(r.step) << ", not " << r.x);
    REQUIRE_EQ(g.markerX(r.step), static_cast<int>(r.x));
    REQUIRE_MSG(near(g.stepOf(r.x), r.step), "x " << r.x << " → step " << g.stepOf(r.x));
  }
}

TEST_CASE(every_whole_step_drawn_is_the_step_a_click_on_its_marker_gives) {
  // Where a pixel holds at most one step, the marker of every step in view maps back to that step.
  struct Row {
    double left, width, first, last;
  };
  const Row rows[] = {
      {60, 826, 0, 40}, {60, 826, -1, 41}, {35, 624, -6, 306}, {0, 1000, 100, 1100}, {80, 512, 17.25, 81.75}};
  for (const Row& r : rows) {
    const TimelineGeometry g = plot(r.left, r.width, r.first, r.last);
    for (int64_t s = static_cast<int64_t>(std::ceil(r.first)); s <= r.last; ++s)
      REQUIRE_MSG(g.stepAt(g.markerX(static_cast<double>(s))) == s,
                  "step " << s << " drawn at " << g.markerX(static_cast<double>(s)) << " in [" << r.first
                          << ", " << r.last << "] over " << r.width << " px");
  }
  // With several steps per pixel a marker is within half a pixel's steps of its own.
  const TimelineGeometry dense = plot(0, 100, 0, 1000);  // 10 steps per px
  for (int64_t s = 0; s <= 1000; s += 7)
    REQUIRE(std::llabs(dense.stepAt(dense.markerX(static_cast<double>(s))) - s) <= 5);
}

TEST_CASE(clicks_snap_to_the_nearest_whole_step) {
  // View [0, 40] over 800 px from x = 60: step 10 is at x = 260, and x in [250, 270) snaps to it.
  const TimelineGeometry g = plot(60, 800, 0, 40);
  const std::pair<double, int64_t> table[] = {{250, 10},  {255, 10}, {260, 10}, {269.9, 10}, {270, 11},
                                              {249.9, 9}, {60, 0},   {69.9, 0}, {860, 40},   {0, -3}};
  for (const auto& [x, step] : table)
    REQUIRE_MSG(g.stepAt(x) == step, "x " << x << " → " << g.stepAt(x) << ", expected " << step);
}

TEST_CASE(the_plot_area_leaves_room_for_names_axis_and_margins) {
  // A 900×200 widget whose row names take 60 px: 14 px right margin, 22 px axis above, 4 px below.
  const TimelineGeometry g = TimelineGeometry::forWidget(900, 200, 60, {0, 40});
  REQUIRE_EQ(g.left, 60.0);
  REQUIRE_EQ(g.top, 22.0);
  REQUIRE_EQ(g.width, 826.0);
  REQUIRE_EQ(g.height, 174.0);
  REQUIRE_EQ(g.bottom(), 196.0);
  // A widget too small for that still gets a 10×10 plot.
  const TimelineGeometry tiny = TimelineGeometry::forWidget(50, 20, 60, {0, 40});
  REQUIRE_EQ(tiny.width, 10.0);
  REQUIRE_EQ(tiny.height, 10.0);
}

TEST_CASE(rows_are_hit_where_they_are_drawn) {
  // Plot rows from y = 22 to 196, 34.8 px each (bounds 22, 56.8, 91.6, 126.4, 161.2, 196): middles at
  // 39.4, 74.2, 109, 143.8, 178.6, truncated.
  const TimelineGeometry g = TimelineGeometry::forWidget(900, 200, 60, {0, 40});
  const int middles[] = {39, 74, 109, 143, 178};
  for (int row = 0; row < TimelineGeometry::kRows; ++row) {
    REQUIRE_EQ(g.rowY(row), middles[row]);
    REQUIRE_EQ(g.rowAt(g.rowY(row)), row);
  }
  const std::pair<double, int> table[] = {{21.9, -1}, {22, 0},   {56, 0},   {57.5, 1}, {91, 1},
                                          {92, 2},    {126, 2},  {127, 3},  {161, 3},  {162, 4},
                                          {195.9, 4}, {196, -1}, {250, -1}, {0, -1}};
  for (const auto& [y, row] : table)
    REQUIRE_MSG(g.rowAt(y) == row, "y " << y << " → row " << g.rowAt(y) << ", expected " << row);
}

TEST_CASE(a_click_hits_the_nearest_marker_within_ten_pixels) {
  const std::vector<TimelineGeometry::Marker> markers = {{1, 100, 50}, {2, 110, 50}, {3, 300, 50}};
  struct Row {
    int x, y;
    int64_t hit;
  };
  const Row rows[] = {
      {100, 50, 1},  {103, 52, 1},  // nearest wins
      {105, 50, 2},                 // a tie goes to the marker drawn last (on top)
      {300, 60, 3},  {306, 58, 3},  // 10 px away: still a hit
      {300, 61, -1}, {311, 50, -1}, {200, 50, -1},
  };
  for (const Row& r : rows)
    REQUIRE_MSG(TimelineGeometry::markerAt(markers, r.x, r.y) == r.hit, "(" << r.x << ", " << r.y << ")");
  REQUIRE_EQ(TimelineGeometry::markerAt({}, 100, 50), int64_t{-1});
}

TEST_CASE(rows_hold_the_site_kinds_and_the_treatments) {
  struct Row {
    EventAction action;
    SiteKind site;
    int row;
  };
  const Row rows[] = {
      {EventAction::MakeFake, SiteKind::Mlp, 0},         {EventAction::MakeFake, SiteKind::Qk, 1},
      {EventAction::MakeFake, SiteKind::V, 2},           {EventAction::MakeFake, SiteKind::Final, 3},
      {EventAction::EndPos0Treatment, SiteKind::Mlp, 4}, {EventAction::EndEotTreatment, SiteKind::V, 4}};
  for (const Row& r : rows) {
    const ScheduleEvent e{7, 12, r.action, r.site, 0};
    REQUIRE_EQ(TimelineGeometry::rowOf(e), r.row);
    // Adding in a site row makes that row's kind fake.
    if (r.action == EventAction::MakeFake) REQUIRE(TimelineGeometry::kindOfRow(r.row) == r.site);
  }
}

TEST_CASE(view_ranges_are_never_narrower_than_four_steps) {
  struct Row {
    double first, last, expectFirst, expectLast;
  };
  const Row rows[] = {{0, 40, 0, 40}, {0, 4, 0, 4}, {10, 12, 9, 13}, {10, 10, 8, 12}, {5, 3, 2, 6}};
  for (const Row& r : rows) {
    const TimelineRange v = TimelineRange::normalized(r.first, r.last);
    REQUIRE_MSG(v.first == r.expectFirst && v.last == r.expectLast,
                "[" << r.first << ", " << r.last << "] → [" << v.first << ", " << v.last << "]");
  }
  const TimelineRange view{0, 40};
  REQUIRE(view.same(TimelineRange{1e-12, 40 - 1e-12}));
  REQUIRE(!view.same(TimelineRange{0, 40.001}));
}

TEST_CASE(zoom_to_fit_shows_the_whole_budget_with_a_margin) {
  // 2 % of the budget on each side, at least one step.
  struct Row {
    int64_t maxSteps;
    double first, last;
  };
  const Row rows[] = {{40, -1, 41}, {300, -6, 306}, {1200, -24, 1224}, {1, -1.5, 2.5}};  // 1: widened to 4
  for (const Row& r : rows) {
    const TimelineRange v = TimelineRange::fit(r.maxSteps);
    REQUIRE_MSG(near(v.first, r.first) && near(v.last, r.last),
                r.maxSteps << " steps → [" << v.first << ", " << v.last << "]");
  }
}

TEST_CASE(the_automatic_view_follows_the_run_and_its_events_to_come) {
  // The steps trained or the last pending event's step + 1, whichever is later, and a quarter more (at
  // least 10 steps more, at most the budget), with 2 % of that as margin. The whole budget, as fit(), with
  // nothing trained or pending, the run finished, or either past a fifth of the budget.
  struct Row {
    int64_t maxSteps, stepsDone, lastPending;
    double first, last;
  };
  const Row rows[] = {
      {100000, 232, -1, -5.8, 295.8},   // 232 × 1.25 = 290, margin 5.8
      {100000, 20, -1, -1, 31},         // 20 + 10 steps, margin 1 step
      {500, 450, -1, -10, 510},         // past a fifth of the budget: all of it
      {100000, 9, 40, -1.025, 52.275},  // an event at 40: (40 + 1) × 1.25, margin 1.025
      {100000, 0, -1, -2000, 102000},   // nothing to follow yet
      {100000, 100000, -1, -2000, 102000},
      {500, 12, 190, -10, 510},  // the tiny preset: its schedule spans the run
      {500, 200, -1, -10, 510},  // and after its last event (LN_f at 190) the end stays in view
      {100000, 232, 30000, -2000, 102000}};
  for (const Row& r : rows) {
    const TimelineRange v = TimelineRange::automatic(r.maxSteps, r.stepsDone, r.lastPending);
    REQUIRE_MSG(near(v.first, r.first) && near(v.last, r.last),
                r.stepsDone << "/" << r.maxSteps << ", pending " << r.lastPending << " → [" << v.first << ", "
                            << v.last << "]");
  }
}

TEST_CASE(the_wheel_zooms_about_the_step_under_the_cursor) {
  // One notch away from the user: span × 0.85; towards: ÷ 0.85; two notches: × 0.85².
  struct Row {
    double anchor, angle, first, last;
  };
  const Row rows[] = {{25, 120, 25 - 25 * 0.85, 25 + 75 * 0.85},
                      {25, -120, 25 - 25 / 0.85, 25 + 75 / 0.85},
                      {25, 240, 25 - 25 * 0.7225, 25 + 75 * 0.7225},
                      {0, 120, 0, 85},
                      {100, 120, 15, 100}};
  const TimelineRange view{0, 100};
  for (const Row& r : rows) {
    const TimelineRange z = view.zoomedAbout(r.anchor, r.angle);
    REQUIRE_MSG(near(z.first, r.first) && near(z.last, r.last),
                "about " << r.anchor << " by " << r.angle << " → [" << z.first << ", " << z.last << "]");
  }
  // The step under the cursor stays under it, and a notch out undoes a notch in.
  TimelineGeometry g = plot(60, 826, 0, 40);
  const double x = 371.3, under = g.stepOf(x);
  g.view = g.view.zoomedAbout(under, 120);
  REQUIRE(near(g.stepOf(x), under));
  REQUIRE(near(g.view.span(), 34));
  g.view = g.view.zoomedAbout(under, -120);
  REQUIRE(near(g.view.first, 0) && near(g.view.last, 40));
}

TEST_CASE(dragging_the_background_pans_with_the_mouse) {
  // 800 px over 40 steps: 20 px per step. The span never changes.
  TimelineGeometry g = plot(60, 800, 0, 40);
  struct Row {
    double pressFirst, dx, first;
  };
  const Row rows[] = {{0, 100, -5}, {0, -200, 10}, {0, 0, 0}, {10, 30, 8.5}};
  for (const Row& r : rows) {
    const TimelineRange p = g.panned(r.pressFirst, r.dx);
    REQUIRE_MSG(near(p.first, r.first) && near(p.last, r.first + 40),
                "from " << r.pressFirst << " by " << r.dx << " px → [" << p.first << ", " << p.last << "]");
  }
  // During a drag the view moves from where it was at the press: the step grabbed stays under the mouse.
  const double pressX = 300, grabbed = g.stepOf(pressX);
  g.view = g.panned(0, 57);
  g.view = g.panned(0, 123);  // the second move is measured from the press, not from the first move
  REQUIRE(near(g.stepOf(pressX + 123), grabbed));
}

TEST_CASE(axis_ticks_fall_on_round_steps_about_90_px_apart) {
  struct Row {
    double width, first, last, tick;
    std::vector<double> ticks;
  };
  const Row rows[] = {
      {826, 0, 40, 5, {0, 5, 10, 15, 20, 25, 30, 35, 40}},   // 4.4 steps per 90 px → 5
      {826, -6, 306, 50, {0, 50, 100, 150, 200, 250, 300}},  // 34 → 50; none before step 0
      {826, 0, 4, 1, {0, 1, 2, 3, 4}},                       // never less than one step
      {300, 1000, 1600, 200, {1000, 1200, 1400, 1600}},      // 180 → 200
      {50, 0, 40, 50, {0}},                                  // narrower than 90 px: one tick per span
      {826, 12.5, 33, 5, {15, 20, 25, 30}},
  };
  for (const Row& r : rows) {
    const TimelineGeometry g = plot(60, r.width, r.first, r.last);
    REQUIRE_MSG(g.tickSpacing() == r.tick, "[" << r.first << ", " << r.last << "] over " << r.width
                                               << " px: tick " << g.tickSpacing() << ", expected " << r.tick);
    REQUIRE(g.ticks() == r.ticks);
  }
}

TEST_CASE(edits_are_clamped_between_the_playhead_and_the_last_step) {
  // A finished run (40 of 40 steps done) gives the playhead, where every edit is refused.
  const int64_t table[][4] = {// step, steps done, max steps, expected
                              {5, 10, 40, 10},  {20, 10, 40, 20}, {39, 10, 40, 39},
                              {45, 10, 40, 39}, {-3, 0, 40, 0},   {20, 40, 40, 40}};
  for (const auto& r : table) REQUIRE_EQ(TimelineDrag::clampToEditable(r[0], r[1], r[2]), r[3]);
}

TEST_CASE(a_drag_moves_the_selection_together_inside_the_editable_steps) {
  struct Row {
    const char* what;
    std::map<int64_t, int64_t> from;
    int64_t stepsDone, maxSteps, delta;
    std::map<int64_t, int64_t> to;
  };
  const Row rows[] = {
      {"forward", {{2, 20}}, 0, 40, 5, {{2, 25}}},
      {"back", {{2, 20}}, 0, 40, -7, {{2, 13}}},
      {"past max steps", {{2, 20}}, 0, 40, 100, {{2, 39}}},
      {"before step 0", {{2, 20}}, 0, 40, -100, {{2, 0}}},
      {"before the playhead", {{2, 20}}, 15, 40, -100, {{2, 15}}},
      {"onto the playhead exactly", {{2, 20}}, 15, 40, -5, {{2, 15}}},
      {"a pair keeps its spacing at max steps", {{3, 30}, {4, 32}}, 0, 40, 20, {{3, 37}, {4, 39}}},
      {"a pair keeps its spacing at the playhead", {{3, 30}, {4, 32}}, 15, 40, -20, {{3, 15}, {4, 17}}},
      {"a pair inside", {{3, 30}, {4, 32}}, 15, 40, -3, {{3, 27}, {4, 29}}},
      // The playhead passed the first of the pair mid-drag: the pair is pushed to it.
      {"playhead passed one", {{3, 30}, {4, 32}}, 31, 40, 0, {{3, 31}, {4, 33}}},
      // ... and when no shift keeps both inside, nothing moves (the engine refuses the drop).
      {"no room left", {{3, 30}, {4, 39}}, 31, 40, 5, {{3, 30}, {4, 39}}},
  };
  for (const Row& r : rows) {
    TimelineDrag drag;
    drag.kind = TimelineDrag::Kind::Events;
    drag.from = r.from;
    drag.moveBy(r.delta, r.stepsDone, r.maxSteps);
    REQUIRE_MSG(drag.to == r.to, r.what);
  }
}

TEST_CASE(a_gap_drag_spaces_the_group_from_its_first_event) {
  struct Row {
    const char* what;
    std::vector<int64_t> steps;  // the group's steps at the press, ids 1, 2, …
    int64_t delta;
    std::vector<int64_t> to;
    int64_t gapTo;
  };
  const Row rows[] = {
      {"wider", {10, 20}, 5, {10, 25}, 15},
      {"narrower", {10, 20}, -4, {10, 16}, 6},
      {"never negative: all at once", {10, 20}, -15, {10, 10}, 0},
      {"the last stays before max steps", {10, 20}, 100, {10, 39}, 29},
      {"three events", {10, 20, 30}, 3, {10, 23, 36}, 13},
      {"three events, clamped: (39 − 10) / 2 = 14", {10, 20, 30}, 10, {10, 24, 38}, 14},
      {"uneven spacing becomes even", {10, 12, 30}, 0, {10, 12, 14}, 2},
  };
  for (const Row& r : rows) {
    TimelineDrag drag;
    drag.kind = TimelineDrag::Kind::Gap;
    for (size_t i = 0; i < r.steps.size(); ++i) {
      drag.gapOrder.push_back(static_cast<int64_t>(i + 1));
      drag.from[static_cast<int64_t>(i + 1)] = r.steps[i];
    }
    drag.moveBy(r.delta, 0, 40);
    std::vector<int64_t> to;
    for (int64_t id : drag.gapOrder) to.push_back(drag.to.at(id));
    REQUIRE_MSG(to == r.to, r.what);
    REQUIRE_EQ(drag.gapFrom, r.steps[1] - r.steps[0]);
    REQUIRE_EQ(drag.gapTo, r.gapTo);
  }
}

TEST_CASE(shift_on_a_groups_first_event_changes_the_gap_elsewhere_it_moves) {
  const nf::Schedule s = smallSchedule();
  struct Row {
    const char* what;
    std::set<int64_t> selected;
    int64_t pressed;
    bool shift;
    int64_t stepsDone;
    TimelineDrag::Kind kind;
    std::map<int64_t, int64_t> from;
    std::vector<int64_t> gapOrder;
  };
  using K = TimelineDrag::Kind;
  const Row rows[] = {
      {"plain drag", {2}, 2, false, 0, K::Events, {{2, 20}}, {}},
      {"plain drag of a selection", {3, 4}, 3, false, 0, K::Events, {{3, 30}, {4, 32}}, {}},
      {"applied events in the selection stay", {1, 2}, 2, false, 15, K::Events, {{2, 20}}, {}},
      {"shift on the first of a row", {1}, 1, true, 0, K::Gap, {{1, 10}, {2, 20}}, {1, 2}},
      {"shift on the second of a row", {2}, 2, true, 0, K::Events, {{2, 20}}, {}},
      {"shift on a row left with one unapplied event", {2}, 2, true, 15, K::Events, {{2, 20}}, {}},
      {"shift on the first of a selection",
       {2, 3, 4},
       2,
       true,
       0,
       K::Gap,
       {{2, 20}, {3, 30}, {4, 32}},
       {2, 3, 4}},
      {"shift inside a selection", {2, 3}, 3, true, 0, K::Events, {{2, 20}, {3, 30}}, {}},
      {"shift on a lone treatment", {5}, 5, true, 0, K::Events, {{5, 36}}, {}},
  };
  for (const Row& r : rows) {
    TimelineDrag drag;
    drag.startEvents(s, r.selected, r.pressed, r.shift, r.stepsDone);
    REQUIRE_MSG(drag.kind == r.kind, r.what);
    REQUIRE_MSG(drag.from == r.from, r.what);
    REQUIRE_MSG(drag.gapOrder == r.gapOrder, r.what);
    REQUIRE_MSG(drag.to.empty() && drag.pressedId == r.pressed, r.what);
  }
}

TEST_CASE(the_gap_group_is_the_row_or_the_selection_by_step) {
  nf::Schedule s = smallSchedule();
  s.events.push_back({6, 38, EventAction::EndEotTreatment, SiteKind::V, -1});
  s.events.push_back({7, 5, EventAction::MakeFake, SiteKind::Final, -1});
  // The treatments share a row; rows are ordered by step, not by id or selection order.
  REQUIRE(TimelineDrag::gapGroup(s, {6}, 6, 0) == (std::vector<int64_t>{5, 6}));
  REQUIRE(TimelineDrag::gapGroup(s, {4, 2, 7}, 4, 0) == (std::vector<int64_t>{7, 2, 4}));
  // A one-event selection is not a group: the row is.
  REQUIRE(TimelineDrag::gapGroup(s, {3}, 3, 0) == (std::vector<int64_t>{3, 4}));
  // A selection not holding the pressed event does not count either.
  REQUIRE(TimelineDrag::gapGroup(s, {1, 2}, 3, 0) == (std::vector<int64_t>{3, 4}));
  // Applied events never join.
  REQUIRE(TimelineDrag::gapGroup(s, {1}, 2, 11) == (std::vector<int64_t>{2}));
}

TEST_CASE(a_drop_moves_only_the_events_that_changed_step) {
  const nf::Schedule s = smallSchedule();
  TimelineDrag drag;
  drag.startEvents(s, {3, 4}, 3, false, 0);
  REQUIRE(drag.moves(s).empty());  // pressed, not moved: no edit
  drag.moveBy(0, 0, 40);
  REQUIRE(drag.moves(s).empty());  // back where it started: no edit
  drag.moveBy(4, 0, 40);
  REQUIRE(drag.moves(s) == (std::vector<std::pair<int64_t, int64_t>>{{3, 34}, {4, 36}}));
  REQUIRE_EQ(drag.shownStep(*s.find(3)), int64_t{34});
  REQUIRE_EQ(drag.shownStep(*s.find(1)), int64_t{10});  // not dragged: where it is

  // A gap drag leaves its first event in place: only the others move.
  TimelineDrag gap;
  gap.startEvents(s, {1}, 1, true, 0);
  gap.moveBy(5, 0, 40);
  REQUIRE(gap.moves(s) == (std::vector<std::pair<int64_t, int64_t>>{{2, 25}}));
  // An event deleted meanwhile (by the engine, say) is not moved.
  nf::Schedule without = s;
  without.events.erase(without.events.begin() + 1);
  REQUIRE(gap.moves(without).empty());
}

TEST_CASE(applied_events_are_locked) {
  const ScheduleEvent e{1, 10, EventAction::MakeFake, SiteKind::Mlp, 0};
  REQUIRE(!TimelineDrag::locked(e, 0));
  REQUIRE(!TimelineDrag::locked(e, 10));  // applied at the start of step 10: not yet
  REQUIRE(TimelineDrag::locked(e, 11));
}

TEST_MAIN()

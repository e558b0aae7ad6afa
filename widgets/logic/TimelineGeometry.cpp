// The removal timeline's pixel ↔ step mapping, range rules and drag arithmetic (see TimelineGeometry.h).
#include "logic/TimelineGeometry.h"

#include <algorithm>
#include <cmath>

TimelineRange TimelineRange::normalized(double first, double last) {
  if (last - first < kMinSpan) {
    const double mid = (first + last) / 2;
    first = mid - kMinSpan / 2;
    last = mid + kMinSpan / 2;
  }
  return {first, last};
}

TimelineRange TimelineRange::fit(int64_t maxSteps) {
  const double pad = std::max(1.0, 0.02 * static_cast<double>(maxSteps));
  return normalized(-pad, static_cast<double>(maxSteps) + pad);
}

TimelineRange TimelineRange::automatic(int64_t maxSteps, int64_t stepsDone, int64_t lastPending) {
  const double shown = static_cast<double>(std::max(stepsDone, lastPending + 1));
  const double budget = static_cast<double>(maxSteps);
  if (shown <= 0 || stepsDone >= maxSteps || shown > 0.2 * budget) return fit(maxSteps);
  const double end = std::min(budget, std::max(1.25 * shown, shown + 10));
  const double pad = std::max(1.0, 0.02 * end);
  return normalized(-pad, end + pad);
}

bool TimelineRange::same(const TimelineRange& o) const {
  return std::abs(first - o.first) < 1e-9 && std::abs(last - o.last) < 1e-9;
}

TimelineRange TimelineRange::zoomedAbout(double anchor, double wheelAngle) const {
  const double factor = std::pow(0.85, wheelAngle / 120.0);
  return {anchor - (anchor - first) * factor, anchor + (last - anchor) * factor};
}

TimelineGeometry TimelineGeometry::forWidget(int widgetWidth, int widgetHeight, int leftMargin,
                                             TimelineRange view) {
  TimelineGeometry g;
  g.left = leftMargin;
  g.top = kAxisHeight;
  g.width = std::max(10, widgetWidth - leftMargin - kRightMargin);
  g.height = std::max(10, widgetHeight - kAxisHeight - kBottomMargin);
  g.view = view;
  return g;
}

double TimelineGeometry::xOf(double step) const {
  return left + (step - view.first) / (view.last - view.first) * width;
}

int TimelineGeometry::markerX(double step) const { return static_cast<int>(std::lround(xOf(step))); }

double TimelineGeometry::stepOf(double x) const {
  return view.first + (x - left) / width * (view.last - view.first);
}

int64_t TimelineGeometry::stepAt(double x) const { return std::llround(stepOf(x)); }

int TimelineGeometry::rowY(int row) const { return static_cast<int>(top + (row + 0.5) * height / kRows); }

int TimelineGeometry::rowAt(double y) const {
  if (y < top || y >= bottom()) return -1;
  return std::clamp(static_cast<int>((y - top) / height * kRows), 0, kRows - 1);
}

TimelineRange TimelineGeometry::panned(double pressFirst, double dx) const {
  const double stepsPerPixel = (view.last - view.first) / width;
  const double first = pressFirst - dx * stepsPerPixel;
  return {first, first + (view.last - view.first)};
}

double TimelineGeometry::tickSpacing() const {
  const double raw = view.span() / std::max(1.0, width / 90.0);
  const double magnitude = std::pow(10.0, std::floor(std::log10(std::max(raw, 1.0))));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) return m * magnitude;
  return magnitude;
}

std::vector<double> TimelineGeometry::ticks() const {
  const double tick = tickSpacing();
  std::vector<double> steps;
  for (double s = std::ceil(std::max(view.first, 0.0) / tick) * tick; s <= view.last; s += tick)
    steps.push_back(s);
  return steps;
}

int64_t TimelineGeometry::markerAt(const std::vector<Marker>& markers, int x, int y) {
  int64_t best = -1;
  double bestDistance = kMarkerRadius + 2;
  for (const Marker& m : markers) {
    const double d = std::hypot(m.x - x, m.y - y);
    if (d <= bestDistance) {
      best = m.id;
      bestDistance = d;
    }
  }
  return best;
}

int TimelineGeometry::rowOf(const nf::ScheduleEvent& e) {
  if (e.action != nf::EventAction::MakeFake) return 4;
  switch (e.site) {
    case nf::SiteKind::Mlp:
      return 0;
    case nf::SiteKind::Qk:
      return 1;
    case nf::SiteKind::V:
      return 2;
    case nf::SiteKind::Final:
      return 3;
  }
  return 4;
}

nf::SiteKind TimelineGeometry::kindOfRow(int row) {
  static const nf::SiteKind kinds[] = {nf::SiteKind::Mlp, nf::SiteKind::Qk, nf::SiteKind::V,
                                       nf::SiteKind::Final};
  return kinds[std::clamp(row, 0, 3)];
}

int64_t TimelineDrag::clampToEditable(int64_t step, int64_t stepsDone, int64_t maxSteps) {
  return std::max(stepsDone, std::min(step, maxSteps - 1));  // a finished run: stepsDone (never clamp's UB)
}

std::vector<int64_t> TimelineDrag::gapGroup(const nf::Schedule& schedule, const std::set<int64_t>& selected,
                                            int64_t pressedId, int64_t stepsDone) {
  std::vector<const nf::ScheduleEvent*> group;
  const nf::ScheduleEvent* pressed = schedule.find(pressedId);
  for (const auto& e : schedule.events) {
    if (locked(e, stepsDone)) continue;
    const bool member = selected.size() > 1 && selected.count(pressedId)
                            ? selected.count(e.id) > 0
                            : TimelineGeometry::rowOf(e) == TimelineGeometry::rowOf(*pressed);
    if (member) group.push_back(&e);
  }
  std::stable_sort(group.begin(), group.end(), [](auto* x, auto* y) { return x->step < y->step; });
  std::vector<int64_t> ids;
  for (auto* e : group) ids.push_back(e->id);
  return ids;
}

void TimelineDrag::startEvents(const nf::Schedule& schedule, const std::set<int64_t>& selected,
                               int64_t pressedId, bool shift, int64_t stepsDone) {
  this->pressedId = pressedId;
  std::vector<int64_t> moving;
  if (shift) {
    moving = gapGroup(schedule, selected, pressedId, stepsDone);
    // Shift on the group's first event changes the gap; elsewhere it is an ordinary drag.
    kind = moving.size() > 1 && moving.front() == pressedId ? Kind::Gap : Kind::Events;
  } else {
    kind = Kind::Events;
  }
  if (kind == Kind::Events) {
    moving.clear();
    for (int64_t s : selected)
      if (const nf::ScheduleEvent* ev = schedule.find(s); ev && !locked(*ev, stepsDone)) moving.push_back(s);
  }
  from.clear();
  to.clear();
  for (int64_t m : moving) from[m] = schedule.find(m)->step;
  gapOrder = kind == Kind::Gap ? moving : std::vector<int64_t>{};
}

void TimelineDrag::moveBy(int64_t delta, int64_t stepsDone, int64_t maxSteps) {
  const int64_t lowest = stepsDone, highest = maxSteps - 1;
  to.clear();
  if (kind == Kind::Events) {
    int64_t minFrom = highest, maxFrom = lowest;
    for (const auto& [id, step] : from) {
      minFrom = std::min(minFrom, step);
      maxFrom = std::max(maxFrom, step);
    }
    // (The playhead can pass the selection mid-drag: then nothing moves and the engine will refuse.)
    const int64_t lo = lowest - minFrom, hi = highest - maxFrom;
    const int64_t d = lo > hi ? 0 : std::clamp(delta, lo, hi);
    for (const auto& [id, step] : from) to[id] = step + d;
  } else if (kind == Kind::Gap) {
    // gapOrder was fixed at the press: the playhead may move meanwhile.
    const int64_t first = from[gapOrder.front()], second = from[gapOrder[1]];
    const int64_t n = static_cast<int64_t>(gapOrder.size());
    int64_t gap = std::max<int64_t>(0, (second - first) + delta);
    gap = std::min(gap, (highest - first) / std::max<int64_t>(1, n - 1));
    for (int64_t i = 0; i < n; ++i) to[gapOrder[i]] = first + i * gap;
    gapFrom = second - first;
    gapTo = gap;
  }
}

int64_t TimelineDrag::shownStep(const nf::ScheduleEvent& e) const {
  auto it = to.find(e.id);
  return it == to.end() ? e.step : it->second;
}

std::vector<std::pair<int64_t, int64_t>> TimelineDrag::moves(const nf::Schedule& schedule) const {
  std::vector<std::pair<int64_t, int64_t>> result;
  for (const auto& [id, step] : to) {
    const nf::ScheduleEvent* e = schedule.find(id);
    if (e && e->step != step) result.emplace_back(id, step);
  }
  return result;
}

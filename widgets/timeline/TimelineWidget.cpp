#include "timeline/TimelineWidget.h"

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QUndoStack>
#include <QWheelEvent>
#include <algorithm>
#include <map>
#include <optional>

#include "timeline/EditRefusalText.h"
#include "timeline/TimelineEditCommand.h"
#include "timeline/TimelineNames.h"

namespace {
constexpr int kAxisHeight = TimelineGeometry::kAxisHeight, kMarkerRadius = TimelineGeometry::kMarkerRadius;

}  // namespace

TimelineWidget::TimelineWidget(QWidget* parent)
    : QWidget(parent), m_undo(new QUndoStack(this)), m_reread(new QTimer(this)) {
  m_reread->setInterval(2000);  // a hand edit of the file shows (or its slip is said) within two seconds
  connect(m_reread, &QTimer::timeout, this, [this] {
    if (m_drag.kind == TimelineDrag::Kind::None) refresh();
  });
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
  retranslate();
}

void TimelineWidget::retranslate() {
  setWhatsThis(
      tr("Removal timeline: drag events to move them (Ctrl-click selects several), Shift-drag the "
         "first event of a group to change its gap, double-click to add, Delete to remove, wheel "
         "to zoom, drag the background to pan (Zoom to fit, in the right-click menu, shows the pending "
         "events, or follows a run that has none, again). Applied events are locked."));
  update();
}

void TimelineWidget::setEditor(std::shared_ptr<ScheduleEditor> editor) {
  m_editor = std::move(editor);
  m_undo->clear();
  m_aliases.clear();
  m_selected.clear();
  m_drag.kind = TimelineDrag::Kind::None;
  if (m_editor && m_editor->rereadsFile())
    m_reread->start();
  else
    m_reread->stop();
  refresh();
  zoomToFit();
}

void TimelineWidget::refresh() {
  if (m_editor)
    for (const auto& [from, to] : m_editor->takeRenamedIds()) {  // undo commands and the selection follow
      m_aliases[from] = to;
      if (m_selected.erase(from)) m_selected.insert(to);
    }
  // With no editor (connecting), nothing of the schedule shown before stays: nor its steps or layers.
  m_schedule = m_editor ? m_editor->schedule() : nf::Schedule{};
  m_stepsDone = m_editor ? m_editor->stepsDone() : 0;
  m_maxSteps = m_editor ? std::max<int64_t>(1, m_editor->maxSteps()) : 1;
  m_layers = m_editor ? m_editor->layers() : 0;
  m_tentative = m_editor && m_editor->tentative();
  m_problem = m_editor ? QString::fromStdString(m_editor->problem()) : QString();
  for (auto it = m_selected.begin(); it != m_selected.end();)
    it = m_schedule.find(*it) ? std::next(it) : m_selected.erase(it);
  if (m_automatic) showAutomaticRange(false);
  update();
}

void TimelineWidget::setViewRange(double first, double last) {
  const TimelineRange range = TimelineRange::normalized(first, last);
  if (range.same(m_view)) return;  // a click that moved nothing keeps the automatic range
  m_automatic = false;
  showRange(range, false);
}

void TimelineWidget::showRange(const TimelineRange& range, bool announce) {
  if (range.same(m_view) && !announce) return;
  m_view = range;
  update();
  emitRange();
}

void TimelineWidget::emitRange() { Q_EMIT viewRangeChanged(m_view.first, m_view.last); }

void TimelineWidget::showAutomaticRange(bool announce) {
  int64_t lastPending = -1;
  for (const nf::ScheduleEvent& e : m_schedule.events)
    if (!locked(e)) lastPending = std::max(lastPending, e.step);
  showRange(TimelineRange::automatic(m_maxSteps, m_stepsDone, lastPending), announce);
}

void TimelineWidget::zoomToFit() {
  m_automatic = true;
  showAutomaticRange(true);  // the plots take it too, even when the timeline had it already
}

int TimelineWidget::leftMargin() const {
  int widest = 0;  // the row names, in the current language and font
  for (int row = 0; row < kRows; ++row)
    widest = std::max(widest, fontMetrics().horizontalAdvance(TimelineNames::rowName(row)));
  return widest + 14;
}

int TimelineWidget::minimumRowHeight() const {
  return std::max(TimelineGeometry::kMinRowHeight, fontMetrics().height() + 4);
}

QSize TimelineWidget::minimumSizeHint() const {
  return {300, TimelineGeometry::widgetHeightFor(minimumRowHeight())};
}

// Rows need no more than their minimum: the room left goes to the plots above.
QSize TimelineWidget::sizeHint() const { return {800, minimumSizeHint().height()}; }

TimelineGeometry TimelineWidget::geometry() const {
  return TimelineGeometry::forWidget(width(), height(), leftMargin(), m_view);
}

int64_t TimelineWidget::stepAt(double x) const { return geometry().stepAt(x); }
int TimelineWidget::rowY(int row) const { return geometry().rowY(row); }
int TimelineWidget::rowAt(double y) const { return geometry().rowAt(y); }

QPoint TimelineWidget::markerCenter(int64_t eventId) const {
  const nf::ScheduleEvent* e = m_schedule.find(eventId);
  if (!e) return {-1, -1};
  const TimelineGeometry g = geometry();
  return {g.markerX(static_cast<double>(m_drag.shownStep(*e))), g.rowY(TimelineGeometry::rowOf(*e))};
}

int64_t TimelineWidget::eventAt(const QPoint& pos) const {
  const TimelineGeometry g = geometry();
  std::vector<TimelineGeometry::Marker> markers;
  for (const auto& e : m_schedule.events)
    markers.push_back(
        {e.id, g.markerX(static_cast<double>(m_drag.shownStep(e))), g.rowY(TimelineGeometry::rowOf(e))});
  return TimelineGeometry::markerAt(markers, pos.x(), pos.y());
}

void TimelineWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  const QPalette& pal = palette();
  p.fillRect(rect(), pal.window());
  const TimelineGeometry g = geometry();
  const QRectF a(g.left, g.top, g.width, g.height);
  p.fillRect(a, pal.base());

  // Rows and their names.
  for (int row = 0; row < kRows; ++row) {
    const int y = g.rowY(row);
    p.setPen(QPen(pal.mid().color(), 1, Qt::DotLine));
    p.drawLine(QPointF(a.left(), y), QPointF(a.right(), y));
    p.setPen(TimelineNames::rowColor(row));
    p.drawText(QRectF(4, y - 10, a.left() - 8, 20), Qt::AlignRight | Qt::AlignVCenter,
               TimelineNames::rowName(row));
  }

  // Step axis: about one tick per 90 px at a round spacing.
  p.setPen(pal.text().color());
  for (double s : g.ticks()) {
    const double x = g.xOf(s);
    p.setPen(QPen(pal.mid().color(), 1));
    p.drawLine(QPointF(x, a.top()), QPointF(x, a.top() + 4));
    p.setPen(pal.text().color());
    p.drawText(QRectF(x - 40, 2, 80, kAxisHeight - 4), Qt::AlignCenter, QString::number(s, 'f', 0));
  }
  // The step budget's end, and the trained part shaded.
  p.setClipRect(a);
  p.fillRect(QRectF(QPointF(g.xOf(0), a.top()), QPointF(g.xOf(static_cast<double>(m_stepsDone)), a.bottom())),
             QColor(128, 128, 128, 40));
  p.setPen(QPen(pal.text().color(), 1, Qt::DashLine));
  p.drawLine(QPointF(g.xOf(static_cast<double>(m_maxSteps)), a.top()),
             QPointF(g.xOf(static_cast<double>(m_maxSteps)), a.bottom()));

  // Events.
  QFont small = font();
  small.setPointSizeF(std::max(6.0, small.pointSizeF() - 1.5));
  small.setBold(true);
  p.setFont(small);
  // Events of one row at one step (a group the autopilot fired together) share one marker, widened to
  // hold their layers ("0·1·2"): drawn one over the other they would hide all but the last.
  std::map<std::pair<int, int64_t>, std::vector<const nf::ScheduleEvent*>> markers;
  for (const auto& e : m_schedule.events)
    markers[{TimelineGeometry::rowOf(e), m_drag.shownStep(e)}].push_back(&e);
  for (auto& [at, events] : markers)
    std::sort(events.begin(), events.end(), [](auto* a, auto* b) { return a->layer < b->layer; });
  // A marker's text (its events' layers, in order) and half its width.
  auto labelOf = [](const std::vector<const nf::ScheduleEvent*>& events) {
    QStringList labels;
    for (const nf::ScheduleEvent* e : events) labels << TimelineNames::layerLabel(*e);
    return labels.join(QStringLiteral("·"));
  };
  auto halfWidthOf = [&p](const QString& label) {
    return std::max<double>(kMarkerRadius, p.fontMetrics().horizontalAdvance(label) / 2.0 + 3);
  };
  for (auto it = markers.begin(); it != markers.end(); ++it) {
    const auto& [at, events] = *it;
    const QPoint c(g.markerX(static_cast<double>(at.second)), g.rowY(at.first));
    bool isLocked = true, selected = false;
    for (const nf::ScheduleEvent* e : events) {
      isLocked = isLocked && locked(*e);
      selected = selected || m_selected.count(e->id) > 0;
    }
    const QString label = labelOf(events);
    QColor fill = isLocked ? QColor(150, 150, 150) : TimelineNames::rowColor(at.first);
    const QColor outline = fill.darker(150);
    // A pending event the autopilot will time: a paler marker with a dashed rim, where it expects it now.
    if (m_tentative && !isLocked) fill.setAlpha(110);
    p.setPen(QPen(selected ? pal.highlight().color() : outline, selected ? 3 : 1,
                  m_tentative && !isLocked ? Qt::DashLine : Qt::SolidLine));
    p.setBrush(fill);
    const double halfWidth = halfWidthOf(label);
    const QRectF box(c.x() - halfWidth, c.y() - kMarkerRadius, 2 * halfWidth, 2 * kMarkerRadius);
    if (isLocked)
      p.drawRect(box.adjusted(1, 1, -1, -1));
    else if (events.size() > 1)
      p.drawRoundedRect(box, kMarkerRadius, kMarkerRadius);
    else
      p.drawEllipse(QPointF(c), kMarkerRadius, kMarkerRadius);
    // Markers closer than their text (a long run seen whole) overlap: a label the next marker of its row
    // would cut is left out, so the row reads as a band ending in its last label, not as digits in pieces.
    // Markers that only touch keep theirs.
    const auto next = std::next(it);
    if (next == markers.end() || next->first.first != at.first ||
        g.markerX(static_cast<double>(next->first.second)) - halfWidthOf(labelOf(next->second)) >=
            c.x() + p.fontMetrics().horizontalAdvance(label) / 2.0) {
      p.setPen(Qt::white);
      p.drawText(box, Qt::AlignCenter, label);
    }
  }
  // Playhead.
  const double x = g.xOf(static_cast<double>(m_stepsDone));
  p.setPen(QPen(QColor(220, 30, 30), 2));
  p.drawLine(QPointF(x, a.top()), QPointF(x, a.bottom()));
  p.setClipping(false);
  p.setPen(pal.mid().color());
  p.setBrush(Qt::NoBrush);
  p.drawRect(a);
  if (!m_editor) {
    p.setPen(pal.text().color());
    p.drawText(a, Qt::AlignCenter, tr("No schedule: open a model and choose a removal preset."));
  } else if (!m_problem.isEmpty()) {
    p.setPen(QColor(200, 30, 30));
    p.drawText(a.adjusted(6, 2, -6, -2), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
               tr("The schedule shown may be out of date: %1").arg(m_problem));
  }
}

void TimelineWidget::mousePressEvent(QMouseEvent* event) {
  setFocus();
  m_drag.pressX = event->pos().x();
  m_drag.pressViewFirst = m_view.first;
  m_drag.from.clear();
  m_drag.to.clear();
  if (event->button() != Qt::LeftButton || !m_editor) return;
  const int64_t id = eventAt(event->pos());
  m_drag.pressedId = id;
  if (id < 0) {
    if (!(event->modifiers() & Qt::ControlModifier)) m_selected.clear();
    m_drag.kind = TimelineDrag::Kind::Pan;
    update();
    return;
  }
  const nf::ScheduleEvent* e = m_schedule.find(id);
  if (event->modifiers() & Qt::ControlModifier) {
    if (!m_selected.erase(id)) m_selected.insert(id);
    m_drag.kind = TimelineDrag::Kind::None;
    update();
    return;
  }
  if (!m_selected.count(id)) m_selected = {id};
  if (locked(*e)) {
    refuse(tr("%1 was applied at step %2 and cannot move.")
               .arg(QString::fromStdString(nf::describe(*e)))
               .arg(e->step));
    m_drag.kind = TimelineDrag::Kind::None;
    update();
    return;
  }
  m_drag.startEvents(m_schedule, m_selected, id, event->modifiers().testFlag(Qt::ShiftModifier), m_stepsDone);
  update();
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* event) {
  if (m_drag.kind == TimelineDrag::Kind::Pan) {
    const TimelineRange range = geometry().panned(m_drag.pressViewFirst, event->pos().x() - m_drag.pressX);
    setViewRange(range.first, range.last);
    return;
  }
  if (!m_drag.movesEvents()) return;
  const TimelineGeometry g = geometry();
  m_drag.moveBy(g.stepAt(event->pos().x()) - g.stepAt(m_drag.pressX), m_stepsDone, m_maxSteps);
  QString tip;
  if (m_drag.kind == TimelineDrag::Kind::Events) {
    nf::ScheduleEvent moved = *m_schedule.find(m_drag.pressedId);
    const int64_t was = moved.step;
    moved.step = m_drag.to[m_drag.pressedId];
    tip = tr("%1 (was step %2)").arg(TimelineNames::happeningOf(moved)).arg(was);
    if (m_drag.from.size() > 1) tip += tr(" (+%n more)", "", static_cast<int>(m_drag.from.size() - 1));
  } else {
    tip = tr("gap %1 → %2 steps").arg(m_drag.gapFrom).arg(m_drag.gapTo);
  }
  QToolTip::showText(mapToGlobal(event->pos()), tip, this);
  update();
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent* event) {
  const TimelineDrag::Kind drag = m_drag.kind;
  if (m_drag.movesEvents()) mouseMoveEvent(event);  // the drop is where the button is released
  m_drag.kind = TimelineDrag::Kind::None;
  if (drag == TimelineDrag::Kind::Pan || drag == TimelineDrag::Kind::None) return;
  const std::vector<std::pair<int64_t, int64_t>> moves = m_drag.moves(m_schedule);
  std::vector<nf::ScheduleEvent> before, after;
  for (const auto& [id, to] : moves) {
    const nf::ScheduleEvent* e = m_schedule.find(id);
    before.push_back(*e);
    nf::ScheduleEvent moved = *e;
    moved.step = to;
    after.push_back(moved);
  }
  m_drag.to.clear();
  m_drag.from.clear();
  if (moves.empty()) {
    update();
    return;
  }
  const nf::EditResult r = m_editor->moveEvents(moves);
  if (!r.accepted) {
    refuse(EditRefusalText::of(r));  // snaps back: the schedule is re-read as it is
  } else {
    const bool one = moves.size() == 1;
    const int n = static_cast<int>(moves.size());
    const QString text =
        one ? tr("Move %1 to step %2").arg(TimelineNames::subjectOf(before.front())).arg(after.front().step)
            : tr("Move %n events", "", n);
    m_undo->push(new TimelineEditCommand(this, TimelineEditCommand::Kind::Move, before, after, text));
    Q_EMIT scheduleEdited();
    Q_EMIT editAccepted(
        one ? tr("Moved %1 to step %2").arg(TimelineNames::subjectOf(before.front())).arg(after.front().step)
            : tr("Moved %n event(s): %1", "", n).arg(TimelineNames::subjectsOf(before)));
  }
  refresh();
}

bool TimelineWidget::addEvent(const nf::ScheduleEvent& event) {
  if (!m_editor) return false;
  const nf::EditResult r = m_editor->add(event);
  if (!r.accepted) {
    refuse(EditRefusalText::of(r));
    refresh();
    return false;
  }
  nf::ScheduleEvent added = event;
  added.id = r.eventId;
  m_undo->push(new TimelineEditCommand(this, TimelineEditCommand::Kind::Add, {}, {added},
                                       tr("Add %1").arg(QString::fromStdString(nf::describe(added)))));
  refresh();
  m_selected = {added.id};
  Q_EMIT scheduleEdited();
  Q_EMIT editAccepted(tr("Added: %1").arg(TimelineNames::happeningOf(added)));
  return true;
}

bool TimelineWidget::deleteSelected() {
  if (!m_editor || m_selected.empty()) return false;
  std::vector<nf::ScheduleEvent> removed;
  for (int64_t id : m_selected) {
    const nf::ScheduleEvent* e = m_schedule.find(id);
    if (!e || (locked(*e) && m_selected.size() > 1)) continue;  // a selection's applied events stay
    const nf::EditResult r = m_editor->remove(id);
    if (!r.accepted) {  // put back what this delete took away, then say why
      for (auto it = removed.rbegin(); it != removed.rend(); ++it) {
        nf::ScheduleEvent back = *it;
        const nf::EditResult again = m_editor->add(back);
        if (again.accepted && again.eventId != back.id) m_aliases[back.id] = again.eventId;
      }
      refuse(EditRefusalText::of(r));
      refresh();
      return false;
    }
    removed.push_back(*e);
  }
  if (removed.empty()) {
    refuse(tr("Applied already: an event that fired stays in the run"));
    return false;
  }
  m_undo->push(new TimelineEditCommand(this, TimelineEditCommand::Kind::Delete, removed, {},
                                       tr("Delete %n events", "", static_cast<int>(removed.size()))));
  m_selected.clear();
  refresh();
  Q_EMIT scheduleEdited();
  Q_EMIT editAccepted(tr("Deleted %n event(s): %1", "", static_cast<int>(removed.size()))
                          .arg(TimelineNames::subjectsOf(removed)));
  return true;
}

void TimelineWidget::refuse(const QString& why) {
  m_lastMessage = why;
  QToolTip::showText(QCursor::pos(), why, this);
  Q_EMIT editRefused(why);
}

void TimelineWidget::populateAddMenu(QMenu* menu, int row, int64_t step) {
  if (!m_editor || row < 0) return;
  step = TimelineDrag::clampToEditable(step, m_stepsDone, m_maxSteps);
  // Each candidate is asked of the editor first (the engine's rules), so no entry leads to a refusal.
  bool offered = false;
  std::optional<nf::EditResult> refused;  // the first candidate's refusal: why nothing may be offered
  auto offer = [&](QMenu* into, const QString& label, nf::ScheduleEvent e) {
    e.step = step;
    const nf::EditResult r = m_editor->check(e);
    if (!r.accepted) {
      if (!refused) refused = r;
      return;
    }
    into->addAction(label, this, [this, e] { addEvent(e); });
    offered = true;
  };
  auto submenu = [&](const QString& title,
                     const std::vector<std::pair<QString, nf::ScheduleEvent>>& entries) {
    auto* sub = new QMenu(title, menu);
    for (const auto& [label, e] : entries) offer(sub, label, e);
    if (sub->isEmpty())
      delete sub;
    else
      menu->addMenu(sub);
  };
  if (row == 4) {
    std::vector<std::pair<QString, nf::ScheduleEvent>> pos0;
    for (int kindRow = 0; kindRow < 4; ++kindRow)
      pos0.push_back(
          {TimelineNames::rowName(kindRow),
           {0, step, nf::EventAction::EndPos0Treatment, TimelineGeometry::kindOfRow(kindRow), -1}});
    submenu(tr("End position-0 treatment at step %1").arg(step), pos0);
    offer(menu, tr("End end-of-text treatment at step %1").arg(step),
          {0, step, nf::EventAction::EndEotTreatment, nf::SiteKind::V, -1});
  } else if (const nf::SiteKind kind = TimelineGeometry::kindOfRow(row); kind == nf::SiteKind::Final) {
    offer(menu, tr("Make LN_f fake at step %1").arg(step), {0, step, nf::EventAction::MakeFake, kind, -1});
  } else {
    std::vector<std::pair<QString, nf::ScheduleEvent>> layers;
    for (int layer = 0; layer < m_layers; ++layer)
      layers.push_back({tr("layer %1").arg(layer), {0, step, nf::EventAction::MakeFake, kind, layer}});
    layers.push_back({tr("all layers"), {0, step, nf::EventAction::MakeFake, kind, -1}});
    submenu(tr("Make %1 fake at step %2").arg(TimelineNames::rowName(row)).arg(step), layers);
  }
  if (offered || !refused) return;
  const QString why = EditRefusalText::of(*refused);  // one line per problem: the first says it
  QAction* nothing = menu->addAction(tr("Nothing to add here: %1").arg(why.section(QLatin1Char('\n'), 0, 0)));
  nothing->setEnabled(false);
  nothing->setToolTip(why);
  menu->setToolTipsVisible(true);
}

void TimelineWidget::mouseDoubleClickEvent(QMouseEvent* event) {
  if (eventAt(event->pos()) >= 0 || !m_editor) return;
  auto* menu = new QMenu(this);
  menu->setAttribute(Qt::WA_DeleteOnClose);
  populateAddMenu(menu, rowAt(event->pos().y()), stepAt(event->pos().x()));
  if (menu->isEmpty())
    delete menu;
  else
    menu->popup(event->globalPosition().toPoint());
}

void TimelineWidget::contextMenuEvent(QContextMenuEvent* event) {
  auto* menu = new QMenu(this);
  menu->setAttribute(Qt::WA_DeleteOnClose);
  const int64_t id = eventAt(event->pos());
  if (id >= 0 && !m_selected.count(id)) m_selected = {id};
  // Only events not applied yet can go: an applied one is offered nothing it would refuse.
  int deletable = 0;
  for (int64_t selected : m_selected)
    if (const nf::ScheduleEvent* e = m_schedule.find(selected); e && !locked(*e)) ++deletable;
  if (deletable > 0)
    menu->addAction(tr("Delete %n event(s)", "", deletable), this, [this] { deleteSelected(); });
  else if (!m_selected.empty())
    menu->addAction(tr("Applied already: an event that fired stays in the run"))->setEnabled(false);
  populateAddMenu(menu, rowAt(event->pos().y()), stepAt(event->pos().x()));
  menu->addSeparator();
  menu->addAction(tr("Zoom to fit"), this, &TimelineWidget::zoomToFit);
  menu->popup(event->globalPos());
}

void TimelineWidget::wheelEvent(QWheelEvent* event) {
  const TimelineGeometry g = geometry();
  const TimelineRange zoomed = m_view.zoomedAbout(g.stepOf(event->position().x()), event->angleDelta().y());
  setViewRange(zoomed.first, zoomed.last);
  event->accept();
}

void TimelineWidget::keyPressEvent(QKeyEvent* event) {
  if (event->matches(QKeySequence::Delete) || event->key() == Qt::Key_Backspace) {
    deleteSelected();
    return;
  }
  if (event->matches(QKeySequence::SelectAll)) {
    m_selected.clear();
    for (const auto& e : m_schedule.events)
      if (!locked(e)) m_selected.insert(e.id);
    update();
    return;
  }
  QWidget::keyPressEvent(event);
}

bool TimelineWidget::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip && m_drag.kind == TimelineDrag::Kind::None) {
    auto* help = static_cast<QHelpEvent*>(event);
    const int64_t id = eventAt(help->pos());
    if (id >= 0) {
      const nf::ScheduleEvent* e = m_schedule.find(id);
      QToolTip::showText(
          help->globalPos(),
          TimelineNames::happeningOf(*e) + (locked(*e)    ? tr(" (applied)")
                                            : m_tentative ? tr(" (tentative: the autopilot decides when)")
                                                          : QString()),
          this);
    } else {
      QToolTip::hideText();
    }
    return true;
  }
  return QWidget::event(event);
}

void TimelineWidget::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  if (event->type() == QEvent::FontChange) updateGeometry();  // the rows' height follows the font
  QWidget::changeEvent(event);
}

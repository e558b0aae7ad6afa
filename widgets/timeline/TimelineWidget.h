// The removal timeline: x = optimizer step, one row per site kind (LN_mlp, LN_qk, LN_v, LN_f) and one for
// the special treatments' switch-offs; each event a marker labelled with its layer, the playhead at the
// steps done, applied events drawn locked. Every edit goes through a ScheduleEditor (the engine decides);
// a refused edit snaps back and says why. Mouse: drag events (Ctrl-click to select several, they move
// together), Shift-drag the first event of a group to change the group's gap, double-click or right-click
// to add, Delete to remove, wheel to zoom, drag the background to pan. One drag = one undo command.
#pragma once
#include <QPointer>
#include <QTimer>
#include <QWidget>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "logic/ScheduleEditor.h"
#include "logic/TimelineGeometry.h"

class QUndoStack;
class QMenu;

class TimelineWidget : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineWidget(QWidget* parent = nullptr);

  // The schedule shown and edited (not owned; nullptr: nothing). Clears the undo history.
  void setEditor(std::shared_ptr<ScheduleEditor> editor);
  ScheduleEditor* editor() const { return m_editor.get(); }
  QUndoStack* undoStack() const { return m_undo; }

  // Re-reads the schedule and the steps done (call when training has moved on).
  void refresh();

  // Visible step range; the loss plot and the timeline keep theirs equal through these. A range set here
  // (the user zoomed or panned, here or in a plot) stays; zoomToFit() goes back to the automatic one
  // (TimelineRange::automatic), which follows the run as it trains.
  void setViewRange(double first, double last);
  void zoomToFit();
  bool viewIsAutomatic() const { return m_automatic; }

  // Geometry, for tests and tooltips: where an event's marker is drawn, and the step under an x position.
  QPoint markerCenter(int64_t eventId) const;
  int64_t stepAt(double x) const;
  int rowAt(double y) const;  // -1 outside the rows
  int rowY(int row) const;
  std::set<int64_t> selection() const { return m_selected; }

  // Adds an event through the editor (as one undo command); false and a message when refused.
  bool addEvent(const nf::ScheduleEvent& event);
  bool deleteSelected();

  // The add menu of the double-click and the context menu at a row and step: only the events the editor
  // would accept there; when none, one disabled entry that says why. Public for tests.
  void populateAddMenu(QMenu* menu, int row, int64_t step);

  QString lastMessage() const { return m_lastMessage; }
  bool showsTentative() const { return m_tentative; }  // pending events drawn as the autopilot's expectation
  QString problemShown() const { return m_problem; }   // why the schedule shown may be out of date
  int64_t playheadStep() const { return m_stepsDone; }

  static constexpr int kRows = TimelineGeometry::kRows;  // LN_mlp, LN_qk, LN_v, LN_f, treatments

  // Both tall enough for the step axis and every row: a dock holding the timeline keeps its rows.
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 Q_SIGNALS:
  void viewRangeChanged(double first, double last);
  void scheduleEdited();                   // an edit, undo or redo was accepted
  void editAccepted(const QString& what);  // the same, said in a sentence ("Moved LN_v.1 to step 240")
  void editRefused(const QString& why);    // shown in the status bar too

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;
  void mouseReleaseEvent(QMouseEvent*) override;
  void mouseDoubleClickEvent(QMouseEvent*) override;
  void contextMenuEvent(QContextMenuEvent*) override;
  void wheelEvent(QWheelEvent*) override;
  void keyPressEvent(QKeyEvent*) override;
  bool event(QEvent*) override;  // tooltips
  void changeEvent(QEvent*) override;

 private:
  friend class TimelineEditCommand;

  TimelineGeometry geometry() const;         // of the current size, font and view range
  int leftMargin() const;                    // room for the row names
  int minimumRowHeight() const;              // a marker's, or the row name's in the current font
  int64_t eventAt(const QPoint& pos) const;  // -1 when none
  bool locked(const nf::ScheduleEvent& e) const { return TimelineDrag::locked(e, m_stepsDone); }
  void refuse(const QString& why);
  void emitRange();
  void showRange(const TimelineRange& range, bool announce);  // `announce`: emit even when unchanged
  void showAutomaticRange(bool announce);
  void retranslate();

  std::shared_ptr<ScheduleEditor> m_editor;
  QUndoStack* m_undo;
  nf::Schedule m_schedule;
  int64_t m_stepsDone = 0, m_maxSteps = 1;
  bool m_tentative = false;  // the editor's pending events are the autopilot's expectation
  QString m_problem;         // why the schedule shown may be out of date (the editor's problem())
  QTimer* m_reread;          // refresh() now and then, for an editor whose schedule is a file (rereadsFile())
  int m_layers = 0;
  TimelineRange m_view;
  bool m_automatic = true;  // m_view is chosen for the user, until they zoom or pan
  std::set<int64_t> m_selected;
  QString m_lastMessage;

  TimelineDrag m_drag;                   // the drag in progress
  std::map<int64_t, int64_t> m_aliases;  // id of an event deleted and re-added by undo → its new id
};

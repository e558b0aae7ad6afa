// The removal timeline edits a running trainer's schedule through the engine's live-edit API: drags move
// future events, applied events stay, refused edits snap back with the reason, one drag is one undo step,
// events are added and deleted, Shift-drag changes a group's gap. The add menu offers only what the engine
// accepts, every accepted edit is confirmed in a sentence, and the widget asks for the height of its rows.
#include <QDockWidget>
#include <QMainWindow>
#include <QMenu>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>
#include <functional>

#include "io/atomic_file.h"
#include "logic/ScheduleEditor.h"
#include "timeline/TimelineWidget.h"
#include "timeline_input.h"
#include "widget_fixtures.h"

class TestTimeline : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  QString m_model, m_train;
  int m_runs = 0;
  std::shared_ptr<nf::Trainer> m_trainer;
  std::unique_ptr<TimelineWidget> m_timeline;

  int64_t engineStep(int64_t id) const {
    const nf::Schedule s = m_trainer->schedule();
    const nf::ScheduleEvent* e = s.find(id);
    return e ? e->step : -1;
  }
  // The step under an event's marker, as drawn.
  int64_t shownStep(int64_t id) const { return m_timeline->stepAt(m_timeline->markerCenter(id).x()); }
  int xOfStep(int64_t step) const { return fixtures::xOfStep(*m_timeline, step); }
  void drag(int64_t id, int64_t toStep, Qt::KeyboardModifiers modifiers = {}) {
    fixtures::dragEvent(*m_timeline, id, toStep, modifiers);
  }
  // The add menu at a row and step as the user sees it: a submenu's entries as "title › entry", a disabled
  // entry in brackets. `trigger`: the entry to click.
  QStringList addMenu(int row, int64_t step, const QString& trigger = {}) {
    QMenu menu;
    m_timeline->populateAddMenu(&menu, row, step);
    QStringList entries;
    QAction* chosen = nullptr;
    std::function<void(QMenu*, const QString&)> collect = [&](QMenu* m, const QString& prefix) {
      for (QAction* a : m->actions()) {
        if (a->menu()) {
          collect(a->menu(), prefix + a->text() + " › ");
        } else if (!a->isSeparator()) {
          entries << (a->isEnabled() ? prefix + a->text() : "[" + prefix + a->text() + "]");
          if (entries.back() == trigger) chosen = a;
        }
      }
    };
    collect(&menu, "");
    if (!trigger.isEmpty()) {
      if (!chosen) qWarning() << "no entry" << trigger << "in" << entries;
      if (chosen) chosen->trigger();
    }
    return entries;
  }

 private Q_SLOTS:
  void initTestCase() {
    m_model = fixtures::makeModel(m_dir.filePath("model"), 2);
    m_train = fixtures::writeRandomTokens(m_dir.filePath("train.bin"), 20000, 50, 1);
  }

  void init() {
    const QString run = m_dir.filePath(QString("run%1").arg(++m_runs));
    m_trainer = nf::Trainer::start(run.toStdString(), fixtures::smallRemoval(m_model, m_train));
    m_timeline = std::make_unique<TimelineWidget>();
    m_timeline->resize(900, 200);
    m_timeline->setEditor(std::make_shared<LiveSchedule>(m_trainer, 2));
    m_timeline->setViewRange(0, 40);
    m_timeline->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_timeline.get()));
  }

  void cleanup() {
    m_timeline.reset();
    m_trainer.reset();
  }

  void draggingAFutureEventMovesItInTheEngine() {
    drag(2, 25);
    QCOMPARE(engineStep(2), int64_t{25});
    QCOMPARE(shownStep(2), int64_t{25});
    QCOMPARE(engineStep(1), int64_t{10});  // the others stay
    // The run honours it: LN_mlp.1 turns fake at step 25, not 20.
    fixtures::trainUntil(*m_trainer, 26);
    QCOMPARE(m_trainer->stepsDone(), int64_t{26});
    m_timeline->refresh();
    QCOMPARE(m_timeline->playheadStep(), int64_t{26});
  }

  // A run with no event to come (a pretraining, or a removal done) is followed: the timeline and the plots
  // show the steps trained and a quarter more, not a sliver at the left of the budget; a zoom or pan of
  // the user's stays until "Zoom to fit". With events pending the whole budget shows, as before.
  void aRunWithoutPendingEventsIsFollowedUntilTheUserZooms() {
    QSignalSpy ranges(m_timeline.get(), &TimelineWidget::viewRangeChanged);
    m_timeline->zoomToFit();
    QCOMPARE(ranges.size(), 1);  // announced, for the plots
    QCOMPARE(ranges.last().at(0).toDouble(), -1.0);
    QCOMPARE(ranges.last().at(1).toDouble(), 41.0);  // 40 steps, 2 % margin of at least one step
    for (const nf::ScheduleEvent& e : m_trainer->schedule().events)
      QVERIFY(m_trainer->deleteEvent(e.id).accepted);
    fixtures::trainUntil(*m_trainer, 6);
    m_timeline->refresh();
    QVERIFY(m_timeline->viewIsAutomatic());
    QCOMPARE(ranges.last().at(1).toDouble(), 6.0 + 10 + 1);  // 6 steps + 10, 1 step margin
    m_timeline->setViewRange(0, 30);                         // the user's
    m_timeline->refresh();
    QCOMPARE(ranges.last().at(1).toDouble(), 30.0);
    QVERIFY(!m_timeline->viewIsAutomatic());
    m_timeline->zoomToFit();
    QCOMPARE(ranges.last().at(1).toDouble(), 17.0);
  }

  void theDropIsWhereTheButtonIsReleased() {
    // A release away from the last move event (a fast flick) lands where the button came up.
    const QPoint from = m_timeline->markerCenter(2);
    QTest::mousePress(m_timeline.get(), Qt::LeftButton, {}, from);
    QTest::mouseMove(m_timeline.get(), QPoint(xOfStep(30), from.y()));
    QTest::mouseRelease(m_timeline.get(), Qt::LeftButton, {}, QPoint(xOfStep(35), from.y()));
    QCOMPARE(engineStep(2), int64_t{35});
  }

  void appliedEventsDoNotMove() {
    fixtures::trainUntil(*m_trainer, 15);
    m_timeline->refresh();
    drag(1, 25);  // LN_mlp.0 was applied at step 10
    QCOMPARE(engineStep(1), int64_t{10});
    QCOMPARE(shownStep(1), int64_t{10});
    QVERIFY2(m_timeline->lastMessage().contains("applied"), qPrintable(m_timeline->lastMessage()));
    QCOMPARE(m_timeline->undoStack()->count(), 0);
  }

  void anEditTheEngineRefusesSnapsBack() {
    // The widget still shows step 0 when the drag starts; the run passes step 30 before the drop.
    const QPoint from = m_timeline->markerCenter(3);
    const QPoint to(xOfStep(36), from.y());
    QTest::mousePress(m_timeline.get(), Qt::LeftButton, {}, from);
    QTest::mouseMove(m_timeline.get(), to);
    fixtures::trainUntil(*m_trainer, 33);
    QTest::mouseRelease(m_timeline.get(), Qt::LeftButton, {}, to);
    QCOMPARE(engineStep(3), int64_t{30});
    QCOMPARE(shownStep(3), int64_t{30});
    QVERIFY(!m_timeline->lastMessage().isEmpty());
    QCOMPARE(m_timeline->undoStack()->count(), 0);
  }

  void undoAndRedoADrag() {
    drag(4, 37);
    QCOMPARE(engineStep(4), int64_t{37});
    QCOMPARE(m_timeline->undoStack()->count(), 1);
    m_timeline->undoStack()->undo();
    QCOMPARE(engineStep(4), int64_t{32});
    QCOMPARE(shownStep(4), int64_t{32});
    m_timeline->undoStack()->redo();
    QCOMPARE(engineStep(4), int64_t{37});
  }

  void selectedEventsMoveTogether() {
    QTest::mouseClick(m_timeline.get(), Qt::LeftButton, Qt::ControlModifier, m_timeline->markerCenter(3));
    QTest::mouseClick(m_timeline.get(), Qt::LeftButton, Qt::ControlModifier, m_timeline->markerCenter(4));
    QCOMPARE(m_timeline->selection(), (std::set<int64_t>{3, 4}));
    drag(3, 34);
    QCOMPARE(engineStep(3), int64_t{34});
    QCOMPARE(engineStep(4), int64_t{36});
    QCOMPARE(m_timeline->undoStack()->count(), 1);  // one drag, one command
    m_timeline->undoStack()->undo();
    QCOMPARE(engineStep(3), int64_t{30});
    QCOMPARE(engineStep(4), int64_t{32});
  }

  void shiftDragOfAGroupsFirstEventChangesTheGap() {
    // LN_mlp's group: 10, 20 (gap 10). Shift-drag the first by +5 steps: gap 15, the first stays.
    const QPoint from = m_timeline->markerCenter(1);
    const QPoint to(from.x() + (xOfStep(15) - xOfStep(10)), from.y());
    QTest::mousePress(m_timeline.get(), Qt::LeftButton, Qt::ShiftModifier, from);
    QTest::mouseMove(m_timeline.get(), to);
    QTest::mouseRelease(m_timeline.get(), Qt::LeftButton, Qt::ShiftModifier, to);
    QCOMPARE(engineStep(1), int64_t{10});
    QCOMPARE(engineStep(2), int64_t{25});
  }

  void addingAndDeletingEvents() {
    QVERIFY(m_timeline->addEvent({0, 38, nf::EventAction::MakeFake, nf::SiteKind::Final, -1}));
    int64_t added = -1;
    for (const auto& e : m_trainer->schedule().events)
      if (e.site == nf::SiteKind::Final) added = e.id;
    QVERIFY(added > 0);
    QCOMPARE(engineStep(added), int64_t{38});
    // Select it with a click, delete it with the Delete key.
    QTest::mouseClick(m_timeline.get(), Qt::LeftButton, {}, m_timeline->markerCenter(added));
    QTest::keyClick(m_timeline.get(), Qt::Key_Delete);
    QCOMPARE(engineStep(added), int64_t{-1});
    QCOMPARE(m_trainer->schedule().events.size(), size_t{4});
    // Undo brings it back (under a new id), redo deletes it again.
    m_timeline->undoStack()->undo();
    QCOMPARE(m_trainer->schedule().events.size(), size_t{5});
    m_timeline->undoStack()->redo();
    QCOMPARE(m_trainer->schedule().events.size(), size_t{4});
    // Making a site fake twice is refused by the engine and changes nothing.
    QVERIFY(!m_timeline->addEvent({0, 35, nf::EventAction::MakeFake, nf::SiteKind::Mlp, 0}));
    QCOMPARE(m_trainer->schedule().events.size(), size_t{4});
    QVERIFY(!m_timeline->lastMessage().isEmpty());
  }

  void theAddMenuOffersOnlyWhatTheEngineAccepts() {
    // LN_mlp: both layers are made fake already (steps 10, 20): nothing is offered, one entry says why.
    const QStringList mlp = addMenu(0, 35);
    QCOMPARE(mlp.size(), 1);
    QVERIFY2(mlp[0].startsWith("[") && mlp[0].contains("LN_mlp.0 is already made fake at step 10"),
             qPrintable(mlp[0]));
    // LN_v: nothing yet, so each layer and all layers; once LN_v.0 is, only layer 1, and not "all layers".
    QCOMPARE(addMenu(2, 35),
             (QStringList{"Make LN_v fake at step 35 › layer 0", "Make LN_v fake at step 35 › layer 1",
                          "Make LN_v fake at step 35 › all layers"}));
    addMenu(2, 35, "Make LN_v fake at step 35 › layer 0");  // every entry offered is accepted
    QCOMPARE(m_trainer->schedule().events.size(), size_t{5});
    QCOMPARE(addMenu(2, 36), QStringList{"Make LN_v fake at step 36 › layer 1"});
    // The run uses neither treatment: neither end is offered.
    const QStringList treatments = addMenu(4, 35);
    QCOMPARE(treatments.size(), 1);
    QVERIFY2(treatments[0].startsWith("[") && treatments[0].contains("does not use the position-0 treatment"),
             qPrintable(treatments[0]));
    // A step the run has started is clamped to the playhead's; one past the budget to the last step.
    fixtures::trainUntil(*m_trainer, 3);
    m_timeline->refresh();
    QCOMPARE(addMenu(3, 1), QStringList{"Make LN_f fake at step 3"});
    QCOMPARE(addMenu(3, 90), QStringList{"Make LN_f fake at step 39"});
    QCOMPARE(addMenu(-1, 20), QStringList{});  // outside the rows
  }

  void theAddMenuOffersTheEndsOfTreatmentsTheRunUses() {
    nf::RunConfig c = fixtures::smallRemoval(m_model, m_train);
    c.removal.pos0Treatment = c.removal.eotTreatment = true;
    m_trainer = nf::Trainer::start(m_dir.filePath("treatments").toStdString(), c);
    m_timeline->setEditor(std::make_shared<LiveSchedule>(m_trainer, 2));
    // LN_mlp and LN_qk are made fake by step 35, LN_v and LN_f never: only theirs can end.
    QCOMPARE(addMenu(4, 35), (QStringList{"End position-0 treatment at step 35 › LN_mlp",
                                          "End position-0 treatment at step 35 › LN_qk"}));
    QVERIFY(m_timeline->addEvent({0, 30, nf::EventAction::MakeFake, nf::SiteKind::V, -1}));
    QCOMPARE(addMenu(4, 35), (QStringList{"End position-0 treatment at step 35 › LN_mlp",
                                          "End position-0 treatment at step 35 › LN_qk",
                                          "End position-0 treatment at step 35 › LN_v",
                                          "End end-of-text treatment at step 35"}));
    addMenu(4, 35, "End end-of-text treatment at step 35");
    QCOMPARE(addMenu(4, 35).size(), 3);  // ended once, it is not offered again
  }

  void aFollowedRunsMenuOffersNothingAndSaysWhy() {
    m_timeline->setEditor(std::make_shared<FollowedSchedule>(
        m_trainer->runDir(), 2, [] { return int64_t{40}; }, [] { return int64_t{0}; }));
    const QStringList entries = addMenu(2, 35);
    QCOMPARE(entries.size(), 1);
    QVERIFY2(entries[0].startsWith("[") && entries[0].contains("another process"), qPrintable(entries[0]));
  }

  void aFollowedRunsScheduleFileIsReadAgainWhileNoRecordMoves() {
    const std::string file = nf::run::schedulePath(m_trainer->runDir());
    m_timeline->setEditor(std::make_shared<FollowedSchedule>(
        m_trainer->runDir(), 2, [] { return int64_t{40}; }, [] { return int64_t{0}; }));
    QVERIFY(m_timeline->problemShown().isEmpty());
    const std::string good = nf::readTextFile(file);
    nf::writeFileAtomic(file, "{\"events\": [{\"step\": \"x\"}]}");  // a hand edit with a slip
    QTRY_VERIFY_WITH_TIMEOUT(m_timeline->problemShown().contains("schedule.json"), fixtures::kEventuallyMs);
    nf::writeFileAtomic(file, good);  // and its fix
    QTRY_VERIFY_WITH_TIMEOUT(m_timeline->problemShown().isEmpty(), fixtures::kEventuallyMs);
  }

  void acceptedEditsAreConfirmedRefusedOnesAreNot() {
    QSignalSpy accepted(m_timeline.get(), &TimelineWidget::editAccepted);
    QSignalSpy edited(m_timeline.get(), &TimelineWidget::scheduleEdited);
    auto said = [&] { return accepted.isEmpty() ? QString() : accepted.last().at(0).toString(); };
    drag(2, 25);
    QCOMPARE(accepted.count(), 1);
    QCOMPARE(said(), QString("Moved LN_mlp.1 to step 25"));
    addMenu(2, 35, "Make LN_v fake at step 35 › all layers");
    QCOMPARE(said(), QString("Added: LN_v.all becomes fake at step 35"));
    // Refused: a site made fake twice, a drag of an applied event.
    QVERIFY(!m_timeline->addEvent({0, 36, nf::EventAction::MakeFake, nf::SiteKind::Mlp, 0}));
    fixtures::trainUntil(*m_trainer, 11);
    m_timeline->refresh();
    drag(1, 15);
    QCOMPARE(accepted.count(), 2);
    // Several moved together, deleted, undone, redone.
    QTest::mouseClick(m_timeline.get(), Qt::LeftButton, {}, m_timeline->markerCenter(3));
    QTest::mouseClick(m_timeline.get(), Qt::LeftButton, Qt::ControlModifier, m_timeline->markerCenter(4));
    drag(3, 34);
    QCOMPARE(said(), QString("Moved 2 event(s): LN_qk.0, LN_qk.1"));
    QVERIFY(m_timeline->deleteSelected());
    QCOMPARE(said(), QString("Deleted 2 event(s): LN_qk.0, LN_qk.1"));
    m_timeline->undoStack()->undo();
    QVERIFY2(said().startsWith("Undone: "), qPrintable(said()));
    m_timeline->undoStack()->redo();
    QVERIFY2(said().startsWith("Redone: "), qPrintable(said()));
    QCOMPARE(accepted.count(), 6);
    QCOMPARE(edited.count(), accepted.count());  // scheduleEdited still comes with each
  }

  void theMinimumHeightShowsTheAxisAndEveryRow() {
    const int minimum = m_timeline->minimumSizeHint().height();
    QVERIFY(m_timeline->sizeHint().height() >= minimum);
    m_timeline->resize(900, minimum);
    // Rows below the step axis, inside the widget, a row's height apart (a selected marker, a row name;
    // less one pixel of rounding).
    constexpr int kRadius = TimelineGeometry::kMarkerRadius;
    QVERIFY(m_timeline->rowY(0) - kRadius >= TimelineGeometry::kAxisHeight);
    QVERIFY(m_timeline->rowY(TimelineWidget::kRows - 1) + kRadius < minimum);
    for (int row = 0; row < TimelineWidget::kRows; ++row) {
      QCOMPARE(m_timeline->rowAt(m_timeline->rowY(row)), row);
      if (row == 0) continue;
      const int apart = m_timeline->rowY(row) - m_timeline->rowY(row - 1);
      QVERIFY2(apart >= TimelineGeometry::kMinRowHeight - 1 && apart >= m_timeline->fontMetrics().height(),
               qPrintable(QString("rows %1 px apart").arg(apart)));
    }
    // A main window of 1366×768 cannot squeeze a bottom dock holding it below its rows.
    QMainWindow window;
    window.setCentralWidget(new QWidget);
    window.centralWidget()->setMinimumSize(400, 300);
    auto* dock = new QDockWidget("Removal timeline", &window);
    auto* timeline = new TimelineWidget;
    dock->setWidget(timeline);
    window.addDockWidget(Qt::BottomDockWidgetArea, dock);
    window.resize(1366, 768);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.resizeDocks({dock}, {20}, Qt::Vertical);
    QApplication::processEvents();
    QVERIFY2(
        timeline->height() >= timeline->minimumSizeHint().height(),
        qPrintable(QString("%1 < %2").arg(timeline->height()).arg(timeline->minimumSizeHint().height())));
  }

  void aDraftScheduleRefusesWhatWouldNotValidate() {
    auto draft = std::make_shared<DraftSchedule>(fixtures::smallRemoval(m_model, m_train).schedule, 2, 40);
    m_timeline->setEditor(draft);
    m_timeline->setViewRange(0, 40);
    drag(4, 39);
    QCOMPARE(draft->schedule().find(4)->step, int64_t{39});
    QVERIFY(
        !m_timeline->addEvent({0, 45, nf::EventAction::MakeFake, nf::SiteKind::Final, -1}));  // past the end
    QVERIFY(m_timeline->lastMessage().contains("45"));
  }
};

QTEST_MAIN(TestTimeline)
#include "tst_timeline.moc"

// The removal timeline edits a running trainer's schedule through the engine's live-edit API: drags move
// future events, applied events stay, refused edits snap back with the reason, one drag is one undo step,
// events are added and deleted, Shift-drag changes a group's gap.
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include "TimelineWidget.h"
#include "logic/ScheduleEditor.h"
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

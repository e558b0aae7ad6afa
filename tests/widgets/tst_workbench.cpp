// The workbench as a researcher uses it: first launch opens the bundled model with its preset; a run
// started from the GUI fills the loss plot and moves the playhead; closing mid-run leaves a loadable
// checkpoint; a headless run's folder is followed live; clicking a head fills its detail; figures export
// as valid PNG, SVG, PDF and CSV carrying their titles; German replaces the visible strings at once; bad
// input gets a dialog naming the file while what was open stays.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QImage>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QSvgRenderer>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolBar>
#include <QUndoStack>
#include <QtTest>
#include <filesystem>
#include <fstream>

#include "analysis/AnalysisRunner.h"
#include "analysis/HeadsPane.h"
#include "analysis/PatchingPane.h"
#include "io/atomic_file.h"
#include "model/model_folder.h"
#include "run/RunSession.h"
#include "run/run_directory.h"
#include "serve/steering_client.h"
#include "timeline/TimelineWidget.h"
#include "timeline_input.h"
#include "views/ModelInfoView.h"
#include "views/Plots.h"
#include "views/QCustomPlotInclude.h"
#include "views/RunSetupView.h"
#include "views/TrackedPlot.h"
#include "views/TrainingView.h"
#include "widget_fixtures.h"
#include "window/MainWindow.h"
#include "window/WindowActions.h"

class TestWorkbench : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  QString m_model, m_train, m_val;

  // A 200-step removal of the test model in `run`, on two workers: this process and normfree-cli.
  void startTwoWorkerRemoval(RunSession& session, const QString& run) {
    session.setWorkerProgram(NF_CLI);
    nf::RunConfig c = fixtures::smallRemoval(m_model, m_train);
    c.optimizer.maxSteps = 200;
    session.start(c, run, 4, {}, 2);
  }

  static QMessageBox* openMessageBox(QWidget* parent) {
    for (QMessageBox* box : parent->findChildren<QMessageBox*>())
      if (box->isVisible()) return box;
    return nullptr;
  }
  static QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
  }
  // Analyses of the test model on 4 validation sequences.
  AnalysisSetup smallSetup() const {
    AnalysisSetup setup;
    setup.modelFolder = m_model.toStdString();
    setup.validationData = m_val.toStdString();
    setup.sequences = 4;
    return setup;
  }
  // A pane's Refresh or Compute now button can be pressed.
  static bool computeOffered(AnalysisPane* pane) {
    for (QPushButton* button : pane->findChildren<QPushButton*>())
      if ((button->text() == "Refresh" || button->text() == "Compute now") && button->isEnabled())
        return true;
    return false;
  }
  QAction* toolbarAction(MainWindow& w, int index) {
    return w.findChild<QToolBar*>("runToolBar")->actions().at(index);
  }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    // A 4-layer model, so the tiny preset fits it; it stands in for the bundled model.
    m_model = fixtures::makeModel(m_dir.filePath("tiny"), 4);
    m_train = fixtures::writeRandomTokens(m_dir.filePath("train.bin"), 40000, 50, 1);
    m_val = fixtures::writeRandomTokens(m_dir.filePath("val.bin"), 4000, 50, 2);
    qputenv("NF_BUNDLED_MODEL", m_model.toUtf8());
  }

  void firstLaunchOpensTheBundledModelWithItsPreset() {
    QSettings().clear();
    MainWindow window;
    QCOMPARE(window.currentFolder(), m_model);
    QCOMPARE(window.runSetup()->preset(), std::string("tiny"));
    // The memory plan for the model on the CPU: the tiny preset's 32 sequences fit in one micro-batch.
    QVERIFY2(window.runSetup()->memoryText().contains("micro-batch 32 × 1 · activation checkpointing off"),
             qPrintable(window.runSetup()->memoryText()));
    QVERIFY(window.runSetup()->memoryPlan() && window.runSetup()->memoryPlan()->fits);
    const nf::Schedule schedule = window.timeline()->editor()->schedule();
    QCOMPARE(schedule, nf::findPreset("tiny").schedule);
    QVERIFY2(window.statusText().contains("step 0 / 500"), qPrintable(window.statusText()));
    QVERIFY2(window.statusText().contains("next: LN_mlp.0 becomes fake at step 40"),
             qPrintable(window.statusText()));
    // The tiny preset uses no position-0 treatment: the draft refuses ending one (so the timeline's menus
    // do not offer it), as the run would.
    QVERIFY(!window.timeline()
                 ->editor()
                 ->check({0, 100, nf::EventAction::EndPos0Treatment, nf::SiteKind::Mlp, -1})
                 .accepted);
    // A shorter budget keeps the events that still fit (LN_mlp.0–3 at 40–70, LN_qk.0 at 90), drops the rest.
    window.runSetup()->setMaxSteps(100);
    const nf::Schedule shorter = window.timeline()->editor()->schedule();
    QCOMPARE(shorter.events.size(), size_t{5});
    QCOMPARE(window.timeline()->editor()->maxSteps(), int64_t{100});
    // Choosing a preset replaces the draft: unsaid while it is the preset's own (a budget changed back and
    // forth), said once it had been edited, which no undo brings back.
    auto* preset = window.runSetup()->findChild<QComboBox*>("preset");
    window.runSetup()->setMaxSteps(500);
    preset->setCurrentText("by-depth");
    QVERIFY2(!window.statusBar()->currentMessage().contains("with its edits"),
             qPrintable(window.statusBar()->currentMessage()));
    QVERIFY(
        window.timeline()->editor()->remove(window.timeline()->editor()->schedule().events[0].id).accepted);
    preset->setCurrentText("tiny");
    QVERIFY2(window.statusBar()->currentMessage().contains("The preset tiny's schedule replaced the draft"),
             qPrintable(window.statusBar()->currentMessage()));
  }

  void aRunFromTheGuiFillsTheLossPlotAndCloseLeavesACheckpoint() {
    const QString run = m_dir.filePath("gui-run");
    int64_t seen = 0;
    {
      MainWindow window;
      window.show();
      QVERIFY(window.setDatasets(m_train, m_val, QString()));
      window.startRun(run);
      QTRY_VERIFY_WITH_TIMEOUT(window.trainingView()->plottedSteps() >= 5, fixtures::kEventuallyMs);
      QTRY_VERIFY_WITH_TIMEOUT(window.timeline()->playheadStep() >= 5, fixtures::kEventuallyMs);
      QVERIFY(window.session()->phase() == RunPhase::Running);
      QVERIFY(!toolbarAction(window, 0)->isEnabled());  // Start, while running
      QVERIFY(toolbarAction(window, 1)->isEnabled());   // Pause
      // A live edit from the timeline reaches the engine: move LN_f (step 190) to 300.
      int64_t lnF = -1;
      for (const auto& e : window.session()->trainer()->schedule().events)
        if (e.site == nf::SiteKind::Final) lnF = e.id;
      QVERIFY(window.session()->liveSchedule()->move(lnF, 300).accepted);
      QCOMPARE(window.session()->trainer()->schedule().find(lnF)->step, int64_t{300});
      seen = window.trainingView()->plottedSteps();
      // The loss plot's export says which run it is of, and names every series as the legend does.
      const QString csv = plotCsv(window.trainingView()->lossPlot());
      QVERIFY2(csv.contains("# run: " + run + "\n"), qPrintable(csv.left(300)));
      QVERIFY2(csv.contains("\ncross-entropy (raw),") && !csv.contains("\n,"), qPrintable(csv.left(300)));
      window.close();  // mid-run
    }
    const std::string checkpoint = nf::run::latestCheckpoint(run.toStdString());
    QVERIFY(!checkpoint.empty());
    const nf::ModelSummary summary = nf::inspectModelFolder(checkpoint);  // loadable
    QCOMPARE(summary.shape.nLayer, 4);
    std::ifstream state(nf::run::checkpointStatePath(checkpoint));
    std::string text((std::istreambuf_iterator<char>(state)), std::istreambuf_iterator<char>());
    const int64_t steps = std::stoll(text.substr(text.find("\"steps_done\"") + 13));
    QVERIFY2(steps >= seen, qPrintable(QString("checkpoint at %1, GUI saw %2 steps").arg(steps).arg(seen)));
    QVERIFY(steps < 500);
  }

  // The setup's Autopilot switch: the run it starts times its removals itself (issue 37), and says so.
  void theAutopilotSwitchStartsARunThatTimesItsRemovals() {
    MainWindow window;
    QVERIFY(window.setDatasets(m_train, m_val, QString()));
    window.runSetup()->setAutopilot(true);
    window.startRun(m_dir.filePath("autopilot-run"));
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->trainer() != nullptr, fixtures::kEventuallyMs);
    QVERIFY(window.session()->config().autopilot.enabled);
    QCOMPARE(window.session()->config().divergence.action, nf::DivergenceAction::Rollback);
    QTRY_VERIFY_WITH_TIMEOUT(window.timeline()->showsTentative(),
                             fixtures::kEventuallyMs);  // pending: tentative
    // Run › Autopilot shows it on and switches it off for the steps to come.
    QAction* autopilot = window.actions()->autopilot;
    QTRY_VERIFY_WITH_TIMEOUT(autopilot->isEnabled() && autopilot->isChecked(), fixtures::kEventuallyMs);
    autopilot->trigger();
    QVERIFY(!window.session()->autopilot());
    QTRY_VERIFY_WITH_TIMEOUT(!window.timeline()->showsTentative(), fixtures::kEventuallyMs);
    window.session()->stop();
    QTRY_VERIFY_WITH_TIMEOUT(!window.session()->busy(), fixtures::kEventuallyMs);
  }

  // Issue 36: stop a run, open another model — Resume had resumed the old run under the new model's title.
  // Now Resume is off, no plot or status field shows the old run, the timeline is the new model's draft;
  // once the run is opened again, Resume resumes it.
  void openingAnotherModelAfterStoppingLeavesTheRunBehind() {
    const QString run = m_dir.filePath("left-behind");
    const QString other = fixtures::makeModel(m_dir.filePath("other-model"), 2);
    MainWindow window;
    window.show();
    QVERIFY(window.setDatasets(m_train, m_val, QString()));
    window.timeline()->undoStack()->push(new QUndoCommand("an edit of the draft"));
    window.startRun(run);
    // The draft is the run's now: Undo has nothing left to change (it had changed the greyed timeline under
    // the run's title, a schedule the run does not have).
    QCOMPARE(window.timeline()->undoStack()->count(), 0);
    QTRY_VERIFY_WITH_TIMEOUT(window.trainingView()->plottedSteps() >= 3, fixtures::kEventuallyMs);
    toolbarAction(window, 2)->trigger();  // Stop
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->phase() == RunPhase::Stopped, fixtures::kEventuallyMs);
    QVERIFY(toolbarAction(window, 3)->isEnabled());   // Resume: this run
    QVERIFY(!toolbarAction(window, 0)->isEnabled());  // Start: the run, not a setup, is on screen
    QVERIFY2(window.windowTitle().startsWith("Run left-behind"), qPrintable(window.windowTitle()));
    const int64_t stoppedAt = window.session()->stepsDone();
    // The Model pane shows the run's model, and says so: not the folder it started from, unchanged.
    QVERIFY2(window.modelInfoView()->titleText().startsWith("The run's model, started from "),
             qPrintable(window.modelInfoView()->titleText()));

    QVERIFY(window.openModelFolder(other));
    // The status bar names what was opened (it had said "Stopped at step 0 … Resume continues it").
    QCoreApplication::processEvents();
    QVERIFY2(window.statusBar()->currentMessage().startsWith("Opened"),
             qPrintable(window.statusBar()->currentMessage()));
    QVERIFY(!toolbarAction(window, 3)->isEnabled());
    QVERIFY(toolbarAction(window, 0)->isEnabled());  // a run of the model shown
    QCOMPARE(window.trainingView()->plottedSteps(), 0);
    QVERIFY(window.session()->runDir().isEmpty());
    QVERIFY(!window.session()->trainer());
    QVERIFY2(window.windowTitle().startsWith("other-model"), qPrintable(window.windowTitle()));
    QCOMPARE(window.timeline()->editor()->layers(), 2);  // its own draft: a drag edits that
    QCOMPARE(window.timeline()->editor()->stepsDone(), int64_t{0});
    QCOMPARE(window.timeline()->playheadStep(), int64_t{0});
    QVERIFY2(window.statusText().startsWith(" | step 0 / "), qPrintable(window.statusText()));
    QVERIFY(!window.statusText().contains("tok/s"));
    QCOMPARE(window.modelInfoView()->titleText(), other);
    for (int site = 0; site < window.modelInfoView()->siteTable()->rowCount(); ++site)
      for (int column = 0; column < 3; ++column)
        if (const QTableWidgetItem* item = window.modelInfoView()->siteTable()->item(site, column))
          QVERIFY2(!item->text().startsWith("Fake"), qPrintable(item->text()));

    // The run opened again: Resume means it, and trains it on from its checkpoint.
    QVERIFY(window.openRun(run));
    QVERIFY2(window.windowTitle().startsWith("Run left-behind"), qPrintable(window.windowTitle()));
    QCOMPARE(window.trainingView()->plottedSteps(), static_cast<int>(stoppedAt));
    QVERIFY(toolbarAction(window, 3)->isEnabled());
    // A take-over refused (two workers, and no program to start the other with) says why and leaves the
    // run shown as it was: the window had stayed "Preparing" for good, every way out of it disabled.
    const WindowState followed = window.shown();
    window.session()->setWorkerProgram(m_dir.filePath("no-such-program"));
    window.runSetup()->findChild<QSpinBox*>("workers")->setValue(2);
    toolbarAction(window, 3)->trigger();
    QMessageBox* refusal = openMessageBox(&window);
    QVERIFY(refusal && refusal->informativeText().contains("missing or not executable"));
    refusal->close();
    QCOMPARE(window.shown().subject, followed.subject);
    QCOMPARE(window.shown().phase, followed.phase);
    QVERIFY(toolbarAction(window, 3)->isEnabled());  // Resume again, with one worker
    window.runSetup()->findChild<QSpinBox*>("workers")->setValue(1);
    toolbarAction(window, 3)->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->phase() == RunPhase::Running, fixtures::kEventuallyMs);
    QCOMPARE(window.session()->runDir(), run);
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->stepsDone() > stoppedAt, fixtures::kEventuallyMs);
    QCOMPARE(window.shown().subject, Subject::LocalRun);
  }

  // Stop while a run is first asked gives up connecting: no dialog, the model opened before is back.
  void stopWhileConnectingGoesBackToTheModel() {
    // A port that accepts connections (the kernel completes them) and never answers, as a tunnel to a
    // hung server would.
    const int silent = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    QVERIFY(::bind(silent, reinterpret_cast<sockaddr*>(&address), size) == 0 && ::listen(silent, 4) == 0);
    QVERIFY(::getsockname(silent, reinterpret_cast<sockaddr*>(&address), &size) == 0);
    MainWindow window;
    window.show();
    const QString model = window.currentFolder();
    window.connectToRun(nf::serveAddressOf("127.0.0.1:" + std::to_string(ntohs(address.sin_port)), "token"));
    QCOMPARE(window.shown().subject, Subject::ConnectedRun);
    // Until the run answers there is no model to analyse: a pane offers no button, and asked anyway computes
    // nothing of the model opened before (it had, under the run's title).
    QVERIFY(!computeOffered(window.headsPane()));
    window.headsPane()->refresh();
    QVERIFY(!window.headsPane()->hasResult() && !window.headsPane()->hasFailed());
    // Nor any settings but the run's: the setup dock and the status bar had shown a default config's
    // (remove · 500 steps · cpu) under the run's title until it answered.
    const auto* settings = window.runSetup()->findChild<QLabel*>("runSettings");
    QVERIFY(settings && settings->isVisibleTo(window.runSetup()));  // the run's page, not the form
    QVERIFY2(settings->text().contains("come with its first answer"), qPrintable(settings->text()));
    QVERIFY2(!window.statusText().contains("step ") && !window.statusText().contains("cpu"),
             qPrintable(window.statusText()));
    QVERIFY(toolbarAction(window, 2)->isEnabled());  // Stop gives up connecting
    toolbarAction(window, 2)->trigger();
    QCOMPARE(window.shown().subject, Subject::Model);
    QCOMPARE(window.currentFolder(), model);
    QVERIFY(!window.session()->remote());
    QVERIFY(!openMessageBox(&window));
    QVERIFY(toolbarAction(window, 0)->isEnabled());  // Start: the model's setup is back
    ::close(silent);
  }

  // Stop while a start's synthetic data is being made: no trainer and no run folder exist yet, so the
  // window goes back to the model (it had shown a "stopped run" with nothing to resume).
  void stopWhileTheDataIsMadeGoesBackToTheModel() {
    const QString model = m_dir.filePath("with-tokenizer");  // a new folder: its data is made afresh
    std::filesystem::copy(NF_SOURCE_DIR "/resources/tiny-gpt2", model.toStdString(),
                          std::filesystem::copy_options::recursive);
    MainWindow window;
    window.show();
    QVERIFY(window.openModelFolder(model));
    window.runSetup()->setMaxSteps(321);  // the user's setup
    toolbarAction(window, 0)->trigger();  // Start: the data is made first
    QCOMPARE(window.shown().phase, RunPhase::Preparing);
    toolbarAction(window, 2)->trigger();  // Stop
    QTRY_COMPARE_WITH_TIMEOUT(window.shown().subject, Subject::Model, fixtures::kEventuallyMs);
    QCOMPARE(window.currentFolder(), model);
    QVERIFY(!openMessageBox(&window));
    // The setup is as it was (it had gone back to the model's defaults, its draft with it), and the session
    // is free: Start starts again (it had stayed "stopping", and Start did nothing).
    QCOMPARE(window.runSetup()->maxSteps(), int64_t{321});
    QCOMPARE(window.timeline()->editor()->maxSteps(), int64_t{321});
    QVERIFY(!window.session()->busy());
    QVERIFY(toolbarAction(window, 0)->isEnabled());
    toolbarAction(window, 0)->trigger();
    QCOMPARE(window.shown().phase, RunPhase::Preparing);
    toolbarAction(window, 2)->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(window.shown().subject, Subject::Model, fixtures::kEventuallyMs);
  }

  // Start refuses what the engine would refuse only after making the data, or what would train other than
  // chosen; it trains the steps typed in the form even when Start is clicked before they were entered.
  void startRefusesWhatWouldFailOrTrainOtherThanChosen() {
    MainWindow window;
    window.show();
    auto refused = [&](const QString& dir, const QString& why) {
      window.startRun(dir);
      QMessageBox* box = openMessageBox(&window);
      if (!box) return false;
      const bool said = box->informativeText().contains(why);
      if (!said) qWarning("%s", qPrintable(box->informativeText()));
      box->close();
      return said && !QFileInfo::exists(dir) && window.shown().subject == Subject::Model;
    };
    // Token files another tokenizer made (their fingerprint is not the model's tokenizer's): chosen for a
    // model without a tokenizer, then another with one opened, they had stayed, and every analysis read
    // their ids as the new model's; chosen for it, they were refused only at Start.
    const QString withTokenizer = m_dir.filePath("tokenizer-check");
    std::filesystem::copy(NF_SOURCE_DIR "/resources/tiny-gpt2", withTokenizer.toStdString(),
                          std::filesystem::copy_options::recursive);
    QVERIFY(window.openModelFolder(m_model));
    auto writeTokens = [](const QString& path, const std::string& fingerprint) {
      nf::TokenFileMeta meta;
      meta.dtype = nf::tokenDTypeFor(2048);
      meta.vocabSize = 2048;
      meta.tokenizerFingerprint = fingerprint;
      nf::TokenFileWriter writer(path.toStdString(), meta);
      writer.append(std::vector<int32_t>(2000, 7).data(), 2000);
      writer.finish();
    };
    const QString other = m_dir.filePath("other-tokenizer.bin");
    writeTokens(other, "fnv1a64:0123456789abcdef");
    QVERIFY(window.setDatasets(other, other, QString()));  // nothing to compare them with
    QVERIFY(window.openModelFolder(withTokenizer));
    QVERIFY(window.nextRun().datasets().validation.isEmpty());  // set aside: the synthetic corpus instead
    QVERIFY(window.statusBar()->currentMessage().contains("was tokenized by another tokenizer"));
    QVERIFY(!window.setDatasets(other, other, QString()));
    QMessageBox* box = openMessageBox(&window);
    QVERIFY(box && box->informativeText().contains("was tokenized by another tokenizer than the model's"));
    box->close();
    QVERIFY(window.nextRun().datasets().validation.isEmpty());
    // One chosen, then made again by another tokenizer: Start sees it.
    const QString madeAgain = m_dir.filePath("made-again.bin");
    writeTokens(madeAgain, "");
    QVERIFY(window.setDatasets(madeAgain, madeAgain, QString()));
    writeTokens(madeAgain, "fnv1a64:0123456789abcdef");
    QVERIFY(refused(m_dir.filePath("other-data"), "was tokenized by another tokenizer than the model's"));
    QVERIFY(window.openModelFolder(m_model));  // the rest on the 4-layer model without a tokenizer
    QVERIFY(window.setDatasets(m_train, m_val, QString()));
    auto* preset = window.runSetup()->findChild<QComboBox*>("preset");
    // The gpt2 preset's schedule names 12 layers; this model has 4, whose other sites kept their norms.
    preset->setCurrentText("gpt2");
    QVERIFY(refused(m_dir.filePath("other-depth"), "made for 12 layers; this model has 4"));
    window.runSetup()->setMaxSteps(50);  // a shorter budget sets most of it aside: still the preset's
    QVERIFY(refused(m_dir.filePath("other-depth-short"), "made for 12 layers; this model has 4"));
    preset->setCurrentText("tiny");
    // More workers than the micro-batch splits over.
    window.runSetup()->findChild<QSpinBox*>("workers")->setValue(5);
    QVERIFY(refused(m_dir.filePath("workers"), "does not split evenly over 5 workers"));
    window.runSetup()->findChild<QSpinBox*>("workers")->setValue(1);
    // A device the plan cannot be made for (no GPU here): refused at once, as the CLI's --device is.
    auto* device = window.runSetup()->findChild<QComboBox*>("device");
    device->setCurrentText("cuda:7");
    QVERIFY(refused(m_dir.filePath("no-such-device"), "cannot plan for cuda:7"));
    device->setCurrentText("cpu");
    // With the autopilot, removals set aside past a shorter budget are its to time, as on the CLI: here the
    // first lies past the budget too, so nothing could be.
    window.runSetup()->setMaxSteps(30);
    window.runSetup()->setAutopilot(true);
    QVERIFY(refused(m_dir.filePath("autopilot-too-short"), "past the last step"));
    window.runSetup()->setAutopilot(false);
    // Steps typed but not entered: trained, not the budget shown before.
    auto* steps = window.runSetup()->findChild<QSpinBox*>("steps");
    steps->selectAll();
    QTest::keyClicks(steps, "2");
    QVERIFY(window.runSetup()->maxSteps() != 2);
    window.startRun(m_dir.filePath("typed-steps"));
    QTRY_COMPARE_WITH_TIMEOUT(window.shown().phase, RunPhase::Finished, fixtures::kEventuallyMs);
    QCOMPARE(window.session()->config().optimizer.maxSteps, int64_t{2});
  }

  // After a run trained here, other runs opened are shown as what they are: one whose own process still
  // trains (its log says so; its phase had been taken for the run shown before, which then refused to be
  // left), and one copied from another machine without its starting model.
  void runsOpenedAfterOneTrainedHereAreShownAsTheyAre() {
    MainWindow window;
    window.show();
    QVERIFY(window.setDatasets(m_train, m_val, QString()));
    window.runSetup()->setMaxSteps(3);
    const QString here = m_dir.filePath("trained-here"), elsewhere = m_dir.filePath("training-elsewhere");
    window.startRun(here);
    QTRY_COMPARE_WITH_TIMEOUT(window.shown().phase, RunPhase::Finished, fixtures::kEventuallyMs);
    // A copy whose log ends before its finish: as a run still training in another process.
    std::filesystem::copy(here.toStdString(), elsewhere.toStdString(),
                          std::filesystem::copy_options::recursive);
    std::filesystem::remove(nf::run::lockPath(elsewhere.toStdString()));
    const QByteArray log = readAll(QString::fromStdString(nf::run::metricsPath(elsewhere.toStdString())));
    QFile cut(QString::fromStdString(nf::run::metricsPath(elsewhere.toStdString())));
    QVERIFY(cut.open(QIODevice::WriteOnly));
    cut.write(log.left(log.lastIndexOf('\n', log.lastIndexOf("\"type\":\"finish\"")) + 1));
    cut.close();
    QVERIFY(window.openRun(elsewhere));
    QCOMPARE(window.shown().subject, Subject::FollowedRun);
    QCOMPARE(window.shown().phase, RunPhase::Running);
    QVERIFY2(window.windowTitle().contains("training-elsewhere"), qPrintable(window.windowTitle()));
    // A run copied from the machine it trained on, its starting model not here: its model now is read in
    // its stead, and no analysis sets it beside itself as the "starting model" (it had, the same weights).
    const std::string copied = m_dir.filePath("copied-run").toStdString();
    std::filesystem::copy(here.toStdString(), copied, std::filesystem::copy_options::recursive);
    std::filesystem::remove(nf::run::lockPath(copied));
    auto config =
        nlohmann::json::parse(readAll(QString::fromStdString(nf::run::configPath(copied))).toStdString());
    config["model"] = "/the/server/models/tiny";
    nf::writeFileAtomic(nf::run::configPath(copied), config.dump());
    QVERIFY(window.openRun(QString::fromStdString(copied)));
    QVERIFY2(window.modelInfoView()->titleText().contains("started from /the/server/models/tiny"),
             qPrintable(window.modelInfoView()->titleText()));
    AnalysisPane* norms = nullptr;
    for (AnalysisPane* pane : window.analysisPanes())
      if (pane->title() == "Residual norms") norms = pane;
    QVERIFY(norms);
    norms->refresh();
    QTRY_VERIFY_WITH_TIMEOUT(norms->hasResult() || norms->hasFailed(), fixtures::kEventuallyMs);
    QVERIFY2(!norms->hasFailed(), qPrintable(norms->statusText()));
    QCOMPARE(norms->plots().at(0)->legend->itemCount(), 2);  // position 0 and the rest: no starting model
  }

  // Two workers: this process trains as worker 0 (an edit made here reaches the other worker at its step),
  // normfree-cli the other; the status bar names both.
  void aRunWithTwoWorkersTrainsHereAsWorkerZeroAndTakesEdits() {
    RunSession session;
    const QString run = m_dir.filePath("two-workers");
    startTwoWorkerRemoval(session, run);
    QTRY_VERIFY_WITH_TIMEOUT(session.phase() == RunPhase::Running, fixtures::kEventuallyMs);
    const nf::EditResult added =
        session.trainer()->addEvent({0, 150, nf::EventAction::MakeFake, nf::SiteKind::V, 0});
    QVERIFY2(added.accepted, added.reason.c_str());
    QTRY_VERIFY_WITH_TIMEOUT(session.phase() == RunPhase::Finished, fixtures::kEventuallyMs);
    QCOMPARE(session.metrics().worldSize, 2);
    QCOMPARE(session.metrics().workerTokensPerSecond.size(), size_t{2});
    // The event fired at its step; had worker 1 not applied it too, their weights would differ and the
    // final checkpoint's agreement check would have failed the run.
    bool fired = false;
    for (const MetricsStore::AppliedEvent& e : session.metrics().events)
      fired = fired || (e.step == 150 && e.description.find("LN_v.0") != std::string::npos);
    QVERIFY(fired);
    QVERIFY(
        QFile::exists(QString::fromStdString(nf::run::finalModelPath(run.toStdString())) + "/config.json"));
  }

  // Paused, a multi-worker run's other workers end, and Continue resumes it from its checkpoint: the
  // autopilot switched on meanwhile is the resumed run's (it had stayed with the trainer let go).
  void anAutopilotSwitchedOnWhilePausedIsTheContinuedMultiWorkerRuns() {
    RunSession session;
    const QString run = m_dir.filePath("two-workers-autopilot");
    startTwoWorkerRemoval(session, run);
    QTRY_VERIFY_WITH_TIMEOUT(session.phase() == RunPhase::Running, fixtures::kEventuallyMs);
    session.pause();
    QTRY_VERIFY_WITH_TIMEOUT(session.phase() != RunPhase::Pausing, fixtures::kEventuallyMs);
    QCOMPARE(session.phase(), RunPhase::Paused);
    QVERIFY(!session.autopilot());
    session.setAutopilot(true);
    session.continueRun();
    QTRY_VERIFY_WITH_TIMEOUT(session.phase() == RunPhase::Finished, fixtures::kEventuallyMs);
    QVERIFY(session.autopilot());
    QVERIFY(nf::readRunConfig(run.toStdString()).autopilot.enabled);
    bool switched = false;
    for (const nlohmann::json& r : fixtures::metricsRecords(run, "autopilot"))
      switched = switched || r["enabled"] == true;
    QVERIFY(switched);
  }

  void connectingShowsNothingOfTheRunShownBefore() {
    const QString run = m_dir.filePath("before-connecting");
    nf::RunConfig c = fixtures::smallRemoval(m_model, m_train);
    c.schedule.events.clear();
    c.mode = nf::TrainingMode::Finetune;
    fixtures::trainUntil(*nf::Trainer::start(run.toStdString(), c), 2);
    MainWindow window;
    QVERIFY(window.openRun(run));
    QVERIFY(!window.session()->config().trainData.empty());
    QVERIFY2(window.statusText().contains("/ 40"), qPrintable(window.statusText()));  // its budget
    // Until the connected run answers (seconds on a slow link), the window shows none of the run before:
    // its settings, budget and schedule had stayed in the setup pane, the status bar and the timeline.
    nf::ServeAddress nowhere;
    nowhere.port = 9;  // discard: nothing serves runs there
    window.connectToRun(nowhere);
    QVERIFY(window.session()->config().trainData.empty());
    QVERIFY(window.session()->config().model.empty());
    QVERIFY2(!window.statusText().contains("/ 40"), qPrintable(window.statusText()));
  }

  // A connection that fails after a run of another model was opened goes back to that run's model with a
  // draft of its own: the timeline had shown the draft of the model opened before (4 layers under a 2-layer
  // model's title), and Start would have trained that schedule on it.
  void aFailedConnectionAfterARunOfAnotherModelShowsThatModelsDraft() {
    const QString first = m_dir.filePath("of-the-bundled-model"), run = m_dir.filePath("of-another-depth");
    const QString other = fixtures::makeModel(m_dir.filePath("two-layers"), 2);
    for (const auto& [dir, model] : {std::pair{first, m_model}, std::pair{run, other}}) {
      nf::RunConfig c = fixtures::smallRemoval(model, m_train);
      c.schedule.events.clear();
      c.mode = nf::TrainingMode::Finetune;
      fixtures::trainUntil(*nf::Trainer::start(dir.toStdString(), c), 2);
    }
    MainWindow window;
    QCOMPARE(window.timeline()->editor()->layers(), 4);  // the bundled model's draft
    QVERIFY(window.openRun(first));  // a run shown: opening the next leaves the draft as it is
    QVERIFY(window.openRun(run));
    nf::ServeAddress nowhere;
    nowhere.port = 9;  // discard: nothing serves runs there, so the connection fails
    window.connectToRun(nowhere);
    QTRY_COMPARE_WITH_TIMEOUT(window.shown().subject, Subject::Model, fixtures::kEventuallyMs);
    QCOMPARE(window.currentFolder(), other);
    QCOMPARE(window.timeline()->editor()->layers(), 2);
    QCOMPARE(window.timeline()->editor()->schedule(),
             nf::presetSchedule(nf::findPreset(window.runSetup()->preset()), 2));
  }

  // The folder chosen for the next run is that run's: once it holds it, the one after gets a new folder
  // (Start had been refused, "holds a run already", after every run until another folder was chosen).
  void theFolderChosenForTheNextRunServesOneRun() {
    MainWindow window;
    QVERIFY(window.setDatasets(m_train, m_val, QString()));
    window.runSetup()->setMaxSteps(2);
    const QString chosen = m_dir.filePath("chosen-folder");
    window.runSetup()->setRunFolder(chosen);
    window.startRun();
    QTRY_COMPARE_WITH_TIMEOUT(window.shown().phase, RunPhase::Finished, fixtures::kEventuallyMs);
    QCOMPARE(window.session()->runDir(), chosen);
    QVERIFY(window.runSetup()->runFolder().isEmpty());
  }

  void aHeadlessRunIsFollowedAsItGrows() {
    const QString run = m_dir.filePath("headless");
    nf::RunConfig c = fixtures::smallRemoval(m_model, m_train);
    c.schedule.events.clear();
    c.mode = nf::TrainingMode::Finetune;
    c.evalData = {m_val.toStdString()};  // the analyses read its first eval set
    auto trainer = nf::Trainer::start(run.toStdString(), c);
    fixtures::trainUntil(*trainer, 10);
    MainWindow window;
    QVERIFY(window.openRun(run));
    QCOMPARE(window.trainingView()->plottedSteps(), 10);
    fixtures::trainUntil(*trainer, 25);  // "another process" writes on
    QTRY_COMPARE_WITH_TIMEOUT(window.trainingView()->plottedSteps(), 25, fixtures::kEventuallyMs);
    QCOMPARE(window.timeline()->playheadStep(), int64_t{25});
    // The analyses read its newest checkpoint (written when the run stopped at step 25).
    HeadsPane* heads = window.headsPane();
    heads->refresh();
    QTRY_VERIFY_WITH_TIMEOUT(heads->hasResult(), fixtures::kEventuallyMs);
    QCOMPARE(heads->shownStep(), int64_t{25});
    QVERIFY(!heads->isStale());
    fixtures::trainUntil(*trainer, 30);  // a newer checkpoint: the figures are out of date
    QTRY_VERIFY_WITH_TIMEOUT(heads->isStale(), fixtures::kEventuallyMs);
    // Its schedule is shown but not edited from here.
    QVERIFY(!window.timeline()->addEvent({0, 30, nf::EventAction::MakeFake, nf::SiteKind::Final, -1}));
    QVERIFY2(window.statusText().contains("step 30 / 40"), qPrintable(window.statusText()));
    // Resumed elsewhere with a larger budget (`resume --steps 60`): the status bar, the plots' range and
    // the timeline follow the new budget, not the one the run started with.
    trainer.reset();
    nf::ResumeOverrides longer;
    longer.maxSteps = 60;
    auto resumed = nf::Trainer::resume(run.toStdString(), std::nullopt, longer);
    fixtures::trainUntil(*resumed, 45);
    QTRY_COMPARE_WITH_TIMEOUT(window.trainingView()->plottedSteps(), 45, fixtures::kEventuallyMs);
    QVERIFY2(window.statusText().contains("step 45 / 60"), qPrintable(window.statusText()));
    QCOMPARE(window.timeline()->editor()->maxSteps(), int64_t{60});
    heads->refresh();
    QTRY_VERIFY_WITH_TIMEOUT(heads->hasResult() && !heads->isStale(), fixtures::kEventuallyMs);
    heads->setCurrentStep(30);  // rolled back to step 30: the figures of step 45 are of a model gone
    QVERIFY(heads->isStale());
    heads->setCurrentStep(45);  // and stay so when it is back at their step (another model of step 45)
    QVERIFY(heads->isStale());
    // The model it started from, opened: the run's figures are not the model's (they had stayed under the
    // model's title, marked stale only), and no more are they another run's of the same model.
    QVERIFY(window.openModelFolder(m_model));
    QVERIFY(!heads->hasResult());
  }

  void aServedCliRunIsSteeredAndAnalysedFromTheWorkbench() {
    // A CLI run with --serve whose only event is far ahead; the workbench connects to it over loopback.
    const QString run = m_dir.filePath("served"), scheduleFile = m_dir.filePath("served-schedule.json");
    nf::Schedule schedule;
    schedule.events = {{1, 90000, nf::EventAction::MakeFake, nf::SiteKind::Final, -1}};
    nf::writeFileAtomic(scheduleFile.toStdString(), nf::toJson(schedule).dump());
    QProcess cli;
    cli.setProcessChannelMode(QProcess::ForwardedChannels);
    cli.start(NF_CLI,
              {"remove",        run,          "--model",           m_model,  "--train",       m_train,
               "--schedule",    scheduleFile, "--steps",           "100000", "--micro-batch", "2",
               "--context",     "16",         "--serve",           "0",      "--track",       "sinks,val-ce",
               "--track-every", "3",          "--track-sequences", "2"});
    const QString serveFile = QString::fromStdString(nf::run::servePath(run.toStdString()));
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(serveFile) || cli.state() == QProcess::NotRunning,
                             fixtures::kEventuallyMs);
    QVERIFY2(cli.state() == QProcess::Running, "the CLI run ended before serving");
    MainWindow window;
    window.resize(1500, 950);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    RunSession* session = window.session();
    window.connectToRun(nf::readServeFile(serveFile.toStdString()));
    QTRY_VERIFY_WITH_TIMEOUT(session->remote() && session->phase() == RunPhase::Running,
                             fixtures::kEventuallyMs);
    QTRY_VERIFY_WITH_TIMEOUT(window.trainingView()->plottedSteps() > 0, fixtures::kEventuallyMs);  // streamed
    // Its tracked analyses come with the stream and are plotted against the step.
    QTRY_VERIFY_WITH_TIMEOUT(window.trainingView()->trackedPlot()->plottedPoints() >= 2,
                             fixtures::kEventuallyMs);
    QVERIFY(window.trainingView()->showsTracked());
    QCOMPARE(session->metrics().tracked.count("sinks") + session->metrics().tracked.count("val-ce"), 2u);
    QVERIFY2(window.statusText().contains("connected to 127.0.0.1:"), qPrintable(window.statusText()));
    // The window names the connected run, not the model opened before; nothing is planned for it here.
    QVERIFY2(window.windowTitle().startsWith("Run served at 127.0.0.1:"), qPrintable(window.windowTitle()));
    QVERIFY(window.modelInfoView()->siteTable()->rowCount() == 0);
    QVERIFY(window.runSetup()->memoryText().isEmpty());
    QVERIFY(!window.runSetup()->isEditable());

    // Pause from the toolbar: the run holds at some step P.
    toolbarAction(window, 1)->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(session->phase() == RunPhase::Paused, fixtures::kEventuallyMs);
    const int64_t held = session->stepsDone();
    QVERIFY(toolbarAction(window, 3)->isEnabled());  // Resume continues it

    // Every analysis pane computes on the server, on the model at P.
    HeadsPane* heads = window.headsPane();
    window.raisePane(heads);
    heads->refresh();
    QTRY_VERIFY_WITH_TIMEOUT(heads->hasResult(), fixtures::kEventuallyMs);
    QCOMPARE(heads->shownStep(), held);
    QVERIFY(computeOffered(heads));
    QTest::mouseClick(heads->heatMaps(), Qt::LeftButton, {}, heads->cellCenter(2, 1, 1));
    QTRY_VERIFY_WITH_TIMEOUT(heads->hasDetail(), fixtures::kEventuallyMs);
    QCOMPARE(heads->tracePlot()->graph(0)->dataCount(), 15);  // the context's 16 tokens: 15 predictions

    // Add an event and drag it later on the timeline, as for a run trained here.
    TimelineWidget* timeline = window.timeline();
    timeline->setViewRange(held, held + 100);
    QVERIFY(timeline->addEvent({0, held + 40, nf::EventAction::MakeFake, nf::SiteKind::V, 0}));
    int64_t id = 0;
    for (const nf::ScheduleEvent& e : timeline->editor()->schedule().events)
      if (e.site == nf::SiteKind::V) id = e.id;
    fixtures::dragEvent(*timeline, id, held + 70);
    int64_t dropped = -1;  // where the timeline shows it at once
    for (const nf::ScheduleEvent& e : timeline->editor()->schedule().events)
      if (e.site == nf::SiteKind::V) dropped = e.step;
    QVERIFY2(dropped > held + 40, qPrintable(QString::number(dropped)));

    // Continue: the run makes LN_v.0 fake at the step it was dragged to, as its metrics.jsonl says.
    toolbarAction(window, 3)->trigger();
    auto firedAt = [&]() -> int64_t {
      for (const nlohmann::json& r : fixtures::metricsRecords(run, "event"))
        if (r["event"]["site"] == "LN_v" && r["event"]["layer"] == 0) return r["step"].get<int64_t>();
      return -1;
    };
    QTRY_VERIFY_WITH_TIMEOUT(firedAt() >= 0, fixtures::kEventuallyMs);
    QCOMPARE(firedAt(), dropped);
    QTRY_VERIFY_WITH_TIMEOUT(session->metrics().lastStep() > dropped, fixtures::kEventuallyMs);

    // Stop from the toolbar: the run writes its checkpoint and ends; the window says so.
    toolbarAction(window, 2)->trigger();
    QVERIFY(cli.waitForFinished(fixtures::kEventuallyMs));
    QCOMPARE(cli.exitCode(), 3);
    QTRY_VERIFY_WITH_TIMEOUT(session->phase() == RunPhase::Stopped, fixtures::kEventuallyMs);
    QVERIFY(!session->remote());
    QCOMPARE(session->metrics().lastStatus, std::string("stop"));  // the run's last records came through
    QVERIFY2(window.statusBar()->currentMessage().contains("stopped at step"),
             qPrintable(window.statusBar()->currentMessage()));
    QVERIFY(!timeline->isEnabled());  // an ended run takes no edits
    QVERIFY(!timeline->addEvent({0, dropped + 50, nf::EventAction::MakeFake, nf::SiteKind::V, 1}));
    QVERIFY(!toolbarAction(window, 0)->isEnabled());  // no model of this machine is shown to start
    QVERIFY(!toolbarAction(window, 3)->isEnabled());  // it is resumed on the server, not here
    QVERIFY2(!window.statusText().contains("next:"), qPrintable(window.statusText()));
    // Its server is gone: the panes say so and ask it nothing (Refresh was a request to a dead server).
    QTRY_VERIFY2(heads->statusText().contains("answers no more"), qPrintable(heads->statusText()));
    QVERIFY(!computeOffered(heads));
    QVERIFY(!window.actions()->refresh->isEnabled());  // Refresh analyses
    heads->refresh();
    QVERIFY(!heads->hasFailed());
    // Opening a model leaves the ended run behind: its draft schedule is editable again.
    QVERIFY(window.openModelFolder(m_model));
    QVERIFY(session->phase() == RunPhase::None);
    QVERIFY(!heads->hasResult());  // the connected run's maps are not this model's (they stayed, "stale")
    QVERIFY(timeline->isEnabled());
    QVERIFY(toolbarAction(window, 0)->isEnabled());
    QCOMPARE(window.trainingView()->plottedSteps(), 0);
  }

  void clickingAHeadFillsItsDetail() {
    AnalysisRunner runner;
    runner.setSetup(smallSetup());
    HeadsPane pane(&runner);
    pane.resize(1000, 800);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(pane.hasResult(), fixtures::kEventuallyMs);
    QVERIFY(!pane.hasDetail());
    QTest::mouseClick(pane.heatMaps(), Qt::LeftButton, {}, pane.cellCenter(2, 3, 1));  // NMAE map, L3H1
    QCOMPARE(pane.selectedLayer(), 3);
    QCOMPARE(pane.selectedHead(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(pane.hasDetail(), fixtures::kEventuallyMs);
    QVERIFY2(pane.detailText().contains("L3H1"), qPrintable(pane.detailText()));
    // The trace is of the maps' model: the maps' numbers for the head stand beside it.
    QVERIFY2(pane.detailText().contains("NMAE") && pane.detailText().contains("sink share"),
             qPrintable(pane.detailText()));
    QCOMPARE(pane.tracePlot()->graph(0)->dataCount(), 15);  // 16 tokens: 15 predictions
    QCOMPARE(pane.tracePlot()->graph(1)->dataCount(), 15);
    auto* pattern = qobject_cast<QCPColorMap*>(pane.patternPlot()->plottable(0));
    QCOMPARE(pattern->data()->keySize(), 16);
    // Causal attention: row 0 attends only to itself.
    QCOMPARE(pattern->data()->cell(0, 0), 1.0);
    QCOMPARE(pattern->data()->cell(1, 0), 0.0);
    // Clicking another head moves the selection.
    QTest::mouseClick(pane.heatMaps(), Qt::LeftButton, {}, pane.cellCenter(0, 0, 0));
    QCOMPARE(pane.selectedLayer(), 0);
    QTRY_VERIFY_WITH_TIMEOUT(pane.detailText().contains("L0H0"), fixtures::kEventuallyMs);
    // The model moves on (here: the same folder, as a followed run's newer checkpoint): a head of the old
    // maps is not traced on the new model, whose trace would stand beside the old maps' numbers; after a
    // refresh it is.
    QSignalSpy changed(&runner, &AnalysisRunner::sourceChanged);
    runner.setSource(AnalysisSource::folder(m_model.toStdString()));
    QVERIFY(changed.wait(fixtures::kEventuallyMs));  // announced through the event loop
    QTest::mouseClick(pane.heatMaps(), Qt::LeftButton, {}, pane.cellCenter(0, 1, 1));
    QTRY_VERIFY2_WITH_TIMEOUT(pane.detailText().contains("refresh them"), qPrintable(pane.detailText()),
                              fixtures::kEventuallyMs);
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(pane.detailText().contains("L1H1"), fixtures::kEventuallyMs);
    // Other validation data: the same (the trace would be of a sequence the maps were not computed on).
    AnalysisSetup otherData = smallSetup();
    otherData.validationData = m_train.toStdString();
    runner.setSetup(otherData);
    QTest::mouseClick(pane.heatMaps(), Qt::LeftButton, {}, pane.cellCenter(0, 1, 0));
    QVERIFY2(pane.detailText().contains("refresh them"), qPrintable(pane.detailText()));
    // Another language keeps the note (the old detail's label had been drawn over it).
    QEvent languageChange(QEvent::LanguageChange);
    QCoreApplication::sendEvent(&pane, &languageChange);
    QVERIFY2(pane.detailText().contains("refresh them"), qPrintable(pane.detailText()));
    // Another model or run shown: the detail and the selection go with the maps (the detail had stayed
    // below the new model's maps, and gone into their export).
    runner.forgetModel();
    QVERIFY(!pane.hasDetail());
    QCOMPARE(pane.selectedLayer(), -1);
    QCOMPARE(pane.tracePlot()->graph(0)->dataCount(), 0);
    QVERIFY(pane.resultPlots().isEmpty());
  }

  void clickingAPatchingCellMarksItsPositionInThePrompt() {
    // The bundled model: it has a tokenizer, so the pane makes its own IOI prompt set.
    AnalysisRunner runner;
    AnalysisSetup setup;
    setup.modelFolder = NF_SOURCE_DIR "/resources/tiny-gpt2";
    setup.validationData =
        fixtures::writeRandomTokens(m_dir.filePath("val2048.bin"), 2000, 2048, 3).toStdString();
    setup.sequences = 2;
    runner.setSetup(setup);
    PatchingPane pane(&runner);
    pane.resize(1100, 700);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(pane.hasResult(), fixtures::kEventuallyMs);
    QVERIFY2(pane.promptText().contains("Click a cell"), qPrintable(pane.promptText()));
    // resid_pre grid: row = layer, column = position. Click layer 0 at position 2 (the first name).
    auto* map = qobject_cast<QCPColorMap*>(pane.plot()->plottable(0));
    const QPoint cell(static_cast<int>(map->keyAxis()->coordToPixel(2)),
                      static_cast<int>(map->valueAxis()->coordToPixel(0)));
    QTest::mouseClick(pane.plot(), Qt::LeftButton, {}, cell);
    const QString text = pane.promptText();
    QVERIFY2(text.contains("background:#ffd54f"), qPrintable(text));  // one token marked …
    QCOMPARE(text.count("background:#ffd54f"), 2);  // … in the clean and the corrupted prompt
    QVERIFY2(text.contains("activation") && text.contains("attribution"), qPrintable(text));
    // Another model: the cell chosen was of the one before's grid; the new one's starts with none.
    const std::string other = m_dir.filePath("tiny-gpt2-copy").toStdString();  // the same, as another folder
    std::filesystem::copy(NF_SOURCE_DIR "/resources/tiny-gpt2", other,
                          std::filesystem::copy_options::recursive);
    setup.modelFolder = other;
    runner.setSetup(setup);
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(pane.hasResult() || pane.hasFailed(), fixtures::kEventuallyMs);
    QVERIFY2(!pane.hasFailed(), qPrintable(pane.statusText()));
    QVERIFY2(pane.promptText().contains("Click a cell"), qPrintable(pane.promptText()));
  }

  void figuresExportAsValidFilesWithTheirTitles() {
    AnalysisRunner runner;
    runner.setSetup(smallSetup());
    HeadsPane pane(&runner);
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(pane.hasResult(), fixtures::kEventuallyMs);
    const QString title = plotTitle(pane.heatMaps());
    QVERIFY(!title.isEmpty());
    QString error;
    const QString base = m_dir.filePath("heads");

    QVERIFY2(exportPlot(pane.heatMaps(), base + ".png", &error), qPrintable(error));
    const QByteArray png = readAll(base + ".png");
    QVERIFY(png.startsWith("\x89PNG\r\n\x1a\n"));
    QVERIFY(png.size() > 10000);
    QImage image(base + ".png");
    QVERIFY(!image.isNull());
    QCOMPARE(image.text("Title"), title);
    QVERIFY2(image.text("Source").contains("step: -1") || image.text("Source").contains("step: saved model"),
             qPrintable(image.text("Source")));  // what the figure is of

    QVERIFY2(exportPlot(pane.heatMaps(), base + ".svg", &error), qPrintable(error));
    const QByteArray svg = readAll(base + ".svg");
    QVERIFY(svg.startsWith("<?xml"));
    QVERIFY(svg.size() > 10000);
    QVERIFY(QSvgRenderer(base + ".svg").isValid());
    QVERIFY(svg.contains(("<title>" + title.toHtmlEscaped() + "</title>").toUtf8()));
    QVERIFY(svg.contains("image-rendering:pixelated"));  // heat-map cells as blocks, not blurred
    QVERIFY(svg.contains(("model: " + m_model).toUtf8()));

    QVERIFY2(exportPlot(pane.heatMaps(), base + ".pdf", &error), qPrintable(error));
    const QByteArray pdf = readAll(base + ".pdf");
    QVERIFY(pdf.startsWith("%PDF-"));
    QVERIFY(pdf.size() > 5000);
    QVERIFY(pdf.trimmed().endsWith("%%EOF"));
    // Qt writes the title into the info dictionary as a literal UTF-16BE string, ( ) \\ escaped.
    QByteArray utf16("/Title (\xfe\xff", 10);
    for (QChar ch : title)
      for (char byte : {static_cast<char>(ch.unicode() >> 8), static_cast<char>(ch.unicode() & 0xff)}) {
        if (byte == '(' || byte == ')' || byte == '\\') utf16 += '\\';
        utf16 += byte;
      }
    QVERIFY2(pdf.contains(utf16), "the PDF's metadata lacks the title");

    QVERIFY2(exportPlot(pane.heatMaps(), base + ".csv", &error), qPrintable(error));
    QList<QByteArray> lines = readAll(base + ".csv").trimmed().split('\n');
    // The title and the provenance as comment lines, then the header and the data.
    QCOMPARE(lines.first(), "# " + title.toUtf8());
    QVERIFY(lines.contains("# model: " + m_model.toUtf8()));
    QVERIFY(lines.contains("# analysis: heads"));
    while (lines.first().startsWith('#')) lines.removeFirst();
    QCOMPARE(lines.first(), QByteArray("series,x,y,value"));
    QCOMPARE(lines.size(), 1 + 3 * 4 * 2);  // three maps of 4 layers × 2 heads

    QVERIFY(!exportPlot(pane.heatMaps(), base + ".bmp", &error));
    QVERIFY(error.contains("bmp"));
    QVERIFY(!QFile::exists(base + ".bmp"));
  }

  void switchingToGermanChangesVisibleStringsAtOnce() {
    MainWindow window;
    window.show();
    QAction* start = toolbarAction(window, 0);
    QCOMPARE(start->text(), QString("Start"));
    window.setLanguage("de");
    QTRY_COMPARE_WITH_TIMEOUT(start->text(), QString("Starten"), fixtures::kEventuallyMs);
    QCOMPARE(window.timeline()->parentWidget()->windowTitle(), QString("Zeitleiste der Entfernungen"));
    QVERIFY2(window.statusText().contains("Schritt 0 / 500"), qPrintable(window.statusText()));
    QCOMPARE(plotTitle(window.trainingView()->lossPlot()), QString("Trainingsverlust"));
    QCOMPARE(QSettings().value("language").toString(), QString("de"));
    window.setLanguage("en");
    QTRY_COMPARE_WITH_TIMEOUT(start->text(), QString("Start"), fixtures::kEventuallyMs);
    QCOMPARE(plotTitle(window.trainingView()->lossPlot()), QString("Training loss"));
  }

  void badInputGetsADialogNamingTheFileAndLosesNothing() {
    MainWindow window;
    window.show();
    const nf::Schedule before = window.timeline()->editor()->schedule();
    const QString schedule = m_dir.filePath("broken-schedule.json");
    {
      QFile f(schedule);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(
          R"({"format": "normfree-schedule", "version": 1, "events": [{"step": 10, "site": "LN_xyz", "layer": 0}]})");
    }
    QVERIFY(!window.loadSchedule(schedule));
    QMessageBox* box = openMessageBox(&window);
    QVERIFY(box);
    QVERIFY2(
        box->informativeText().contains("broken-schedule.json") && box->informativeText().contains("LN_xyz"),
        qPrintable(box->informativeText()));
    box->close();
    QCOMPARE(window.timeline()->editor()->schedule(), before);

    const QString missing = m_dir.filePath("no-such.bin");
    QVERIFY(!window.setDatasets(missing, m_val, QString()));
    box = openMessageBox(&window);
    QVERIFY(box);
    QVERIFY2(box->informativeText().contains("no-such.bin"), qPrintable(box->informativeText()));
    box->close();

    QVERIFY(!window.openModelFolder(m_dir.filePath("not-a-model")));
    QCOMPARE(window.currentFolder(), m_model);
  }
};

QTEST_MAIN(TestWorkbench)
#include "tst_workbench.moc"

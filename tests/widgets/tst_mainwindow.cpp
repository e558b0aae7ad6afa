// The main window opens model folders, shows their shape and norm state, reports bad folders without
// losing what was open, and speaks German when asked to.
#include <QFile>
#include <QJsonObject>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProcess>
#include <QSettings>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTranslator>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "timeline/TimelineWidget.h"
#include "views/ModelInfoView.h"
#include "views/QCustomPlotInclude.h"
#include "views/RunSetupView.h"
#include "views/TrainingView.h"
#include "widget_fixtures.h"
#include "window/MainWindow.h"

class TestMainWindow : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;

  QString makeModel(const QString& name, int layers, const QString& family = "gpt2") {
    const QString folder = m_dir.filePath(name);
    QProcess cli;
    cli.start(NF_CLI, {"init", "--out", folder, "--overwrite", "--family", family, "--layers",
                       QString::number(layers), "--heads", "2", "--d-model", "16", "--context", "8",
                       "--vocab", "50"});
    if (!cli.waitForFinished(60000) || cli.exitCode() != 0)
      qFatal("normfree-cli init failed: %s", cli.readAllStandardError().constData());
    return folder;
  }

  static QMessageBox* openMessageBox(QWidget* parent) {
    for (QMessageBox* box : parent->findChildren<QMessageBox*>())
      if (box->isVisible()) return box;
    return nullptr;
  }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    qputenv("NF_BUNDLED_MODEL", "");  // no model opens by itself: each test opens its own
  }

  void showsShapeAndNormState_data() {
    QTest::addColumn<int>("layers");
    QTest::newRow("one block") << 1;
    QTest::newRow("three blocks") << 3;
  }

  void showsShapeAndNormState() {
    QFETCH(int, layers);
    const QString folder = makeModel(QString("m%1").arg(layers), layers);
    MainWindow window;
    QVERIFY(window.openModelFolder(folder));
    QTableWidget* table = window.modelInfoView()->siteTable();
    QCOMPARE(table->rowCount(), layers + 1);
    QCOMPARE(table->columnCount(), 3);
    QCOMPARE(table->item(0, 0)->text(), QString("LayerNorm"));
    QCOMPARE(table->item(layers, 0)->toolTip(), QString("LN_f"));
    auto labels = window.modelInfoView()->findChildren<QLabel*>();
    bool shapeShown = false;
    for (QLabel* l : labels)
      shapeShown |= l->text().startsWith(QString("gpt2 · %1 layers · 2 heads · d_model 16").arg(layers));
    QVERIFY(shapeShown);
  }

  // A training plot's Reset View gives the step range back to the timeline's automatic choice: it had set
  // the whole budget and left the view pinned there, no longer following the run.
  void resetViewOfATrainingPlotFollowsTheRunAgain() {
    MainWindow window;
    QVERIFY(window.openModelFolder(makeModel("reset-view", 2)));
    window.timeline()->setViewRange(10, 30);  // the user zoomed
    QVERIFY(!window.timeline()->viewIsAutomatic());
    QCOMPARE(window.trainingView()->lossPlot()->xAxis->range().upper, 30.0);
    QVERIFY(QMetaObject::invokeMethod(
        window.trainingView()->lossPlot()->property("xRangeOwner").value<QObject*>(),
        "resetXRange"));  // what Reset View in the plot's menu calls
    QVERIFY(window.timeline()->viewIsAutomatic());
    QVERIFY(window.trainingView()->lossPlot()->xAxis->range().upper > 30.0);  // the draft's whole budget
    window.timeline()->setViewRange(window.trainingView()->lossPlot()->xAxis->range().lower,
                                    window.trainingView()->lossPlot()->xAxis->range().upper);
    QVERIFY(window.timeline()->viewIsAutomatic());  // the same range again is no zoom
  }

  void showsTheFamilyAndItsOwnNorm() {
    MainWindow window;
    QVERIFY(window.openModelFolder(makeModel("llama", 2, "llama")));
    QCOMPARE(window.modelInfoView()->siteTable()->item(0, 0)->text(), QString("RMSNorm"));
    bool shapeShown = false;
    for (QLabel* l : window.modelInfoView()->findChildren<QLabel*>())
      shapeShown |= l->text().startsWith("llama · 2 layers");
    QVERIFY(shapeShown);
  }

  void showsFakeLnScales() {
    const QString folder = makeModel("fake", 2);
    fixtures::setNormSites(folder, {{"LN_v.1", QJsonObject{{"kind", "fakeln"},
                                                           {"scale", 2.5},
                                                           {"scale_pos0", 7.0},
                                                           {"pos0_treatment", true},
                                                           {"eot_treatment", true}}}});

    MainWindow window;
    QVERIFY(window.openModelFolder(folder));
    QCOMPARE(window.modelInfoView()->siteTable()->item(1, 1)->text(),
             QString("FakeLN\ns = 2.5 · pos 0: 7 · EOT"));
    QCOMPARE(window.modelInfoView()->siteTable()->item(1, 1)->toolTip(), QString("LN_v.1"));
  }

  void badFolderIsReportedAndKeepsTheOpenModel() {
    const QString good = makeModel("good", 1);
    const QString bad = m_dir.filePath("bad");
    QVERIFY(QDir().mkpath(bad));
    QFile(bad + "/config.json").open(QIODevice::WriteOnly);  // empty: not valid JSON
    MainWindow window;
    window.show();
    QVERIFY(window.openModelFolder(good));
    QVERIFY(!window.openModelFolder(bad));
    QMessageBox* box = openMessageBox(&window);
    QVERIFY(box);
    QVERIFY2(
        box->informativeText().contains("config.json") && box->informativeText().contains("not valid JSON"),
        qPrintable(box->informativeText()));
    QCOMPARE(window.currentFolder(), good);
    QCOMPARE(window.modelInfoView()->siteTable()->rowCount(), 2);
    box->close();

    // A run whose checkpoint pointer is broken (and whose model is not here): refused before the window
    // lets go of the model. It had switched to the run's plots and kept the model's title and setup.
    const std::string run = m_dir.filePath("broken-run").toStdString();
    nf::RunConfig config;
    config.model = m_dir.filePath("gone").toStdString();
    config.trainData = config.model + "/train.bin";
    QVERIFY(QDir().mkpath(QString::fromStdString(nf::run::checkpointsPath(run))));
    nf::writeRunConfig(run, config);
    std::ofstream(nf::run::metricsPath(run)) << nf::metricsStartRecord().dump() << "\n"
                                             << R"({"type": "step", "step": 1, "loss": 3.0})"
                                             << "\n";
    std::ofstream(nf::run::latestPointerPath(run)) << "../../elsewhere\n";
    const QString title = window.windowTitle();
    QVERIFY(!window.openRun(QString::fromStdString(run)));
    QCOMPARE(window.windowTitle(), title);
    QCOMPARE(window.currentFolder(), good);
    QCOMPARE(window.trainingView()->plottedSteps(), 0);
  }

  void recentFoldersAreRemembered() {
    const QString folder = makeModel("recent", 1);
    MainWindow window;
    QVERIFY(window.openModelFolder(folder));
    QCOMPARE(QSettings().value("recentModelFolders").toStringList().first(), folder);
  }

  // File › Open Bundled Model lists the models shipped in resources/ and opens the one chosen.
  void opensABundledModelFromTheFileMenu() {
    MainWindow window;
    QMenu* bundled = nullptr;
    for (QMenu* menu : window.findChildren<QMenu*>())
      if (menu->title() == "Open &Bundled Model") bundled = menu;
    QVERIFY(bundled);
    QCOMPARE(bundled->actions().size(), 2);
    QAction* llama = nullptr;
    for (QAction* a : bundled->actions())
      if (a->text().startsWith("Tiny LLaMA")) llama = a;
    QVERIFY(llama);
    llama->trigger();
    QCOMPARE(QDir(window.currentFolder()).dirName(), QString("tiny-llama"));
    QVERIFY(window.windowTitle().startsWith("tiny-llama"));
    QCOMPARE(window.modelInfoView()->siteTable()->item(0, 0)->text(), QString("RMSNorm"));

    // The run setup plans with the model's real shape (grouped-query attention, SwiGLU's width), and its
    // parameters are the architecture's: the embedding, per block q and o [D, D], k and v [D, kv·dh], gate,
    // up and down [D, F] and two RMSNorm γ, and the final γ (tied unembedding), counted from config.json.
    QFile configFile(window.currentFolder() + "/config.json");
    QVERIFY(configFile.open(QIODevice::ReadOnly));
    const auto config = nlohmann::json::parse(configFile.readAll().toStdString());
    const int64_t D = config["hidden_size"], V = config["vocab_size"], L = config["num_hidden_layers"];
    const int64_t F = config["intermediate_size"], kv = config["num_key_value_heads"];
    const int64_t kvWidth = kv * D / config["num_attention_heads"].get<int64_t>();
    const int64_t parameters = V * D + L * (2 * D * D + 2 * D * kvWidth + 3 * D * F + 2 * D) + D;
    auto* setup = window.findChild<RunSetupView*>();
    QVERIFY(setup && setup->modelShape() && setup->memoryPlan());
    QCOMPARE(setup->modelShape()->kvHeads(), static_cast<int>(kv));
    QCOMPARE(setup->modelShape()->mlpHidden(), static_cast<int>(F));
    QCOMPARE(setup->memoryPlan()->estimate.parameters, parameters);
  }

  void switchesToGerman() {
    QSettings().clear();  // no recent model to reopen: the window starts empty
    MainWindow window;
    QTranslator german;
    QVERIFY(german.load(":/i18n/normfree_de.qm"));
    QCoreApplication::installTranslator(&german);
    // LanguageChange events are posted: wait for them.
    QTRY_COMPARE_WITH_TIMEOUT(window.menuBar()->actions().first()->text(), QString("&Datei"),
                              fixtures::kEventuallyMs);
    auto showsText = [&](const QString& text) {
      for (QLabel* l : window.modelInfoView()->findChildren<QLabel*>())
        if (l->text() == text) return true;
      return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(showsText("Kein Modell geöffnet"), fixtures::kEventuallyMs);
    QCoreApplication::removeTranslator(&german);
    QTRY_COMPARE_WITH_TIMEOUT(window.menuBar()->actions().first()->text(), QString("&File"),
                              fixtures::kEventuallyMs);
    QTRY_VERIFY_WITH_TIMEOUT(showsText("No model open"), fixtures::kEventuallyMs);
  }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"

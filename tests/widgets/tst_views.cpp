// What the workbench shows must not mislead: training and evaluation losses on one value axis; the NMAE
// of an LN-free model on a fixed 0–100 % scale (it reads as zero, not as float noise), |DLA| and |DE| on one
// scale from zero; the Benchmarks pane shows what normfree-cli bench scores, and says so when its folder
// holds no task; panes never computed are not exported; the head detail names the step of the heat maps it
// belongs to, also after a refresh while training goes on; German mode leaves no tr() string untranslated
// (lupdate over the sources finds nothing unfinished or vanished in the .ts file) and shows no English source
// text that has a translation.
#include <QAbstractButton>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProcess>
#include <QRegularExpression>
#include <QSettings>
#include <QStatusBar>
#include <QTabBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <future>

#include "analysis/AnalysisRunner.h"
#include "analysis/BenchmarksPane.h"
#include "analysis/CalibrationPane.h"
#include "analysis/CircuitPane.h"
#include "analysis/HeadsPane.h"
#include "analysis/LogitLensPane.h"
#include "analysis/NormsPane.h"
#include "analysis/TokenViews.h"
#include "analysis/TokensPane.h"
#include "data/synthetic_benchmarks.h"
#include "run/RunSession.h"
#include "run/run_directory.h"
#include "run/snapshot.h"
#include "views/Plots.h"
#include "views/QCustomPlotInclude.h"
#include "views/RunSetupView.h"
#include "views/RunsView.h"
#include "views/TrackedPlot.h"
#include "views/TrainingView.h"
#include "widget_fixtures.h"
#include "window/MainWindow.h"

namespace {
// The (source, translation) pairs of a .ts file's finished messages (numerus forms: the first).
QList<QPair<QString, QString>> translatedMessages(const QString& tsFile) {
  QFile f(tsFile);
  if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(tsFile));
  const QString ts = QString::fromUtf8(f.readAll());
  auto unescape = [](QString s) {
    return s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&");
  };
  QList<QPair<QString, QString>> out;
  static const QRegularExpression message(
      "<source>(.*?)</source>.*?<translation>(?:\\s*<numerusform>)?(.*?)(?:</numerusform>.*?)?</translation>",
      QRegularExpression::DotMatchesEverythingOption);
  for (auto it = message.globalMatch(ts); it.hasNext();) {
    const auto m = it.next();
    out.append({unescape(m.captured(1)), unescape(m.captured(2))});
  }
  return out;
}
// A step record of a run whose loss (CE, total) is `loss` at `step`.
std::string stepRecord(int step, double loss) {
  return QString(R"({"type":"step","step":%1,"ce":%2,"aux":0,"loss":%2,"lr":0.001,"grad_norm":1,)"
                 R"("tokens_per_second":1000})")
      .arg(step)
      .arg(loss)
      .toStdString();
}

}  // namespace

class TestViews : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  QString m_model, m_train, m_val;

  AnalysisSetup setupFor(const QString& model) const {
    AnalysisSetup setup;
    setup.modelFolder = model.toStdString();
    setup.validationData = m_val.toStdString();
    setup.sequences = 4;
    return setup;
  }

  // The window's pane of type P (null when it has none).
  template <class P>
  static P* paneOf(const MainWindow& window) {
    for (AnalysisPane* pane : window.analysisPanes())
      if (auto* p = qobject_cast<P*>(pane)) return p;
    return nullptr;
  }

  // Starts a local run on the test data that trains on while a test looks at it (false: the data was
  // refused).
  bool startTraining(MainWindow& window, const QString& run) const {
    if (!window.setDatasets(m_train, m_val, QString())) return false;
    window.runSetup()->setMaxSteps(100000);
    window.startRun(m_dir.filePath(run));
    return true;
  }

  // The test model with every LN site a FakeLN of scale 1.5: LayerNorm-free.
  QString makeLayerNormFreeModel() {
    const QString folder = fixtures::makeModel(m_dir.filePath("ln-free"), 2);
    QJsonObject sites;
    for (int layer = 0; layer < 2; ++layer)
      for (const char* kind : {"LN_qk", "LN_v", "LN_mlp"})
        sites[QString("%1.%2").arg(kind).arg(layer)] = QJsonObject{{"kind", "fakeln"}, {"scale", 1.5}};
    sites["LN_f"] = QJsonObject{{"kind", "fakeln"}, {"scale", 1.5}};
    fixtures::setNormSites(folder, sites);
    return folder;
  }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    m_model = fixtures::makeModel(m_dir.filePath("tiny"), 4);
    m_train = fixtures::writeRandomTokens(m_dir.filePath("train.bin"), 40000, 50, 1);
    m_val = fixtures::writeRandomTokens(m_dir.filePath("val.bin"), 4000, 50, 2);
    qputenv("NF_BUNDLED_MODEL", m_model.toUtf8());
  }

  void aPlotsCsvKeepsEveryDigit() {
    QCustomPlot plot;
    QCPGraph* g = plot.addGraph();
    g->setName("loss");
    g->addData(1250001, 1.0 / 3);
    g->addData(2, 0.1);
    const QString csv = plotCsv(&plot);
    const QStringList lines = csv.split('\n');
    const int header = lines.indexOf("series,x,y,value");
    QVERIFY2(header >= 0 && lines.size() > header + 2, qPrintable(csv));
    QCOMPARE(lines[header + 1], QString("loss,2,0.1,"));
    const QStringList far = lines[header + 2].split(',');  // read back, the numbers are the plotted ones
    QVERIFY2(far[1].toDouble() == 1250001 && far[2].toDouble() == 1.0 / 3, qPrintable(lines[header + 2]));
  }

  void withNoRunNoStartingModelIsComputedBesideTheModel() {
    AnalysisInputs in;
    in.reference = nf::ModelSnapshot::load(m_model.toStdString());
    in.model = in.reference;  // a model folder opened, no run: the model now is the starting model
    QVERIFY(!in.runStart(in.request("norms")).has_value());     // nothing to compute or show beside it
    in.model = nf::ModelSnapshot::load(m_model.toStdString());  // another model now (a run's), equal or not
    bool computed = false;
    try {
      computed = in.runStart(in.request("norms")).has_value();
    } catch (const std::exception&) {
      computed = true;  // it computes: here, with no validation data given, an error that says so
    }
    QVERIFY(computed);
    std::vector<std::string> asked;  // a run served elsewhere: its server is asked for its start
    in.server = [&asked](const nf::AnalysisRequest&, const std::string& which, const nf::ProgressFn&) {
      asked.push_back(which);
      return nlohmann::json{{"answer of", which}};
    };
    QCOMPARE(in.runStart(in.request("norms")).value_or(nullptr), (nlohmann::json{{"answer of", "start"}}));
    QCOMPARE(asked, std::vector<std::string>{"start"});
  }

  // "Refresh analyses" queues every pane; another model opened before they are done drops those not yet
  // started (they had computed on it, unasked, with the first model's settings).
  void requestsNotYetStartedAreDroppedWhenAnotherModelIsOpened() {
    AnalysisRunner runner;
    runner.setSetup(setupFor(m_model));
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::vector<QString> ran;
    auto work = [&ran](const QString& name, std::shared_future<void> wait = {}) -> AnalysisWork {
      return [&ran, name, wait](const AnalysisInputs&, const nf::ProgressFn&) -> std::function<void()> {
        if (wait.valid()) wait.wait();
        return [&ran, name] { ran.push_back(name); };
      };
    };
    QSignalSpy started(&runner, &AnalysisRunner::started);
    runner.request("first", work("first", released));
    runner.request("queued", work("queued"));
    QTRY_COMPARE_WITH_TIMEOUT(started.count(), 1, fixtures::kEventuallyMs);  // "queued" waits behind it
    const AnalysisSetup other = setupFor(makeLayerNormFreeModel());
    runner.setSetup(other);
    release.set_value();
    runner.request("after", work("after"));  // run in the order asked: "queued" would come first
    QTRY_VERIFY_WITH_TIMEOUT(!ran.empty(), fixtures::kEventuallyMs);
    QCOMPARE(ran, std::vector<QString>{"after"});  // "first" was overtaken by the switch: not shown either
    // The same setup again (a training file chosen): nothing the analyses read changed, nothing is said.
    QSignalSpy inputs(&runner, &AnalysisRunner::inputsChanged);
    runner.setSetup(other);
    QCOMPARE(inputs.count(), 0);
  }

  // A job of the model before runs on after a switch (it cannot be cut short): its start and progress are
  // not said to the panes of the model now shown (they had shown it computing, Compute now disabled).
  void aJobOfTheModelBeforeIsNotSaidToComputeForTheNext() {
    AnalysisRunner runner;
    runner.setSetup(setupFor(m_model));
    std::promise<void> entered, switched;
    std::shared_future<void> switchedDone = switched.get_future().share();
    runner.request("old",
                   [&entered, switchedDone](const AnalysisInputs&,
                                            const nf::ProgressFn& progress) -> std::function<void()> {
                     entered.set_value();
                     switchedDone.wait();
                     nf::Progress p;
                     p.done = 1;
                     p.total = 2;
                     progress(p);
                     return {};
                   });
    QSignalSpy started(&runner, &AnalysisRunner::started), progressed(&runner, &AnalysisRunner::progress),
        finished(&runner, &AnalysisRunner::finished);
    entered.get_future().wait();  // the job runs (no event is handled here: its start is not yet said)
    runner.setSetup(setupFor(makeLayerNormFreeModel()));
    switched.set_value();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, fixtures::kEventuallyMs);
    QCOMPARE(started.count(), 0);
    QCOMPARE(progressed.count(), 0);
  }

  void calibrationPaneShowsTheCliMeasuresAndTheStartingModelOnlyBesideAnother() {
    const QString model = NF_SOURCE_DIR "/resources/tiny-gpt2";  // a tokenizer: prompts to continue
    AnalysisRunner runner;
    runner.setSetup(setupFor(model));
    CalibrationPane pane(&runner);
    QSignalSpy shown(&pane, &AnalysisPane::resultShown);
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() == 1 || pane.hasFailed(), fixtures::kEventuallyMs);
    QVERIFY2(!pane.hasFailed(), qPrintable(pane.statusText()));
    QProcess cli;
    cli.start(NF_CLI, {"analyze", "calibration", model, "--data", m_val, "--sequences", "4", "--length",
                       "128", "--prompt", ""});
    QVERIFY(cli.waitForFinished(-1));
    QCOMPARE(cli.exitCode(), 0);
    const nlohmann::json measured = nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
    const double loss = measured["models"][0]["summary"]["mean_loss"].get<double>();
    QVERIFY2(pane.summaryText().contains(QString::number(loss, 'f', 4)), qPrintable(pane.summaryText()));
    // No run: the model is its own starting model, shown once — one row of measures, one column of texts.
    QVERIFY2(!pane.summaryText().contains("starting model"), qPrintable(pane.summaryText()));
    QCOMPARE(pane.samples()->columnCount(), 2);         // the prompt, the model's continuation
    QCOMPARE(pane.samples()->rowCount(), 4);            // 2 prompts, greedy and sampled
    QCOMPARE(pane.plots()[0]->legend->itemCount(), 2);  // the model's bars and the diagonal
    // Other validation data for the same model: stale, as its settings (it had said the model changed).
    AnalysisSetup otherData = setupFor(model);
    otherData.validationData = m_train.toStdString();
    runner.setSetup(otherData);
    QVERIFY2(pane.isStale() && pane.statusText().contains("its settings have changed since"),
             qPrintable(pane.statusText()));
    // A model now that is not the starting one (a followed run's checkpoint) is shown beside it.
    runner.setSource(AnalysisSource::folder(model.toStdString()));
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() == 2 || pane.hasFailed(), fixtures::kEventuallyMs);
    QVERIFY2(!pane.hasFailed(), qPrintable(pane.statusText()));
    QVERIFY2(pane.summaryText().contains("starting model"), qPrintable(pane.summaryText()));
    QCOMPARE(pane.samples()->columnCount(), 3);
    QCOMPARE(pane.samples()->item(0, 1)->text(), pane.samples()->item(0, 2)->text());  // greedy: one model
    QCOMPARE(pane.plots()[0]->legend->itemCount(), 3);
  }

  void aLogAxisOverLessThanADecadeStillHasNumbers() {
    QCustomPlot plot;
    plot.resize(400, 300);
    useLogScaleTicks(plot.yAxis);
    plot.yAxis->setRange(2.1, 4.9);  // a removal's loss: no 1, 2, 5 or 10 in it
    plot.replot();
    QVERIFY2(plot.yAxis->tickVector().size() >= 2,
             qPrintable(QString::number(plot.yAxis->tickVector().size())));
  }

  void stepAxesTickWholeSteps() {
    MetricsStore m;
    for (int step = 1; step <= 20; ++step) QVERIFY(m.ingest(stepRecord(step, 3)));
    TrainingView view;
    view.resize(1900, 900);  // wide: QCustomPlot's own ticker stepped by 3.5 here
    view.showMetrics(m);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    for (QCustomPlot* plot : {view.lossPlot(), view.trackedPlot()->plot()}) {
      plot->xAxis->setRange(0, 22);
      plot->xAxis->ticker()->setTickCount(6);  // as a wide plot has: QCustomPlot steps by 3.5 here
      plot->xAxis->ticker()->setTickStepStrategy(QCPAxisTicker::tssMeetTickCount);
      plot->replot();
      QVERIFY(plot->xAxis->tickVector().size() >= 2);
      for (double tick : plot->xAxis->tickVector())
        QVERIFY2(tick == std::round(tick), qPrintable(QString::number(tick)));
    }
  }

  void aShortPlotLeavesOutItsSideLabelsButItsFigureHasThem() {
    TrainingView view;
    view.resize(600, 420);  // short: the learning-rate plot gets a strip
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QCustomPlot* plot = view.optimizerPlot();
    plot->replot();
    QVERIFY2(plot->height() < 250, qPrintable(QString::number(plot->height())));
    QCOMPARE(plot->yAxis2->label(), QString());  // "gradient norm" would run into the title
    QTemporaryDir dir;
    QString error;
    QVERIFY2(exportPlot(plot, dir.filePath("lr.svg"), &error), qPrintable(error));
    QFile svg(dir.filePath("lr.svg"));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    QVERIFY(svg.readAll().contains("gradient norm"));  // a figure of the export's size has room for it
    QCOMPARE(plot->yAxis2->label(), QString());        // and the screen keeps its fit
    plot->resize(600, 400);                            // room again: shown again
    plot->replot();
    QCOMPARE(plot->yAxis2->label(), QString("gradient norm"));
  }

  void theSmoothingSliderSmoothsAsTensorBoardDoes() {
    MetricsStore m;
    auto ingest = [&m](int first, int last) {
      for (int step = first; step <= last; ++step) QVERIFY(m.ingest(stepRecord(step, step % 2 ? 3.0 : 5.0)));
    };
    ingest(1, 20);
    TrainingView view;
    view.showMetrics(m);
    const QCPGraph* raw = view.lossPlot()->graph(0);
    const QCPGraph* smoothed = view.lossPlot()->graph(3);
    view.setSmoothing(0);  // the raw curve
    for (int i = 0; i < 20; ++i) QCOMPARE(smoothed->data()->at(i)->value, raw->data()->at(i)->value);
    // TensorBoard's smoothing: an EMA started at 0, divided by 1 − w^n (its bias towards the start).
    view.setSmoothing(0.6);
    ingest(21, 25);  // points that arrive later go on with the same weight
    view.showMetrics(m);
    double ema = 0;
    for (int i = 0; i < 25; ++i) {
      ema = 0.6 * ema + 0.4 * raw->data()->at(i)->value;
      QVERIFY(std::abs(smoothed->data()->at(i)->value - ema / (1 - std::pow(0.6, i + 1))) < 1e-12);
    }
  }

  // Every pane's controls and results must fit the right column of a 1280 × 720 screen, in German (the
  // longer labels): a pane wider than it makes the window wider than the screen.
  void theWindowFitsA1280PixelScreenInGermanWithEveryPaneComputed() {
    MainWindow window;
    window.setLanguage("de");
    window.resize(1280, 720);
    window.show();
    QVERIFY(
        window.openModelFolder(NF_SOURCE_DIR "/resources/tiny-gpt2"));  // a tokenizer: every pane computes
    const QList<AnalysisPane*> panes = window.analysisPanes();
    for (AnalysisPane* pane : panes) pane->refresh();
    QTRY_VERIFY_WITH_TIMEOUT(std::all_of(panes.begin(), panes.end(),
                                         [](AnalysisPane* p) { return p->hasResult() || p->hasFailed(); }),
                             fixtures::kEventuallyMs);
    for (AnalysisPane* pane : panes) QVERIFY2(pane->hasResult(), qPrintable(pane->statusText()));
    const QSize least = window.minimumSizeHint();
    QVERIFY2(least.width() <= 1280 && least.height() <= 720,
             qPrintable(QString("the window needs %1 × %2").arg(least.width()).arg(least.height())));
    // Every tab bar shows all its tabs, none behind scroll buttons (nine panes' tabs in one dock did).
    auto overflowing = [&window] {
      QStringList out;
      for (QTabBar* bar : window.findChildren<QTabBar*>())
        if (bar->isVisible() && bar->count() > 1 && bar->sizeHint().width() > bar->width())
          out << QString("%1 … (%2 px in %3)")
                     .arg(bar->tabText(0))
                     .arg(bar->sizeHint().width())
                     .arg(bar->width());
      return out.join(", ");
    };
    QTRY_VERIFY2_WITH_TIMEOUT(overflowing().isEmpty(), qPrintable(overflowing()), fixtures::kEventuallyMs);
    // No vertical axis prints its labels over each other (a log axis's evenly stepped ones crowded its top
    // decade: 0.01, 0.0125, 0.015).
    for (AnalysisPane* pane : panes) {
      window.raisePane(pane);
      QCoreApplication::processEvents();
      for (QCustomPlot* plot : pane->plots()) {
        plot->replot();
        for (QCPAxisRect* rect : plot->axisRects())
          for (QCPAxis* axis : rect->axes(QCPAxis::atLeft | QCPAxis::atRight)) {
            if (!axis->visible() || !axis->tickLabels() || !plot->isVisible()) continue;
            const QVector<double> ticks = axis->tickVector();
            const int height = QFontMetrics(axis->tickLabelFont()).height();
            for (int i = 1; i < ticks.size(); ++i) {
              const double gap = std::abs(axis->coordToPixel(ticks[i]) - axis->coordToPixel(ticks[i - 1]));
              QVERIFY2(gap >= height, qPrintable(QString("%1: %2 and %3 are %4 px apart")
                                                     .arg(plotTitle(plot), QString::number(ticks[i - 1]),
                                                          QString::number(ticks[i]), QString::number(gap))));
            }
          }
      }
    }
    window.setLanguage("en");
  }

  // On a short screen the training plots do not squash into strips: the loss plot stays on top and the
  // others go into tabs below it, each as tall as the tab area; with room again, one under another.
  void shortTrainingViewsPutThePlotsBelowTheLossInTabs() {
    {  // made short before it is shown, as in a window on a small screen: the loss plot keeps half
      TrainingView view;
      view.resize(600, 420);
      view.show();
      QVERIFY(QTest::qWaitForWindowExposed(&view));
      QVERIFY(view.isCompact());
      QTRY_VERIFY2(view.lossPlot()->height() >= 150, qPrintable(QString::number(view.lossPlot()->height())));
    }
    TrainingView view;
    view.resize(600, 1000);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QTRY_VERIFY(!view.isCompact());
    QVERIFY(view.optimizerPlot()->isVisible() && view.scalesPlot()->isVisible());
    view.resize(600, 420);  // a 720-pixel screen's central column
    QVERIFY(view.isCompact());
    QTRY_VERIFY(view.lossPlot()->height() >= 150);
    QVERIFY(view.scalesPlot()->isVisible() != view.optimizerPlot()->isVisible());  // one tab in front
    QTRY_VERIFY(std::max(view.scalesPlot()->height(), view.optimizerPlot()->height()) >= 120);
    view.resize(600, 1000);
    QVERIFY(!view.isCompact());
    QVERIFY(view.optimizerPlot()->isVisible() && view.scalesPlot()->isVisible());
    QVERIFY(!view.showsTracked());  // nothing tracked: not shown in either arrangement
  }

  void trainAndEvalLossesShareOneValueAxis() {
    MetricsStore m;
    for (int step = 1; step <= 20; ++step) QVERIFY(m.ingest(stepRecord(step, 4.0 - 0.1 * step)));
    for (int step : {10, 20})
      QVERIFY(m.ingest(QString(R"({"type":"eval","step":%1,"file":"val.bin","mean_loss":%2})")
                           .arg(step)
                           .arg(5.0 - 0.1 * step)
                           .toStdString()));
    TrainingView view;
    view.setXRange(0, 20);  // in the window the timeline sets it
    view.showMetrics(m);
    QCustomPlot* loss = view.lossPlot();
    int withData = 0;
    bool evalShown = false;
    for (int i = 0; i < loss->graphCount(); ++i) {
      QCPGraph* g = loss->graph(i);
      if (g->dataCount() == 0) continue;
      ++withData;
      QCOMPARE(g->valueAxis(), loss->yAxis);
      evalShown = evalShown || g->name().contains("val.bin");
    }
    QVERIFY(evalShown);
    QVERIFY(withData >= 3);  // raw and smoothed cross-entropy, the evaluation
    // The axis spans both: the evaluation's 4.0 and the training loss's 2.0 are inside it.
    QVERIFY(loss->yAxis->range().contains(4.0) && loss->yAxis->range().contains(2.0));
    QVERIFY(!loss->yAxis2->visible());
  }

  void nmaeOfALayerNormFreeModelIsOnAFixedZeroToHundredScale() {
    AnalysisRunner runner;
    runner.setSetup(setupFor(makeLayerNormFreeModel()));
    HeadsPane pane(&runner);
    pane.resize(1000, 800);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(pane.hasResult() || pane.hasFailed(), fixtures::kEventuallyMs);
    QVERIFY2(pane.hasResult(), qPrintable(pane.statusText()));
    const auto range = pane.nmaeRange();
    QCOMPARE(range.first, 0.0);
    QCOMPARE(range.second, 100.0);
    // And the map holds float noise only: every cell reads as zero on that scale.
    auto* nmae = qobject_cast<QCPColorMap*>(pane.heatMaps()->plottable(2));
    QVERIFY(nmae);
    for (int head = 0; head < nmae->data()->keySize(); ++head)
      for (int layer = 0; layer < nmae->data()->valueSize(); ++layer)
        QVERIFY2(nmae->data()->cell(head, layer) < 1e-2,
                 qPrintable(QString::number(nmae->data()->cell(head, layer))));
    // Mean |DLA| and |DE| (never negative) share one scale from zero to the largest of either (issue 36:
    // a diverging scale spent half its colours on values that cannot occur).
    auto* dla = qobject_cast<QCPColorMap*>(pane.heatMaps()->plottable(0));
    auto* de = qobject_cast<QCPColorMap*>(pane.heatMaps()->plottable(1));
    QCOMPARE(dla->dataRange().lower, 0.0);
    QCOMPARE(dla->dataRange().upper, de->dataRange().upper);
    double largest = 0;
    for (QCPColorMap* map : {dla, de})
      for (int head = 0; head < map->data()->keySize(); ++head)
        for (int layer = 0; layer < map->data()->valueSize(); ++layer)
          largest = std::max(largest, map->data()->cell(head, layer));
    QCOMPARE(dla->dataRange().upper, largest);
  }

  void benchmarksPaneShowsTheScoresOfTheCli() {
    const QString model = NF_SOURCE_DIR "/resources/tiny-gpt2";  // a model with a tokenizer
    const QString tasks = m_dir.filePath("bench");
    nf::writeSyntheticBenchmarks(tasks.toStdString(), 3, 30);
    AnalysisRunner runner;
    runner.setSetup(setupFor(model));
    BenchmarksPane pane(&runner);
    pane.setTaskFolder(m_dir.filePath("no-tasks-here"));
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(pane.hasResult() || pane.hasFailed(), fixtures::kEventuallyMs);
    QVERIFY2(pane.hasFailed() && pane.statusText().contains("no-tasks-here"), qPrintable(pane.statusText()));
    pane.setTaskFolder(tasks);
    pane.setItemLimit(20);
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(pane.hasResult() && !pane.hasFailed(), fixtures::kEventuallyMs);

    QProcess cli;
    cli.start(NF_CLI, {"bench", "all", model, "--data", tasks, "--limit", "20"});
    QVERIFY(cli.waitForFinished(-1));
    QCOMPARE(cli.exitCode(), 0);
    const nlohmann::json scores = nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
    QCOMPARE(scores["tasks"].size(), size_t{3});                     // hellaswag, winogrande, lambada
    auto* bars = qobject_cast<QCPBars*>(pane.plot()->plottable(2));  // the model now's
    QCOMPARE(bars->data()->size(), 3);
    for (int t = 0; t < 3; ++t) {
      const nlohmann::json& r = scores["tasks"][t]["results"][0];
      const double expected = 100 * (r.contains("acc_norm") ? r["acc_norm"] : r["acc"]).get<double>();
      QVERIFY2(std::abs(bars->data()->at(t)->value - expected) < 1e-9,
               qPrintable(QString("%1 vs %2").arg(bars->data()->at(t)->value).arg(expected)));
      QCOMPARE(bars->data()->at(t)->key, double(t));  // alone, centred on its task
    }
    // No trainer: the model now is the starting model, shown once; nothing to disagree with.
    QVERIFY(qobject_cast<QCPBars*>(pane.plot()->plottable(0))->data()->isEmpty());
    QCOMPARE(pane.plot()->legend->itemCount(), 1);
    QVERIFY2(!plotTitle(pane.plot()).contains("starting model"), qPrintable(plotTitle(pane.plot())));
    QCOMPARE(pane.disagreements()->rowCount(), 0);
    QVERIFY2(pane.disagreementsText().startsWith("60 items; compare with a model"),
             qPrintable(pane.disagreementsText()));  // 3 tasks of 20
    // Its CSV names the tasks behind the x values and carries the standard errors.
    const QString csv = plotCsv(pane.plot());
    QVERIFY2(csv.contains("# x: 0 = hellaswag (acc_norm); 1 = winogrande; 2 = lambada"), qPrintable(csv));
    QVERIFY2(csv.contains("model now ± error,"), qPrintable(csv));
    // Tasks of one item: no standard error to draw (null in the result), where ± 0 had read as certainty.
    const QString single = m_dir.filePath("bench-1");
    nf::writeSyntheticBenchmarks(single.toStdString(), 3, 1);
    pane.setTaskFolder(single);
    pane.refresh();
    auto* errors = qobject_cast<QCPErrorBars*>(pane.plot()->plottable(3));
    QTRY_VERIFY_WITH_TIMEOUT(
        pane.hasFailed() || (errors->dataCount() == 3 && std::isnan(errors->data()->at(0).errorPlus)),
        fixtures::kEventuallyMs);
    QVERIFY2(!pane.hasFailed(), qPrintable(pane.statusText()));
    pane.setTaskFolder(tasks);
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(pane.hasFailed() || !std::isnan(errors->data()->at(0).errorPlus),
                             fixtures::kEventuallyMs);
    // A model to compare with gets its own bars and its column.
    pane.setControlFolder(model);
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(pane.disagreements()->columnCount() == 5 || pane.hasFailed(),
                             fixtures::kEventuallyMs);
    QVERIFY2(!pane.hasFailed(), qPrintable(pane.statusText()));
    auto* control = qobject_cast<QCPBars*>(pane.plot()->plottable(4));
    QCOMPARE(control->data()->size(), 3);
    QCOMPARE(pane.plot()->legend->itemCount(), 2);  // in the bars' order: the compared model, the model now
    QCOMPARE(qobject_cast<QCPPlottableLegendItem*>(pane.plot()->legend->item(0))->plottable(), control);
    QCOMPARE(control->data()->at(1)->value,
             qobject_cast<QCPBars*>(pane.plot()->plottable(2))->data()->at(1)->value);
    // The synthetic tasks (no folder chosen) say so in the title and at each bar: they borrow the real
    // benchmarks' names and score near 100 % on a model trained on the corpus they come from.
    QVERIFY(!plotTitle(pane.plot()).contains("synthetic"));
    QVERIFY(!pane.isStale());
    pane.setControlFolder(QString());  // the bars shown are still the comparison's: marked so
    QVERIFY(pane.isStale());
    QVERIFY2(pane.statusText().contains("settings have changed"), qPrintable(pane.statusText()));
    pane.setTaskFolder(QString());
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(plotTitle(pane.plot()).contains("synthetic") || pane.hasFailed(),
                             fixtures::kEventuallyMs);
    QVERIFY2(!pane.hasFailed(), qPrintable(pane.statusText()));
    QVERIFY2(plotCsv(pane.plot()).contains("0 = hellaswag (acc_norm) (synthetic)"),
             qPrintable(plotCsv(pane.plot()).left(400)));
    QVERIFY(!pane.isStale());
    pane.setItemLimit(40);  // twice the items per task
    QVERIFY(pane.isStale());
    // Another model opened: the model compared with was the one before's choice, and goes with it.
    pane.setControlFolder(model);
    runner.setSetup(setupFor(makeLayerNormFreeModel()));
    QVERIFY(pane.controlFolder().isEmpty());
  }

  void logitLensPaneShowsTheCliFiguresAndOneCurveWithoutLayerNorm() {
    AnalysisRunner runner;
    runner.setSetup(setupFor(m_model));
    LogitLensPane pane(&runner);
    QSignalSpy shown(&pane, &AnalysisPane::resultShown);
    pane.setSequence(2);  // computes
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() == 1 || pane.hasFailed(), fixtures::kEventuallyMs);
    QVERIFY2(!pane.hasFailed(), qPrintable(pane.statusText()));

    QProcess cli;
    cli.start(NF_CLI, {"analyze", "logit-lens", m_model, "--data", m_val, "--sequences", "4", "--length",
                       "16", "--trace-sequence", "2", "--top", "5"});
    QVERIFY(cli.waitForFinished(-1));
    QCOMPARE(cli.exitCode(), 0);
    const nlohmann::json lens = nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
    const char* modes[] = {"recomputed", "frozen", "linear"};
    for (int m = 0; m < 3; ++m) {
      const QCPGraph* now = pane.curvePlot()->graph(2 * m);
      QCOMPARE(now->data()->size(), 5);  // 4 blocks' inputs and the final residual
      for (int p = 0; p < 5; ++p)
        QVERIFY(std::abs(now->data()->at(p)->value - lens["layers"][p][modes[m]]["ce"].get<double>()) < 1e-9);
    }
    // Hovering a cell names the target's rank as the CLI computed it.
    pane.setMode(nf::LensMode::Frozen);
    const int64_t rank = lens["trace"]["points"][1]["frozen"]["target_rank"][3].get<int64_t>();
    QVERIFY2(pane.cellText(1, 3).contains(QString("rank %1").arg(rank)), qPrintable(pane.cellText(1, 3)));
    const int32_t top = lens["trace"]["points"][1]["frozen"]["top_ids"][3][0].get<int32_t>();
    QCOMPARE(pane.topTokenText(1, 3), QString("#%1").arg(top));  // no tokenizer: ids
    // No run: the model is its own starting model, drawn once; the grid offers no other model.
    for (int m = 0; m < 3; ++m) QVERIFY(pane.curvePlot()->graph(2 * m + 1)->data()->isEmpty());
    QCOMPARE(pane.curvePlot()->legend->itemCount(), 3);
    pane.showStartingModel(true);
    QVERIFY2(!plotTitle(pane.gridPlot()).contains("starting model"), qPrintable(plotTitle(pane.gridPlot())));

    // Without LayerNorm the three modes are one curve. (Another model: the grid's choice of the starting
    // model was the one before's.)
    runner.setSetup(setupFor(makeLayerNormFreeModel()));
    QVERIFY(!pane.startingModelShown());
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() == 2 || pane.hasFailed(), fixtures::kEventuallyMs);
    QVERIFY2(!pane.hasFailed(), qPrintable(pane.statusText()));
    for (int m = 1; m < 3; ++m)
      for (int p = 0; p < 3; ++p)
        QCOMPARE(pane.curvePlot()->graph(2 * m)->data()->at(p)->value,
                 pane.curvePlot()->graph(0)->data()->at(p)->value);
  }

  void circuitPaneDrawsTheCliCircuitAndOpensItsHeads() {
    const QString model = NF_SOURCE_DIR "/resources/tiny-gpt2";  // a model with a tokenizer: IOI prompts
    AnalysisRunner runner;
    runner.setSetup(setupFor(model));
    CircuitPane pane(&runner);
    pane.resize(900, 800);
    pane.show();
    QVERIFY(!pane.saveCircuit(m_dir.filePath("none.json"), nullptr));  // nothing computed yet
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(pane.hasResult() || pane.hasFailed(), fixtures::kEventuallyMs);
    QVERIFY2(!pane.hasFailed(), qPrintable(pane.statusText()));

    QProcess cli;
    cli.start(NF_CLI, {"analyze", "circuit", model, "--count", "96"});
    QVERIFY(cli.waitForFinished(-1));
    QCOMPARE(cli.exitCode(), 0);
    const nlohmann::json circuit = nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
    const QString saved = m_dir.filePath("circuit.json"), edges = m_dir.filePath("circuit.csv");
    QString error;
    QVERIFY2(pane.saveCircuit(saved, &error) && pane.saveCircuit(edges, &error), qPrintable(error));
    QFile file(saved);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const nlohmann::json shown = nlohmann::json::parse(file.readAll().toStdString());
    QCOMPARE(shown["circuit"]["edges"], circuit["circuit"]["edges"]);
    QCOMPARE(shown["edges"][0]["from"], circuit["edges"][0]["from"]);
    QCOMPARE(shown["edges"][0]["to"], circuit["edges"][0]["to"]);
    QFile csv(edges);
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QCOMPARE(csv.readLine(), QByteArray("from,to,score,measured,in_circuit\n"));

    // The slider sets how many edges are drawn. No run: one graph, the model's, no starting model beside it.
    pane.setShownEdges(5);
    QCOMPARE(pane.drawnEdges(CircuitPane::Now), 5);
    QVERIFY(pane.graphPlot(CircuitPane::Now)->isVisible() &&
            !pane.graphPlot(CircuitPane::Starting)->isVisible());
    QCOMPARE(pane.resultPlots().size(), 2);  // exported: the graph and the faithfulness curve
    QVERIFY2(!pane.summaryText().contains("starting model"), qPrintable(pane.summaryText()));
    // A head clicked is a head chosen.
    QSignalSpy chosen(&pane, &CircuitPane::headChosen);
    QTest::mouseClick(pane.graphPlot(CircuitPane::Now), Qt::LeftButton, {},
                      pane.nodeCenter(CircuitPane::Now, "L2H3"));
    QCOMPARE(chosen.count(), 1);
    QCOMPARE(chosen.first().at(0).toInt(), 2);
    QCOMPARE(chosen.first().at(1).toInt(), 3);
  }

  void panesNeverComputedAreNotExported() {
    MainWindow window;
    window.show();
    QVERIFY(window.setDatasets(m_train, m_val, QString()));
    NormsPane* norms = paneOf<NormsPane>(window);
    QVERIFY(norms);
    norms->refresh();
    QTRY_VERIFY_WITH_TIMEOUT(norms->hasResult() || norms->hasFailed(), fixtures::kEventuallyMs);
    QVERIFY2(norms->hasResult(), qPrintable(norms->statusText()));
    QCOMPARE(norms->plot()->legend->itemCount(), 2);  // no run: no starting model's lines beside the model
    const QString folder = m_dir.filePath("export");
    window.exportAllFigures(folder);
    const QStringList files = QDir(folder).entryList(QDir::Files);
    QCOMPARE(files.size(), 4);  // the one computed plot as PNG, SVG, PDF and CSV
    for (const char* suffix : {"png", "svg", "pdf", "csv"})
      QVERIFY2(files.contains(QString("residual_norms.") + suffix), qPrintable(files.join(", ")));
    // The status bar says what was left out.
    QVERIFY2(window.statusBar()->currentMessage().contains("Heads"),
             qPrintable(window.statusBar()->currentMessage()));
  }

  void aLocalRunTracksItsAnalysesIntoTheLogAndThePlot() {
    MainWindow window;
    window.show();
    window.runSetup()->setTrackedAnalyses({"sinks", "val-ce"});
    QVERIFY(!window.trainingView()->showsTracked());  // nothing tracked yet
    QVERIFY(startTraining(window, "tracked-run"));
    // Step 0 is measured before the first step trains: in metrics.jsonl and on the plot.
    QTRY_VERIFY_WITH_TIMEOUT(window.trainingView()->trackedPlot()->plottedPoints() >= 1,
                             fixtures::kEventuallyMs);
    QVERIFY(window.trainingView()->showsTracked());
    QCOMPARE(window.trainingView()->trackedPlot()->analysis(), std::string("sinks"));
    window.trainingView()->trackedPlot()->setAnalysis("val-ce");
    QCOMPARE(window.trainingView()->trackedPlot()->analysis(), std::string("val-ce"));
    QCOMPARE(window.trainingView()->trackedPlot()->plottedPoints(), 1);
    // File › Export writes it with the other training plots.
    QTRY_VERIFY_WITH_TIMEOUT(window.trainingView()->plottedSteps() > 0, fixtures::kEventuallyMs);
    QVERIFY(
        window.figures().resultPlots(true, nullptr).contains(window.trainingView()->trackedPlot()->plot()));
    window.session()->stop();
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->phase() != RunPhase::Running, fixtures::kEventuallyMs);
    QFile log(QString::fromStdString(nf::run::metricsPath(m_dir.filePath("tracked-run").toStdString())));
    QVERIFY(log.open(QIODevice::ReadOnly));
    int tracked = 0;
    for (const QByteArray& line : log.readAll().split('\n')) {
      const QJsonObject r = QJsonDocument::fromJson(line).object();
      if (r["type"] != "track") continue;
      ++tracked;
      QVERIFY(r["values"].toObject().contains("sinks") && r["values"].toObject().contains("val-ce"));
    }
    QVERIFY(tracked >= 1);
  }

  void twoRunsInOneFolderAreOverlaidEachWithItsEvents() {
    // Two removals of the same model under one folder, as the main job's removal and control are.
    const QString folder = m_dir.filePath("compared");
    nf::RunConfig a = fixtures::smallRemoval(m_model, m_train);
    a.optimizer.maxSteps = 12;
    a.schedule.events = {{1, 3, nf::EventAction::MakeFake, nf::SiteKind::Mlp, 0},
                         {2, 6, nf::EventAction::MakeFake, nf::SiteKind::Mlp, 1}};
    a.tracking.analyses = {"val-ce"};
    a.tracking.every = 4;
    a.tracking.sequences = 2;
    a.tracking.length = 16;
    nf::RunConfig b = a;
    b.schedule.events = {{1, 9, nf::EventAction::MakeFake, nf::SiteKind::Final, -1}};
    b.tracking.sequences = 3;  // its curves are of other data than a's: said in the legend
    // Evaluated on the validation set and a second one whose name comes first: the table shows the first
    // --eval's loss (it showed the file first by name, an out-of-distribution set).
    const QString second = m_dir.filePath("aaa-other.bin");
    QVERIFY(QFile::copy(m_train, second));
    a.evalData = {m_train.toStdString(), second.toStdString()};
    a.eval.tokens = 64;
    QVERIFY(nf::Trainer::start((folder + "/a").toStdString(), a)->run());
    QVERIFY(nf::Trainer::start((folder + "/b").toStdString(), b)->run());

    MainWindow window;
    window.show();
    QVERIFY(window.openRun(folder + "/a"));
    TrainingView* view = window.trainingView();
    auto graphNamed = [](QCustomPlot* plot, const QString& name) -> QCPGraph* {
      for (int i = 0; i < plot->graphCount(); ++i)
        if (plot->graph(i)->name() == name) return plot->graph(i);
      return nullptr;
    };
    auto eventLines = [](QCustomPlot* plot, Qt::PenStyle style) {
      int lines = 0;
      for (int i = 0; i < plot->itemCount(); ++i)
        if (auto* line = qobject_cast<QCPItemStraightLine*>(plot->item(i)))
          lines += line->pen().style() == style;
      return lines;
    };
    // The run shown and its sibling, ticked by default: both series, each with its own events.
    QTRY_VERIFY_WITH_TIMEOUT(view->plottedSteps() == 12, fixtures::kEventuallyMs);
    const auto overlaid = window.runsView()->overlaid();
    QCOMPARE(overlaid.size(), std::size_t{1});
    QCOMPARE(overlaid.front()->name, QString("b"));
    QCOMPARE(window.runsView()->table()->rowCount(), 2);
    QVERIFY2(window.runsView()->table()->item(0, 6)->text().contains(QFileInfo(m_train).fileName()),
             qPrintable(window.runsView()->table()->item(0, 6)->text()));
    QCOMPARE(window.runsView()->table()->item(0, 7)->text(),
             QString("finished"));  // not the record's "finish"
    // What each row's figures rest on, in its cells' tooltips: the model and the data.
    const QString rests = window.runsView()->table()->item(0, 1)->toolTip();
    QVERIFY2(rests.contains("model: " + m_model) && rests.contains("(64 tokens each)") &&
                 rests.contains("tracked on: " + m_train + " (2 sequences of 16 tokens)"),
             qPrintable(rests));
    const QCPGraph* theirs = graphNamed(view->lossPlot(), "b: cross-entropy");
    QVERIFY(theirs);
    QCOMPARE(theirs->dataCount(), 12);
    QCOMPARE(eventLines(view->lossPlot(), Qt::DashLine), 2);  // the run shown's: steps 3 and 6
    QCOMPARE(eventLines(view->lossPlot(), Qt::DotLine), 1);   // the sibling's: step 9
    // Their tracked analyses side by side: a at 0, 3, 4, 6, 8, 12; b at 0, 4, 8, 9, 12.
    QVERIFY(view->showsTracked());
    QCOMPARE(view->trackedPlot()->plottedPoints(), 6);
    const QCPGraph* theirTracked =
        graphNamed(view->trackedPlot()->plot(), "b (other data: " + m_train + ": 3 sequences of 16 tokens)");
    QVERIFY2(theirTracked, qPrintable(view->trackedPlot()->plot()->graph(0)->name()));
    QCOMPARE(theirTracked->dataCount(), 5);
    // A sibling that trains on streams onto the plots, and a run started beside them is listed (with its
    // figures), with no Refresh.
    nf::ResumeOverrides longer;
    longer.maxSteps = 16;
    QVERIFY(nf::Trainer::resume((folder + "/b").toStdString(), std::nullopt, longer)->run());
    QTRY_VERIFY_WITH_TIMEOUT(graphNamed(view->lossPlot(), "b: cross-entropy") &&
                                 graphNamed(view->lossPlot(), "b: cross-entropy")->dataCount() == 16,
                             fixtures::kEventuallyMs);
    QCOMPARE(window.runsView()->table()->item(1, 3)->text(), QString("16 of 16"));
    QVERIFY(nf::Trainer::start((folder + "/c").toStdString(), b)->run());
    QTRY_COMPARE_WITH_TIMEOUT(window.runsView()->table()->rowCount(), 3, fixtures::kEventuallyMs);
    QCOMPARE(window.runsView()->overlaid().size(), std::size_t{2});
    QVERIFY(graphNamed(view->lossPlot(), "c: cross-entropy"));
    QCOMPARE(window.runsView()->table()->item(0, 3)->text(), QString("12 of 12"));  // the run shown's own
    window.runsView()->table()->item(2, 0)->setCheckState(Qt::Unchecked);

    // Unticked, it leaves the plots; opening a model leaves no run's comparison behind.
    window.runsView()->table()->item(1, 0)->setCheckState(Qt::Unchecked);
    QVERIFY(!graphNamed(view->lossPlot(), "b: cross-entropy"));
    QCOMPARE(eventLines(view->lossPlot(), Qt::DotLine), 0);
    window.runsView()->table()->item(1, 0)->setCheckState(Qt::Checked);
    QVERIFY(graphNamed(view->lossPlot(), "b: cross-entropy"));
    QVERIFY(window.openModelFolder(m_model));
    QVERIFY(!graphNamed(view->lossPlot(), "b: cross-entropy"));
    QCOMPARE(window.runsView()->table()->rowCount(), 0);
  }

  void theTokenViewCoversTheWholeContextAsTheCliComputesIt() {
    AnalysisRunner runner;
    runner.setSetup(setupFor(m_model));
    TokensPane pane(&runner);
    pane.resize(900, 900);
    pane.show();
    QSignalSpy shown(&pane, &AnalysisPane::resultShown);
    pane.setHeads("L0H0, 1.1, L3H1");  // computes
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 1 || pane.hasFailed(), fixtures::kEventuallyMs);
    QVERIFY2(!pane.hasFailed(), qPrintable(pane.statusText()));
    // The whole context (the test model's 16 positions), every head asked for, the text whole.
    AttentionGrid* grid = pane.patterns();
    QCOMPARE(grid->length(), 16);
    QCOMPARE(grid->headCount(), 3);
    QCOMPARE(pane.dlaText()->tokenCount(), 16);
    QCOMPARE(pane.deText()->tokenCount(), 16);
    QVERIFY(grid->cellText(1, 15, 0).startsWith("L1H1 · query 15"));
    grid->lockQuery(15);
    QVERIFY2(grid->lockedText().startsWith("Query 15"), qPrintable(grid->lockedText()));

    QProcess cli;
    cli.start(NF_CLI,
              {"analyze", "tokens", m_model, "--data", m_val, "--head", "0.0", "--heads", "0.0,1.1,3.1"});
    QVERIFY(cli.waitForFinished(-1));
    QCOMPARE(cli.exitCode(), 0);
    const nlohmann::json answer = nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
    for (int h = 0; h < 3; ++h) {
      const std::vector<double> pattern = answer["patterns"][h]["pattern"].get<std::vector<double>>();
      for (int q = 0; q < 16; ++q)
        for (int k = 0; k <= q; ++k) QCOMPARE(grid->weight(h, q, k), pattern[q * 16 + k]);
    }
    // Exports: SVG with one vector rectangle per cell (not an image), CSV with one row per cell.
    const QString svg = m_dir.filePath("patterns.svg"), csv = m_dir.filePath("patterns.csv");
    QString error;
    QVERIFY2(grid->exportTo(svg, &error), qPrintable(error));
    QVERIFY2(grid->exportTo(csv, &error), qPrintable(error));
    QFile svgFile(svg), csvFile(csv);
    QVERIFY(svgFile.open(QIODevice::ReadOnly) && csvFile.open(QIODevice::ReadOnly));
    const QByteArray drawing = svgFile.readAll();
    QVERIFY(!drawing.contains("<image"));
    QVERIFY2(drawing.count("<rect") >= 3 * 16 * 17 / 2, qPrintable(QString::number(drawing.count("<rect"))));
    QCOMPARE(csvFile.readAll().count('\n'), 1 + 3 * 16 * 17 / 2);
    QVERIFY(pane.dlaText()->exportTo(m_dir.filePath("dla.svg"), &error));
    // Export All writes the three painted figures too (the window's FigureExport asks the pane for them).
    const QList<AnalysisPane::PaintedFigure> figures = pane.resultFigures();
    QCOMPARE(figures.size(), 3);
    QVERIFY2(figures[2].write(m_dir.filePath("de.png"), &error), qPrintable(error));
    QVERIFY(QFileInfo(m_dir.filePath("de.png")).size() > 0);
    // They say what they are of, as every export does.
    QVERIFY2(figures[0].write(m_dir.filePath("patterns-figure.csv"), &error), qPrintable(error));
    QFile figureCsv(m_dir.filePath("patterns-figure.csv"));
    QVERIFY(figureCsv.open(QIODevice::ReadOnly));
    QVERIFY(figureCsv.readAll().startsWith("# analysis: tokens\n# model: "));
    // Another model (2 layers): the heads named are the model's, so they go back to the first ones; its
    // pane had kept L3H1, in fields hidden until a result, and every compute failed "no head L3H1".
    runner.setSetup(setupFor(makeLayerNormFreeModel()));
    pane.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 2 || pane.hasFailed(), fixtures::kEventuallyMs);
    QVERIFY2(!pane.hasFailed(), qPrintable(pane.statusText()));
    QCOMPARE(pane.patterns()->headCount(), 2);
  }

  void theLogitLensComputesOnALocalRunAndTheCircuitOpensHeads() {
    MainWindow window;
    window.show();
    QVERIFY(startTraining(window, "lens-run"));
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->stepsDone() >= 2, fixtures::kEventuallyMs);
    LogitLensPane* lens = paneOf<LogitLensPane>(window);
    CircuitPane* circuit = paneOf<CircuitPane>(window);
    QVERIFY(lens && circuit);
    lens->refresh();
    QTRY_VERIFY_WITH_TIMEOUT(lens->hasResult() || lens->hasFailed(), fixtures::kEventuallyMs);
    QVERIFY2(!lens->hasFailed(), qPrintable(lens->statusText()));
    QVERIFY(lens->shownStep() >= 2);  // the running model, not the folder it started from
    // A run: its starting model's curves are drawn beside the model now's, dashed.
    QCOMPARE(lens->curvePlot()->graph(1)->data()->size(), lens->curvePlot()->graph(0)->data()->size());
    QCOMPARE(lens->curvePlot()->legend->itemCount(), 6);
    // A head chosen in the circuit graph is the Heads pane's head.
    Q_EMIT circuit->headChosen(1, 1);
    QCOMPARE(window.headsPane()->selectedLayer(), 1);
    QCOMPARE(window.headsPane()->selectedHead(), 1);
    window.session()->stop();
  }

  void theHeadDetailNamesTheHeatMapsStepAfterARefresh() {
    MainWindow window;
    window.show();
    QVERIFY(startTraining(window, "detail-run"));
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->stepsDone() >= 2, fixtures::kEventuallyMs);
    HeadsPane* heads = window.headsPane();
    window.raisePane(heads);
    heads->refresh();
    QTRY_VERIFY_WITH_TIMEOUT(heads->hasResult(), fixtures::kEventuallyMs);
    heads->selectHead(1, 1);
    QVERIFY(heads->isDetailStale());  // marked at once, before the detail is computed
    QTRY_VERIFY_WITH_TIMEOUT(heads->hasDetail() && !heads->isDetailStale(), fixtures::kEventuallyMs);
    QCOMPARE(heads->detailStep(), heads->shownStep());
    const int64_t first = heads->shownStep();
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->stepsDone() > first, fixtures::kEventuallyMs);
    heads->refresh();  // the maps move on; the detail follows them, at their step
    QTRY_VERIFY_WITH_TIMEOUT(heads->shownStep() > first, fixtures::kEventuallyMs);
    QTRY_VERIFY_WITH_TIMEOUT(!heads->isDetailStale(), fixtures::kEventuallyMs);
    QCOMPARE(heads->detailStep(), heads->shownStep());
    QVERIFY2(heads->detailText().contains(QString("step %1").arg(heads->shownStep())),
             qPrintable(heads->detailText()));
    window.session()->stop();
    QTRY_VERIFY_WITH_TIMEOUT(!window.session()->busy(), fixtures::kEventuallyMs);
  }

  void lupdateFindsEveryStringTranslated() {
    // lupdate over the workbench's sources (widgets/, what the .ts file translates; the executable's
    // --help text is a terminal's, in English like normfree-cli's), into a copy of the .ts file: a tr()
    // string without a German text comes out "unfinished", a translation whose source is gone "vanished".
    const QString ts = m_dir.filePath("normfree_de.ts");
    QVERIFY(QFile::copy(NF_SOURCE_DIR "/translations/normfree_de.ts", ts));
    QFile::setPermissions(ts, QFile::ReadOwner | QFile::WriteOwner);
    QProcess lupdate;
    lupdate.start(NF_LUPDATE, {"-silent", "-locations", "none", NF_SOURCE_DIR "/widgets", "-ts", ts});
    QVERIFY(lupdate.waitForFinished(120000));
    QCOMPARE(lupdate.exitCode(), 0);
    QFile f(ts);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    for (const char* state : {"type=\"unfinished\"", "type=\"vanished\"", "type=\"obsolete\""}) {
      const qsizetype at = text.indexOf(state);
      QVERIFY2(at < 0, qPrintable(QString("%1 in the .ts file after lupdate, e.g. %2")
                                      .arg(state, text.mid(std::max<qsizetype>(0, at - 300), 320))));
    }
  }

  void germanModeShowsNoEnglishThatHasATranslation() {
    QSettings().clear();
    MainWindow window;
    window.resize(1366, 768);
    window.show();
    window.setLanguage("de");
    QTRY_COMPARE_WITH_TIMEOUT(window.runSetup()->parentWidget()->windowTitle(), QString("Laufkonfiguration"),
                              fixtures::kEventuallyMs);
    // Every source text that German translates differently must not be shown as it is.
    QSet<QString> english;
    for (const auto& [source, translation] : translatedMessages(NF_SOURCE_DIR "/translations/normfree_de.ts"))
      if (source != translation && source.size() > 3 && !source.contains('%')) english.insert(source);
    QStringList shown;
    for (QLabel* label : window.findChildren<QLabel*>()) shown << label->text();
    for (QAbstractButton* button : window.findChildren<QAbstractButton*>()) shown << button->text();
    for (QDockWidget* dock : window.findChildren<QDockWidget*>()) shown << dock->windowTitle();
    for (QAction* action : window.findChildren<QAction*>()) shown << action->text();
    for (QCustomPlot* plot : window.findChildren<QCustomPlot*>()) {
      shown << plotTitle(plot);
      for (QCPAxis* axis : plot->axisRect()->axes()) shown << axis->label();
    }
    for (const QString& text : shown)
      QVERIFY2(!english.contains(text), qPrintable("shown in English in German mode: " + text));
    window.setLanguage("en");
  }
};

QTEST_MAIN(TestViews)
#include "tst_views.moc"

#include "analysis/AnalysisPanes.h"

#include <QCoreApplication>
#include <QDockWidget>
#include <QStackedWidget>
#include <QTabWidget>

#include "analysis/BenchmarksPane.h"
#include "analysis/CalibrationPane.h"
#include "analysis/CircuitPane.h"
#include "analysis/HeadsPane.h"
#include "analysis/LogitLensPane.h"
#include "analysis/NeuronsPane.h"
#include "analysis/NormsPane.h"
#include "analysis/PatchingPane.h"
#include "analysis/TokensPane.h"

QList<AnalysisPane*> makeAnalysisPanes(AnalysisRunner* runner, QWidget* parent, HeadsPane** heads) {
  *heads = new HeadsPane(runner, parent);
  auto* circuit = new CircuitPane(runner, parent);
  // A head clicked in the circuit opens in the Heads pane (its dock brought to the front).
  QObject::connect(circuit, &CircuitPane::headChosen, *heads, [heads = *heads](int layer, int head) {
    heads->selectHead(layer, head);
    bringToFront(heads);
  });
  return {new NormsPane(runner, parent),     *heads,
          new TokensPane(runner, parent),    new LogitLensPane(runner, parent),
          new PatchingPane(runner, parent),  circuit,
          new NeuronsPane(runner, parent),   new CalibrationPane(runner, parent),
          new BenchmarksPane(runner, parent)};
}

QList<AnalysisGroup> groupAnalysisPanes(const QList<AnalysisPane*>& panes) {
  QList<AnalysisGroup> groups = {
      {"analysisHeadsDock", QT_TRANSLATE_NOOP("AnalysisGroup", "Heads and circuits"), {}},
      {"analysisResidualDock", QT_TRANSLATE_NOOP("AnalysisGroup", "Residual stream"), {}},
      {"analysisBehaviourDock", QT_TRANSLATE_NOOP("AnalysisGroup", "Behaviour"), {}}};
  for (AnalysisPane* pane : panes) {
    const bool residual = qobject_cast<NormsPane*>(pane) || qobject_cast<LogitLensPane*>(pane);
    const bool behaviour = qobject_cast<NeuronsPane*>(pane) || qobject_cast<CalibrationPane*>(pane) ||
                           qobject_cast<BenchmarksPane*>(pane);
    groups[residual ? 1 : behaviour ? 2 : 0].panes << pane;  // heads, tokens, patching, circuit
  }
  return groups;
}

void bringToFront(QWidget* widget) {
  for (QWidget* child = widget; child && child->parentWidget(); child = child->parentWidget()) {
    QWidget* parent = child->parentWidget();
    if (auto* tabs = qobject_cast<QTabWidget*>(parent->parentWidget());
        tabs && qobject_cast<QStackedWidget*>(parent))
      tabs->setCurrentWidget(child);  // a QTabWidget's pages sit in its QStackedWidget
    if (auto* dock = qobject_cast<QDockWidget*>(parent)) {
      dock->show();
      dock->raise();
    }
  }
}

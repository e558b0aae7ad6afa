#include "analysis/AnalysisPanes.h"

#include <QDockWidget>

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
    if (auto* dock = qobject_cast<QDockWidget*>(heads->parentWidget())) dock->show(), dock->raise();
  });
  return {new NormsPane(runner, parent),     *heads,
          new TokensPane(runner, parent),    new LogitLensPane(runner, parent),
          new PatchingPane(runner, parent),  circuit,
          new NeuronsPane(runner, parent),   new CalibrationPane(runner, parent),
          new BenchmarksPane(runner, parent)};
}

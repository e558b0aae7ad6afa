#include "analysis/AnalysisPanes.h"

#include "analysis/BenchmarksPane.h"
#include "analysis/CalibrationPane.h"
#include "analysis/HeadsPane.h"
#include "analysis/LogitLensPane.h"
#include "analysis/NeuronsPane.h"
#include "analysis/NormsPane.h"
#include "analysis/PatchingPane.h"

QList<AnalysisPane*> makeAnalysisPanes(AnalysisRunner* runner, QWidget* parent, HeadsPane** heads) {
  *heads = new HeadsPane(runner, parent);
  return {new NormsPane(runner, parent),     *heads,
          new LogitLensPane(runner, parent), new PatchingPane(runner, parent),
          new NeuronsPane(runner, parent),   new CalibrationPane(runner, parent),
          new BenchmarksPane(runner, parent)};
}

// The tracked analyses' names (analysis/tracked_analyses.h) as the workbench shows them, translated: a
// title with its unit for plots, menus and legends. One place, for the run setup and the training view.
#pragma once
#include <QCoreApplication>
#include <QString>
#include <string>

class TrackedAnalysisText {
  Q_DECLARE_TR_FUNCTIONS(TrackedAnalysisText)
 public:
  static QString title(const std::string& name);  // "NMAE of DLA (%)"; an unknown name as it is
  // A per-layer curve's name: "layer 2", or for the position-0 ratio's last value "final residual".
  static QString layer(const std::string& name, int layer, int layers);
};

// Residual stream norms per layer (resid_pre of every block, then the input of ln_f), position 0 against
// the rest, means with 10th–90th percentile bands, and the same for the starting model as dashed lines (none
// where the model is the starting model itself).
#pragma once
#include "analysis/AnalysisPane.h"
#include "analysis/residual_norms.h"

class NormsPane : public AnalysisPane {
  Q_OBJECT
 public:
  explicit NormsPane(AnalysisRunner* runner, QWidget* parent = nullptr);
  QList<QCustomPlot*> plots() const override { return {m_plot}; }
  QString title() const override { return tr("Residual norms"); }
  QString description() const override;
  QCustomPlot* plot() const { return m_plot; }

 protected:
  AnalysisWork makeWork() override;
  void retranslate() override;

 private:
  // `reference`: the starting model's, or null where it is the model now.
  void draw(const nf::ResidualNormsResult& now, const nf::ResidualNormsResult* reference);
  void showTitleAndLegend();  // with or without the starting model's lines
  QCustomPlot* m_plot;
  bool m_withReference = true;  // before any result: as a run shows it
};

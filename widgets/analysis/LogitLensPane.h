// The logit lens (docs/ANALYSES.md, `logit-lens`): the next-token loss of every layer's residual read
// through the final norm, in its three modes (recomputed, frozen, linear), for the model now (solid) and
// the starting model (dashed; none where it is the model now) — on an LN-free model the three curves are one.
// Below, one validation sequence's layer × position grid of the lens's top token, coloured by its
// probability, for a chosen mode and model; hovering a cell lists the top tokens and the target's probability
// and rank.
#pragma once
#include "analysis/AnalysisPane.h"
#include "analysis/logit_lens.h"

class QCPColorMap;
class QComboBox;
class QLabel;
class QScrollBar;
class QSpinBox;

class LogitLensPane : public AnalysisPane {
  Q_OBJECT
 public:
  explicit LogitLensPane(AnalysisRunner* runner, QWidget* parent = nullptr);
  QList<QCustomPlot*> plots() const override { return {m_curves, m_grid}; }
  QString title() const override { return tr("Logit lens"); }
  QString description() const override;

  QCustomPlot* curvePlot() const { return m_curves; }
  QCustomPlot* gridPlot() const { return m_grid; }
  void setMode(nf::LensMode mode);
  void showStartingModel(bool starting);  // the grid's model: the starting one instead of the model now
  bool startingModelShown() const;        // that choice (shown where there is a starting model)
  void setSequence(int64_t sequence);     // the traced sequence (computes again)
  int firstPosition() const;              // the grid's first position (its scroll bar)
  QString cellText(int point, int position) const;      // what hovering a cell shows
  QString topTokenText(int point, int position) const;  // the text drawn in that cell

 protected:
  AnalysisWork makeWork() override;
  void retranslate() override;

 private:
  void drawCurves();
  void showCurvesTitleAndLegend();  // with or without the starting model's curves
  void drawGrid();
  const nf::LogitLensResult* gridModel() const;
  QString tokenText(const nf::LogitLensResult& r, int32_t id) const;

  QCustomPlot* m_curves;
  QCustomPlot* m_grid;
  QCPColorMap* m_map;
  QComboBox* m_mode;
  QComboBox* m_model;
  QSpinBox* m_sequence;
  QScrollBar* m_positions;
  QLabel* m_summary;
  std::shared_ptr<const nf::LogitLensResult> m_now, m_start;  // m_start: null where it is the model now
};

// Patching on the IOI prompt set (PROTOCOL §7): activation patching, attribution patching and their
// difference (error) for resid_pre by layer × position or head outputs by layer × head, normalized so the
// corrupted run scores 0 and the clean run 1. Clicking a cell shows the prompt with its position marked.
#pragma once
#include "analysis/AnalysisPane.h"
#include "analysis/patching.h"

class QCPColorMap;
class QComboBox;
class QLabel;

class PatchingPane : public AnalysisPane {
  Q_OBJECT
 public:
  explicit PatchingPane(AnalysisRunner* runner, QWidget* parent = nullptr);
  QList<QCustomPlot*> plots() const override { return {m_plot}; }
  QString title() const override { return tr("Patching"); }
  QString description() const override;
  QCustomPlot* plot() const { return m_plot; }
  QString promptText() const;
  void selectCell(int row, int column);

 protected:
  AnalysisWork makeWork() override;
  void retranslate() override;

 private:
  void draw();
  const nf::PatchingGrid* grid() const;

  QCustomPlot* m_plot;
  std::vector<QCPColorMap*> m_maps;  // activation, attribution, error
  QComboBox* m_gridChoice;
  QLabel* m_prompt;
  QLabel* m_summary;
  std::shared_ptr<const nf::PatchingResult> m_result;
  QStringList m_cleanTokens, m_corruptedTokens;
  int m_row = -1, m_column = -1;
};

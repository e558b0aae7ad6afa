// Calibration and samples (PROTOCOL §6): the reliability diagram of the model now and of the starting
// model, their loss, entropy and expected calibration error, and greedy and sampled continuations of the
// same prompts side by side (the model alone where it is the starting model).
#pragma once
#include "analysis/AnalysisPane.h"
#include "analysis/behaviour.h"

class QLabel;
class QTableWidget;

class CalibrationPane : public AnalysisPane {
  Q_OBJECT
 public:
  explicit CalibrationPane(AnalysisRunner* runner, QWidget* parent = nullptr);
  QList<QCustomPlot*> plots() const override { return {m_reliability}; }
  QString title() const override { return tr("Calibration"); }  // a tab's title: short (samples too)
  QString description() const override;
  QTableWidget* samples() const { return m_samples; }
  QString summaryText() const;  // the measures' table, as rich text

 protected:
  AnalysisWork makeWork() override;
  void retranslate() override;

 private:
  struct Texts;
  struct Shown;
  void draw(std::shared_ptr<const Shown> shown);
  static Shown computeShown(const AnalysisInputs& in, const nf::ProgressFn& progress);
  std::shared_ptr<const Shown> m_shown;  // redrawn in another language
  QCustomPlot* m_reliability;
  QLabel* m_summary;
  QTableWidget* m_samples;
};

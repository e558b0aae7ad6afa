// Confidence neurons of the last MLP layer (PROTOCOL §7): ‖w_out‖ against LogitVar for every neuron with
// the top-k by CN score labelled, the change of loss and entropy when each is mean-ablated, and the
// singular value spectrum of W_U with the top neurons' |cosine| to each singular direction.
#pragma once
#include "analysis/AnalysisPane.h"
#include "analysis/confidence_neurons.h"

class NeuronsPane : public AnalysisPane {
  Q_OBJECT
 public:
  explicit NeuronsPane(AnalysisRunner* runner, QWidget* parent = nullptr);
  QList<QCustomPlot*> plots() const override { return {m_scatter, m_ablation, m_spectrum}; }
  QString title() const override { return tr("Confidence neurons"); }
  QString description() const override;

 protected:
  AnalysisWork makeWork() override;
  void retranslate() override;

 private:
  void labelTopNeurons();
  void draw(std::shared_ptr<const nf::ConfidenceNeuronsResult> result);
  std::shared_ptr<const nf::ConfidenceNeuronsResult> m_result;  // shown; redrawn in another language
  QCustomPlot* m_scatter;
  QCustomPlot* m_ablation;
  QCustomPlot* m_spectrum;
};

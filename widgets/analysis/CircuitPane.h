// Circuits as graphs (docs/ANALYSES.md, `circuit`): the IOI circuit found by edge attribution patching,
// drawn for the starting model and the model now side by side (the model alone where it is the starting
// model) — nodes by layer (embeddings, heads, MLPs,
// logits), edges by score (width: |score|, colour: sign; q, k, v enter a head at its left, middle and
// right), the circuit's edges solid and the next ones up to the slider's count dashed — and below, the
// measured faithfulness of the top-k edges. Clicking a head opens it in the Heads pane; the circuit is
// saved as JSON or CSV.
#pragma once
#include <array>
#include <memory>
#include <nlohmann/json.hpp>

#include "analysis/AnalysisPane.h"
#include "analysis/edge_attribution.h"

class QComboBox;
class QLabel;
class QPushButton;
class QSlider;

class CircuitPane : public AnalysisPane {
  Q_OBJECT
 public:
  explicit CircuitPane(AnalysisRunner* runner, QWidget* parent = nullptr);
  QList<QCustomPlot*> plots() const override;  // the starting model's graph where it is shown
  QString title() const override { return tr("Circuit"); }
  QString description() const override;

  enum Model { Starting = 0, Now = 1 };
  QCustomPlot* graphPlot(Model model) const { return m_graphs[model]; }
  QCustomPlot* curvePlot() const { return m_curve; }
  void setMethod(const QString& method);  // "eap" or "eap-ig": computes again
  void setShownEdges(int edges);          // how many top edges the graphs draw
  int shownEdges() const;
  int drawnEdges(Model model) const;                          // edge lines in that graph now
  QPoint nodeCenter(Model model, const QString& node) const;  // the node's pixel (−1, −1: none)
  QString summaryText() const;
  // Writes the model now's circuit: the analysis's JSON (.json) or its edges (.csv). Atomic.
  bool saveCircuit(const QString& path, QString* error) const;

 Q_SIGNALS:
  void headChosen(int layer, int head);

 protected:
  AnalysisWork makeWork() override;
  void retranslate() override;

 private:
  void drawGraph(Model model);
  void drawCurve();
  void showCurveTitleAndLegend();  // with or without the starting model's curve
  void showSummary();
  void chooseNode(Model model, const QPoint& pixel);

  std::array<QCustomPlot*, 2> m_graphs;
  QCustomPlot* m_curve;
  QComboBox* m_method;
  QSlider* m_edges;
  QLabel* m_edgesLabel;
  QLabel* m_summary;
  QPushButton* m_save;
  std::array<std::shared_ptr<const nf::CircuitResult>, 2> m_results;  // [Starting]: null where it is now
  std::shared_ptr<const nlohmann::json> m_nowJson;
};

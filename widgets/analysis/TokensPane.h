// Tokens (docs/ANALYSES.md, `tokens`): one validation sequence whole, as CircuitsVis draws a prompt — the
// attention patterns of the heads named, side by side over the full context (hover a cell; click to lock a
// query row in every head), and the text coloured by one head's DLA and, beside it, its direct effect, on
// one diverging scale (hover a token for its value). Each view exports as SVG with vector cells, PNG or CSV.
#pragma once
#include <QStringList>
#include <utility>
#include <vector>

#include "analysis/AnalysisPane.h"

class AttentionGrid;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class TokenText;

class TokensPane : public AnalysisPane {
  Q_OBJECT
 public:
  explicit TokensPane(AnalysisRunner* runner, QWidget* parent = nullptr);
  QList<QCustomPlot*> plots() const override { return {}; }  // painted views instead:
  QList<PaintedFigure> resultFigures() const override;
  QString title() const override { return tr("Tokens"); }
  QString description() const override;

  AttentionGrid* patterns() const { return m_patterns; }
  TokenText* dlaText() const { return m_dla; }
  TokenText* deText() const { return m_de; }
  void setHeads(const QString& heads);     // "L1H2, L2H3" (or 1.2, 2.3): whose patterns are drawn
  void setComponent(int layer, int head);  // whose DLA and DE colour the text (computes again)
  void setSequence(int sequence);          // computes again
  // "L1H2, 2.3" → (layer, head) pairs; std::invalid_argument names what it cannot read.
  static std::vector<std::pair<int, int>> parseHeads(const QString& text);

 protected:
  AnalysisWork makeWork() override;
  void retranslate() override;

 private:
  QSpinBox* m_sequence;
  QLineEdit* m_heads;
  QLineEdit* m_component;
  QPushButton* m_exportPatterns;
  QPushButton* m_exportText;
  QLabel* m_locked;
  QLabel* m_dlaTitle;
  QLabel* m_deTitle;
  AttentionGrid* m_patterns;
  TokenText* m_dla;
  TokenText* m_de;
};

// Heads: layer × head heat maps of mean |DLA|, mean |DE| (one scale for both) and their NMAE on a fixed
// 0–100 % scale (PROTOCOL §7). Clicking a head selects it and fills the detail below: its per-position DLA
// and DE on a chosen validation sequence (x labelled with the tokens), its attention pattern on that
// sequence (hover a cell for query, key and weight), its sink share — computed on the very model the heat
// maps show, so both name the same step.
#pragma once
#include <QPoint>
#include <functional>

#include "analysis/AnalysisPane.h"
#include "analysis/attention_sinks.h"
#include "analysis/logit_attribution.h"
#include "run/snapshot.h"

class QCPColorMap;
class QLabel;
class QSpinBox;

class HeadsPane : public AnalysisPane {
  Q_OBJECT
 public:
  explicit HeadsPane(AnalysisRunner* runner, QWidget* parent = nullptr);
  QList<QCustomPlot*> plots() const override { return {m_maps, m_trace, m_pattern}; }
  QString title() const override { return tr("Heads"); }
  QString description() const override;
  QList<QCustomPlot*> resultPlots() const override;

  QCustomPlot* heatMaps() const { return m_maps; }
  QCustomPlot* tracePlot() const { return m_trace; }
  QCustomPlot* patternPlot() const { return m_pattern; }
  QString detailText() const;
  // The pixel of a head's cell in heat map `map` (0 DLA, 1 DE, 2 NMAE), for tests and tooltips.
  QPoint cellCenter(int map, int layer, int head) const;
  void selectHead(int layer, int head);  // and computes its detail
  int selectedLayer() const { return m_layer; }
  int selectedHead() const { return m_head; }
  bool hasDetail() const { return m_detail != nullptr; }
  int64_t detailStep() const;  // the model step the detail shown was computed at (−1: a saved model)
  bool isDetailStale() const { return m_detailPending; }
  // The NMAE map's colour range (fixed 0–100 %: values above are clipped and marked).
  std::pair<double, double> nmaeRange() const;

 Q_SIGNALS:
  void headSelected(int layer, int head);
  void detailShown();

 protected:
  AnalysisWork makeWork() override;
  void retranslate() override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct Detail;
  void draw(std::shared_ptr<const nf::AttributionResult> attribution,
            std::shared_ptr<const nf::AttentionSinksResult> sinks);
  void showSummary();
  void drawDetail(std::shared_ptr<const Detail> detail);
  static Detail traceDetail(const AnalysisInputs& in, const nf::SnapshotPtr& pinned, int layer, int head,
                            int64_t sequence, int64_t tokens);
  void requestDetail();
  void markDetailStale();
  using DetailNote = std::function<QString()>;
  void showDetailNote(DetailNote note);
  void colourDetail(bool stale);
  void markSelection();
  void showPatternTooltip(const QPoint& pos);

  QCustomPlot* m_maps;
  std::vector<QCPColorMap*> m_colorMaps;  // DLA, DE, NMAE
  QCustomPlot* m_trace;
  QCustomPlot* m_pattern;
  QCPColorMap* m_patternMap = nullptr;
  QLabel* m_detailLabel;
  QWidget* m_detailBox;  // the detail's label and plots
  class QScrollArea* m_scroll = nullptr;
  // The trace and the pattern: side by side, or one under the other (arrangeDetail).
  class QBoxLayout* m_detailPlots = nullptr;
  void arrangeDetail();
  QLabel* m_summary;
  QSpinBox* m_sequence;
  QSpinBox* m_detailTokens;  // how many of the sequence's first tokens the detail shows
  int m_layers = 0, m_heads = 0;
  int m_layer = -1, m_head = -1;
  std::vector<double> m_nmae;
  // The results shown, kept to redraw their text in another language.
  std::shared_ptr<const nf::AttributionResult> m_attribution;
  std::shared_ptr<const nf::AttentionSinksResult> m_sinks;
  std::shared_ptr<const Detail> m_detail;
  bool m_detailPending = false;
  DetailNote m_detailNote;         // set: the label says why no detail is shown (showDetailNote)
  nf::SnapshotPtr m_mapsModel;     // the model the heat maps were computed on (null: a served run's)
  bool m_mapsOfOldSource = false;  // the maps shown were computed before the source last changed
};

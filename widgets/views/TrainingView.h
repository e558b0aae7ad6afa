// The training view: CE, auxiliary and total loss (raw, faint, and smoothed), the evaluations, a vertical
// mark at each applied removal event; learning rate and gradient norm; every LN site's tracked scale and,
// once fake, its frozen scale; the tracked analyses while the run tracks some (TrackedPlot). The plots share
// the x-axis (steps), and so does the timeline.
#pragma once
#include <QPointer>
#include <QWidget>
#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "logic/MetricsStore.h"
#include "views/RunsView.h"

class QCustomPlot;
class QCPGraph;
class QCPItemText;
class QCPAbstractItem;
class QCheckBox;
class QLabel;
class QSlider;
class QSplitter;
class QTabWidget;
class TrackedPlot;

class TrainingView : public QWidget {
  Q_OBJECT
 public:
  explicit TrainingView(QWidget* parent = nullptr);
  void showMetrics(const MetricsStore& metrics);
  // Other runs overlaid on the plots (RunsView): each one's smoothed cross-entropy and evaluations on the
  // loss plot and its tracked analyses, in its colour, and its removal events as dotted lines.
  void setComparison(std::vector<std::shared_ptr<const ComparedRun>> runs);
  void setXRange(double first, double last);
  Q_INVOKABLE void resetXRange();  // a plot's Reset View: asks for the automatic range
  // What the plots are of (the run, its model, its step), carried by every export of them.
  void setProvenance(const QStringList& lines);
  QCustomPlot* lossPlot() const { return m_loss; }
  QCustomPlot* optimizerPlot() const { return m_optimizer; }
  QCustomPlot* scalesPlot() const { return m_scales; }
  TrackedPlot* trackedPlot() const { return m_tracked; }  // shown while the run tracks analyses
  bool showsTracked() const { return m_showsTracked; }    // in its place or tab, whichever is in front
  // Too short for the plots one under another (a 720- or 768-pixel screen): the loss plot on top and the
  // others in tabs below it, each tall enough to read; one under another again when there is room.
  bool isCompact() const { return m_compact; }
  int plottedSteps() const;  // points on the loss plot's CE graph
  // The smoothed loss curves' EMA weight, 0 (raw) to 0.99, as TensorBoard's slider: each point is the
  // bias-corrected exponential moving average of the raw values up to it. The raw values stay beside it.
  void setSmoothing(double weight);
  double smoothing() const;

 Q_SIGNALS:
  void xRangeChanged(double first, double last);
  void xRangeResetRequested();

 protected:
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;  // the splitter's resizes keep its shares

 private:
  void retranslate();
  void arrange();  // stacked or compact, for the height there is
  void showTracked(bool shown);
  void showTrackedIfAny();                          // shown while it has data, and arranged for it
  void titleTabs();                                 // the compact arrangement's tabs, in the current language
  void proportion(const std::vector<int>& shares);  // of the splitter's height, one share per plot
  void applyShares();
  void replotAll();
  void alignSteps();                        // the same step at the same x in all the plots
  std::vector<QCustomPlot*> plots() const;  // loss, optimizer, scales, tracked analyses
  void addSiteKindLegend();
  void drawComparison();
  std::vector<std::shared_ptr<const ComparedRun>> m_compared;
  std::vector<QCPGraph*> m_evalGraphs, m_comparisonGraphs;
  std::vector<QPointer<QCPAbstractItem>> m_comparisonItems;
  static QString noRunText();
  QPointer<QCPItemText> m_noRun;  // shown while no step has been trained (a plot's items may be cleared)
  QCPGraph* m_frozenLegend = nullptr;
  QCustomPlot* m_loss;
  QCustomPlot* m_optimizer;
  QCustomPlot* m_scales;
  TrackedPlot* m_tracked;
  QSplitter* m_splitter;
  QTabWidget* m_tabs;  // the compact arrangement's optimizer, scales and tracked plots
  bool m_compact = false, m_showsTracked = false;
  std::vector<int> m_shares;   // the splitter's proportions, kept as it resizes
  bool m_sizedByHand = false;  // until the user drags a handle
  QCheckBox* m_logScale;
  QSlider* m_smoothing;
  QLabel* m_smoothingLabel;
  void resmooth();  // the smoothed curves again from the raw ones, at the slider's weight
  struct SiteGraphs {
    QCPGraph* tracked = nullptr;
    QCPGraph* frozen = nullptr;
    size_t plotted = 0;
  };
  int64_t m_generation = -1;
  size_t m_plotted = 0, m_eventsDrawn = 0;  // step records and events already on the plots
  std::array<Smoother, 3> m_smoothers;      // CE, aux, total
  bool m_hasAux = false;
  std::map<std::string, SiteGraphs> m_scaleGraphs;
  bool m_settingRange = false;
};

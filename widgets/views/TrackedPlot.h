// A run's tracked analyses (docs/TRAINING.md, "Tracked analyses") against the step: one analysis at a time,
// chosen above the plot — its value, a filled marker where removal events fired, and one thin curve per
// layer where it has them — with the run's events marked as in the other training plots, and the mean
// cost of one measurement beside the choice.
#pragma once
#include <QWidget>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "logic/MetricsStore.h"
#include "views/RunsView.h"

class QComboBox;
class QCustomPlot;
class QLabel;

class TrackedPlot : public QWidget {
  Q_OBJECT
 public:
  explicit TrackedPlot(QWidget* parent = nullptr);
  void showMetrics(const MetricsStore& metrics);
  // Runs overlaid (RunsView): the chosen analysis's value of each, in its colour.
  void setComparison(std::vector<std::shared_ptr<const ComparedRun>> runs);
  QCustomPlot* plot() const { return m_plot; }
  bool hasData() const;                       // the run tracks something
  std::string analysis() const;               // the one plotted ("nmae"), "" when none
  void setAnalysis(const std::string& name);  // one the run tracks
  int plottedPoints() const;                  // the value curve's points

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void rebuild();
  void retranslate();
  QComboBox* m_choice;
  QLabel* m_cost;
  QCustomPlot* m_plot;
  class QCPGraph* m_value = nullptr;  // the run shown's value curve (null: it tracks nothing)
  void updateChoices();
  MetricsStore m_metrics;  // the tracked series and events last shown (small: a few hundred points)
  struct Drawn {  // what m_metrics was copied from, to skip updates that change nothing drawn (its x range
                  // is the training view's, set on every update)
    int64_t generation = -1;
    std::size_t points = 0, events = 0;
    bool operator==(const Drawn& o) const {
      return generation == o.generation && points == o.points && events == o.events;
    }
  } m_drawn;
  std::vector<std::shared_ptr<const ComparedRun>> m_compared;
};

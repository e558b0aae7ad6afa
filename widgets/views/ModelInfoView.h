// Shows a model folder's shape and the normalization of every LN site (a layer × site grid); for a run, each
// site's state now (LayerNorm, or FakeLN with its frozen scale once its event has fired), updated live.
#pragma once
#include <QWidget>
#include <cstdint>
#include <map>
#include <string>

#include "model/model_folder.h"

class QLabel;
class QTableWidget;

class ModelInfoView : public QWidget {
  Q_OBJECT
 public:
  explicit ModelInfoView(QWidget* parent = nullptr);
  void setSummary(const nf::ModelSummary& summary);  // a model as saved; forgets any run's state
  // The run's sites made fake so far, each with its frozen scale (from the run's metrics), at `step`.
  void showRunState(const std::map<std::string, double>& frozenScales, int64_t step);
  // A run whose model is not in a folder here (one trained on another machine, at `where`): named, with
  // no sites to show; its removal events are on the timeline.
  void showRunElsewhere(const QString& run, const QString& where);
  void clear();
  QString titleText() const;  // what the pane says it shows (a folder, or a run's model)
  QTableWidget* siteTable() const { return m_sites; }
  const nf::ModelSummary& summary() const { return m_summary; }

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void retranslate();
  QLabel* m_title;
  QLabel* m_shape;
  QLabel* m_normState;
  QTableWidget* m_sites;
  nf::ModelSummary m_summary;
  bool m_hasSummary = false;
  bool m_hasRun = false;
  QString m_elsewhereRun, m_elsewhere;  // showRunElsewhere's
  std::map<std::string, double> m_frozen;
  int64_t m_runStep = 0;
  int m_realSites = 0;  // sites still normalizing per token (as the table shows them)
  QString stateText() const;
  QString normName() const;  // "LayerNorm" or "RMSNorm": what this model's sites are
};

// A normalization kind's name as people write it ("fakeln" → "FakeLN"), for every view that names one.
QString normKindLabel(const std::string& kind);

// The runs beside the one shown, to compare with it: every run folder under the shown run's parent folder
// (the main job's removal and its control are siblings), a table of their settings and final figures, and
// a check box per run that overlays it on the training plots — in its own colour, with its removal events.
// By default every sibling is overlaid (when there are at most four). Each is read whole from its folder when
// the run shown changes or on Refresh (a sibling still training is read again then).
#pragma once
#include <QColor>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <vector>

#include "logic/MetricsStore.h"

class QLabel;
class QPushButton;
class QTableWidget;

struct ComparedRun {
  QString name, dir;
  QColor colour;
  MetricsStore metrics;
};

class RunsView : public QWidget {
  Q_OBJECT
 public:
  explicit RunsView(QWidget* parent = nullptr);
  // The run shown (its folder; "" when none is, or it is on another machine): its siblings are listed.
  void setShownRun(const QString& runDir);
  // Lists the runs of another folder (the run shown stays what it is, and is left out when not there).
  void setFolder(const QString& folder);
  QString folder() const { return m_folder; }
  // The runs ticked for the overlay, in table order.
  std::vector<std::shared_ptr<const ComparedRun>> overlaid() const;
  QTableWidget* table() const { return m_table; }
  void refresh();  // reads every listed run again

 Q_SIGNALS:
  void overlayChanged();

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void retranslate();
  QLabel* m_heading;
  QPushButton* m_choose;
  QPushButton* m_refresh;
  QTableWidget* m_table;
  QString m_folder, m_shown;
  std::vector<std::shared_ptr<const ComparedRun>> m_runs;  // one per row; null for the run shown
  QStringList m_runsBefore;                                // the folders listed last, whose ticks are kept
  bool m_listed = false;
};

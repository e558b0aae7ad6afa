// The runs beside the one shown, to compare with it: every run folder under the shown run's parent folder
// (the main job's removal and its control are siblings), a table of their settings and final figures, and
// a check box per run that overlays it on the training plots — in its own colour, with its removal events.
// By default every sibling is overlaid (when there are at most four). Each is read whole from its folder when
// the run shown changes or on Refresh; after that its metrics.jsonl is followed as it grows (a sibling still
// training — the control beside a removal — streams onto the plots) and a run folder that appears is listed.
#pragma once
#include <QColor>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QWidget>
#include <memory>
#include <vector>

#include "logic/MetricsStore.h"

class QLabel;
class QPushButton;
class QTableWidget;

namespace nf {
class MetricsFollower;
struct RunConfig;
}  // namespace nf

struct ComparedRun {
  QString name, dir;
  QColor colour;
  MetricsStore metrics;
};

class RunsView : public QWidget {
  Q_OBJECT
 public:
  explicit RunsView(QWidget* parent = nullptr);
  ~RunsView() override;
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
  // One per table row: the run as last read (null for one that cannot be read) and its metrics.jsonl,
  // followed from where that read ended. Updated in place: the plots draw from it on overlayChanged.
  struct Row {
    QString dir;
    std::shared_ptr<ComparedRun> run;
    std::unique_ptr<nf::MetricsFollower> follower;
    int64_t maxSteps = 0;
    std::string validation;  // the file name of its first evaluation set, whose loss the table shows
    bool shown = false;      // the run shown: plotted as itself, never overlaid
  };
  void retranslate();
  void showSettings(int row, const nf::RunConfig& config);  // its mode, preset, learning rate and budget
  void showFigures(int row);  // the row's steps, last CE, last evaluation and status, from its metrics
  // A run's last status record in words ("start" → training; a run killed stays "training").
  static QString statusWords(const std::string& lastStatus);
  void follow();  // new records of the listed runs; runs new to the folder (or now readable) listed
  QLabel* m_heading;
  QPushButton* m_choose;
  QPushButton* m_refresh;
  QTableWidget* m_table;
  QTimer m_followTimer;
  QString m_folder, m_shown;
  std::vector<Row> m_rows;
  QStringList m_runsBefore;  // the folders listed last, whose ticks are kept
  bool m_listed = false;
};

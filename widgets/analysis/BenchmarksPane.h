// Downstream benchmarks (docs/DOWNSTREAM.md) on the model now and on the model it started from, scored as
// lm-evaluation-harness scores them: accuracy per task as bars with their standard errors, and the items
// the two models answer differently. The task files are the user's — a folder holding them under their
// distributed names, remembered — or, until one is chosen, the synthetic tasks made from the corpus for
// the bundled models; beside them, any model folder chosen to compare with (the vanilla control). For a run
// served elsewhere the items travel to its server in the analysis request (a server reads no file a request
// names).
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "analysis/AnalysisPane.h"

class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

class BenchmarksPane : public AnalysisPane {
  Q_OBJECT
 public:
  explicit BenchmarksPane(AnalysisRunner* runner, QWidget* parent = nullptr);
  QList<QCustomPlot*> plots() const override { return {m_plot}; }
  QString title() const override { return tr("Benchmarks"); }
  QString description() const override;
  // The folder of task files ("": the synthetic tasks), remembered between sessions.
  void setTaskFolder(const QString& folder);
  QString taskFolder() const { return m_folder; }
  QString controlFolder() const { return m_control; }  // the model compared with ("": none)
  void setItemLimit(int items);                        // items per task, remembered
  // A model to score beside them (the vanilla control's final model, say; "": none): its bars join the
  // plot and the table lists the items the model now answers differently from it.
  void setControlFolder(const QString& folder);
  QCustomPlot* plot() const { return m_plot; }
  QTableWidget* disagreements() const { return m_table; }
  QString disagreementsText() const;  // what the table above it says it lists

 protected:
  AnalysisWork makeWork() override;
  void retranslate() override;

 private:
  struct Scores {
    // One task's result each, as bench writes it; `start` is empty where the starting model is the model
    // now, `control` where no model is compared.
    std::vector<nlohmann::json> now, start, control;
    bool synthetic = false;  // the tasks made from the corpus, named as the real ones they imitate
  };
  void draw(const Scores& scores);
  QString chartTitle() const;
  void chooseFolder();
  void showFolder();
  void retranslateTable();
  QString m_folder, m_control;
  QLabel* m_folderLabel;
  QLabel* m_limitLabel;
  QPushButton* m_choose;
  QPushButton* m_synthetic;
  QPushButton* m_compare;
  QPushButton* m_noCompare;
  QLabel* m_compareLabel;
  QSpinBox* m_limit;
  QCustomPlot* m_plot;
  QTableWidget* m_table;
  QLabel* m_differently;          // how many items the table lists, of how many
  bool m_shownSynthetic = false;  // the plot shows synthetic tasks: its title and ticks say so
  bool m_shownStart = true;       // the plot shows the starting model (not where it is the model now)
};

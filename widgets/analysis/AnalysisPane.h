// What every analysis pane shares: a header saying which model step its figures reflect (and, once the
// model has moved on, that they are stale), a Refresh button, progress while the engine computes, errors
// shown in place. Until its first result a pane shows what it will compute and a button, not empty plots.
// Subclasses say what to compute (work on the analysis thread) and how to draw it.
#pragma once
#include <QList>
#include <QStringList>
#include <QWidget>
#include <functional>

#include "analysis/AnalysisRunner.h"

class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QStackedWidget;
class QVBoxLayout;

class AnalysisPane : public QWidget {
  Q_OBJECT
 public:
  AnalysisPane(AnalysisRunner* runner, const QString& key, QWidget* parent = nullptr);

  void refresh();  // asks for the analysis on the model as it is now
  // The model's step now: marks the pane stale when it is past ours, or went back before it (a rollback).
  void setCurrentStep(int64_t step);
  int64_t shownStep() const { return m_shownStep; }
  bool hasResult() const { return m_hasResult; }
  bool hasFailed() const { return !m_error.isEmpty(); }  // the last computation's error is shown
  bool isStale() const;
  // What the result shown is of ("analysis: …", "model: …", step, norms, data): every export carries it.
  const QStringList& provenance() const { return m_provenance; }
  QString statusText() const;
  virtual QList<QCustomPlot*> plots() const = 0;
  // The plots that show a result (what Export writes): none before the first one.
  virtual QList<QCustomPlot*> resultPlots() const { return m_hasResult ? plots() : QList<QCustomPlot*>(); }
  // Figures painted by hand rather than plotted (the Tokens pane's), each written by `write` to a path whose
  // suffix says the format (svg, png or csv); none before the first result.
  struct PaintedFigure {
    QString name, title;  // the file name Export All uses; what the Export menu says
    std::function<bool(const QString& path, QString* error)> write;
  };
  virtual QList<PaintedFigure> resultFigures() const { return {}; }
  // Asks for a file (SVG, PNG or CSV) and writes the figure there; a failure is said in a dialog.
  static void exportInteractively(const PaintedFigure& figure, QWidget* dialogParent);
  virtual QString title() const = 0;
  virtual QString description() const = 0;  // what the pane computes, shown until it has
  // Why nothing can be computed now (a run whose server has ended, a model on another machine…); empty
  // where it can.
  static QString whyNotComputable(AnalysesCan can);

 Q_SIGNALS:
  void resultShown();

 protected:
  virtual AnalysisWork makeWork() = 0;
  // The pane's own inputs changed (a task folder, a model to compare with): the result shown, computed from
  // the old ones, is marked stale until the next.
  void markInputsChanged();
  // Call from the GUI-thread part of the work with the result's header.
  void showHeader(int64_t step, const std::string& model, const std::string& norms, const std::string& data);
  QVBoxLayout* body() const { return m_body; }
  AnalysisRunner* runner() const { return m_runner; }
  virtual void retranslate();
  void changeEvent(QEvent* event) override;
  QSize sizeHint() const override { return {760, 640}; }

 private:
  void updateStatus();
  void updateEmptyText();
  AnalysisRunner* m_runner;
  QString m_key;
  QLabel* m_status;
  QProgressBar* m_progress;
  QPushButton* m_refresh;
  QStackedWidget* m_pages;  // 0: what the pane will show and a button; 1: the result
  QLabel* m_emptyText;
  QPushButton* m_compute;
  QVBoxLayout* m_body;
  bool m_hasResult = false, m_computing = false, m_sourceChanged = false;
  int64_t m_inputs = 0, m_requestedInputs = 0, m_shownInputs = 0;  // markInputsChanged's count, then and now
  int64_t m_shownStep = -1, m_currentStep = -1;
  std::string m_model, m_norms, m_data;  // the shown result's header, as the engine wrote it
  QString m_error;
  QStringList m_provenance;
};

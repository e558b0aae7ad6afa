// The run Start would begin, as the window shows it before it starts: the opened model, the draft schedule
// on the timeline, the datasets chosen and the Run setup's settings; its RunConfig made the engine's way
// (RunSetupView::nextRunConfig, nf::makeRunConfig) and the preparation of the synthetic data it needs.
#pragma once
#include <QCoreApplication>
#include <QString>
#include <functional>
#include <memory>
#include <tuple>
#include <vector>

#include "analysis/AnalysisRunner.h"
#include "logic/ScheduleEditor.h"
#include "model/model_folder.h"
#include "train/settings.h"
#include "util/progress.h"
#include "window/WindowDialogs.h"

class RunSetupView;

class NextRun {
  Q_DECLARE_TR_FUNCTIONS(NextRun)

 public:
  explicit NextRun(RunSetupView* setup) : m_setup(setup) {}

  // The setup plans for the model; datasets chosen for another tokenizer are let go (the synthetic corpus
  // made for it instead), and the note returned says so ("" when nothing was let go).
  QString setModel(const QString& folder, const nf::ModelSummary& summary);
  // The model of a run opened: the folder it started from where that is here, else its model now (final or
  // newest checkpoint: a run copied from a server; its summary names the folder it started from, and the
  // analyses show no starting model). Where neither is here, no folder (analyses say no model is open) and
  // the shape its run kept in source/config.json. Read whole before anything changes: throws
  // naming the file and the problem.
  struct RunModel {
    QString folder;  // "" when not here
    nf::ModelSummary summary;
    bool started = true;  // false: the run's model now stands in (its starting model is not here)
  };
  RunModel runModel(const QString& runDir, const nf::RunConfig& config) const;
  QString setRunModel(const RunModel& model);  // setModel's note
  const QString& modelFolder() const { return m_folder; }
  const nf::ModelSummary& model() const { return m_summary; }
  // The model folder as a model of its own, its setup kept: a copied run's stand-in for its starting model
  // (RunModel::started false) is then just that model, named by its own folder.
  const nf::ModelSummary& alone();
  int layers() const { return m_summary.shape.nLayer; }

  using MadeEvents = std::vector<std::tuple<int64_t, int, int, int>>;  // (step, action, site, layer), sorted

  // A fresh draft of the setup's preset for the model; *note says when the preset is made for another depth,
  // and when it replaced a draft that had been edited or loaded from a file (no undo brings that back).
  std::shared_ptr<DraftSchedule> resetDraft(QString* note);
  // The schedule file as the draft; throws naming the file and the problem.
  std::shared_ptr<DraftSchedule> loadDraft(const QString& path);
  const std::shared_ptr<DraftSchedule>& draft() const { return m_draft; }
  // The draft was made for the model now set (opening a run of another model sets that one: the draft is
  // then the model's before, of another depth perhaps).
  bool draftIsForModel() const;
  // The draft under the setup's step budget now: the events it leaves out dropped, and named in *note.
  const std::shared_ptr<DraftSchedule>& trimDraft(QString* note);

  // Checks the token files (throws naming the file and the problem: one unreadable, or made by another
  // tokenizer than the model's) and uses them; all "": the synthetic corpus made for the model.
  void setDatasets(const WindowDialogs::Datasets& datasets);
  const WindowDialogs::Datasets& datasets() const { return m_datasets; }
  AnalysisSetup analysisSetup(const std::string& validationData) const;  // "": the datasets chosen

  struct Launch {
    nf::RunConfig config;
    std::function<void(nf::RunConfig&, const nf::ProgressFn&)> prepare;  // makes the synthetic data, if used
  };
  // The next run in `dir`, set up; throws std::runtime_error saying why it cannot start, for what the
  // engine would refuse only after its data is made, or what would train other than chosen: a folder that
  // holds a run, a preset's schedule for another depth left as it is, token files another tokenizer made, a
  // schedule that does not fit, a device no memory plan can be made for, a micro-batch the workers cannot
  // share. With the autopilot, removals set aside past the step budget wait at the last step for it to
  // bring forward (else the run keeps their sites' norms, as the note at the trim and its warning say).
  Launch launch(const QString& dir) const;

 private:
  // The first of the token files that another tokenizer than the model's made, where that is certain (the
  // model's tokenizer and the file's fingerprint of the one it was made with disagree, or agree and its
  // sidecar's end-of-text was edited to another), as otherTokenizerProblem says it; "" when none.
  std::string datasetsTokenizerProblem(const WindowDialogs::Datasets& datasets) const;
  nf::Treatments draftTreatments() const;  // those of the setup's preset: the draft refuses ending others
  void refuseWhatCannotStart(const nf::RunConfig& config) const;  // launch's checks
  RunSetupView* m_setup;
  QString m_folder;
  nf::ModelSummary m_summary;
  bool m_started = true;  // m_folder is the model the run started from (RunModel::started)
  std::shared_ptr<DraftSchedule> m_draft;
  QString m_draftFolder;      // the model the draft was made for
  MadeEvents m_presetEvents;  // the draft's events as its preset made them ({}: a file's)
  WindowDialogs::Datasets m_datasets;
};

#include "window/NextRun.h"

#include <QFileInfo>
#include <QStringList>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "data/default_datasets.h"
#include "data/token_file.h"
#include "distributed/worker_environment.h"
#include "run/run_directory.h"
#include "views/RunSetupView.h"
#include "window/AppFolders.h"

QString NextRun::setModel(const QString& folder, const nf::ModelSummary& summary) {
  m_folder = folder;
  m_summary = summary;
  m_started = true;
  m_setup->setModelShape(summary.shape);
  m_setup->matchModelDepth(summary.shape.nLayer);
  // The analyses read the validation file with this model: another tokenizer's ids would be noise to it.
  std::string problem;
  try {
    problem = datasetsTokenizerProblem(m_datasets);
  } catch (const std::exception& e) {  // a file gone or changed since it was chosen
    problem = e.what();
  }
  if (problem.empty()) return QString();
  setDatasets({});
  return tr("The datasets chosen are set aside, the synthetic corpus made for this model used instead: %1")
      .arg(QString::fromStdString(problem));
}

NextRun::RunModel NextRun::runModel(const QString& runDir, const nf::RunConfig& config) const {
  std::string model = config.model;
  const bool started = QFileInfo::exists(QString::fromStdString(model + "/config.json"));
  if (!started) model = nf::run::currentModelPath(runDir.toStdString());
  if (!model.empty()) {
    RunModel here{QString::fromStdString(model), nf::inspectModelFolder(model), started};
    if (!started) here.summary.folder = config.model;  // what it started from, on the machine it trained on
    return here;
  }
  RunModel elsewhere{QString(), m_summary};  // a run from before source/ was kept: the depth shown stays
  const std::string kept = nf::run::sourceModelPath(runDir.toStdString()) + "/config.json";
  if (QFileInfo::exists(QString::fromStdString(kept)))
    elsewhere.summary.shape = nf::loadConfigFile(kept).shape;
  return elsewhere;
}

const nf::ModelSummary& NextRun::alone() {
  m_started = true;
  m_summary.folder = m_folder.toStdString();
  return m_summary;
}

QString NextRun::setRunModel(const RunModel& model) {
  const QString note = setModel(model.folder, model.summary);
  m_started = model.started;
  return note;
}

bool NextRun::draftIsForModel() const {
  return m_draft && m_draftFolder == m_folder && m_draft->layers() == layers();
}

nf::Treatments NextRun::draftTreatments() const {
  // The treatments the next run will use are its preset's (Start adds none): the draft refuses, and the
  // timeline's menus do not offer, ending one it does not use.
  return nf::findPreset(m_setup->preset()).removal.treatments();
}

namespace {
// A schedule's events as made, ids aside, in one order: a preset's own, or a draft with what a shorter
// budget set aside (a budget changed back and forth gives back the same, with new ids; an edit does not).
NextRun::MadeEvents eventsAsMade(const std::vector<nf::ScheduleEvent>& events) {
  NextRun::MadeEvents made;
  for (const nf::ScheduleEvent& e : events)
    made.emplace_back(e.step, static_cast<int>(e.action), static_cast<int>(e.site), e.layer);
  std::sort(made.begin(), made.end());
  return made;
}
NextRun::MadeEvents eventsAsMade(const DraftSchedule& draft) {
  std::vector<nf::ScheduleEvent> events = draft.schedule().events;
  events.insert(events.end(), draft.setAside().begin(), draft.setAside().end());
  return eventsAsMade(events);
}
}  // namespace

std::shared_ptr<DraftSchedule> NextRun::resetDraft(QString* note) {
  const bool replacesEdits = m_draft && eventsAsMade(*m_draft) != m_presetEvents;
  const nf::Preset& preset = nf::findPreset(m_setup->preset());
  m_draft = std::make_shared<DraftSchedule>(nf::presetSchedule(preset, layers()), layers(),
                                            m_setup->maxSteps(), draftTreatments());
  m_presetEvents = eventsAsMade(*m_draft);
  m_draftFolder = m_folder;
  if (!note) return m_draft;
  QStringList said;
  if (replacesEdits)
    said << tr("The preset %1's schedule replaced the draft, with its edits.")
                .arg(QString::fromStdString(preset.name));
  if (preset.nLayer != 0 && preset.nLayer != layers())
    said << tr("The preset %1 is made for %2 layers; this model has %3. Choose another preset.")
                .arg(QString::fromStdString(preset.name))
                .arg(preset.nLayer)
                .arg(layers());
  *note = said.join(' ');
  return m_draft;
}

std::shared_ptr<DraftSchedule> NextRun::loadDraft(const QString& path) {
  const std::string file = path.toStdString();
  nf::Schedule schedule = nf::readScheduleFile(file);
  try {
    schedule.validate(layers(), m_setup->maxSteps());
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(file + ": " + e.what());
  }
  m_draft = std::make_shared<DraftSchedule>(schedule, layers(), m_setup->maxSteps(), draftTreatments());
  m_presetEvents.clear();
  m_draftFolder = m_folder;
  return m_draft;
}

const std::shared_ptr<DraftSchedule>& NextRun::trimDraft(QString* note) {
  const size_t dropped = m_draft->trimTo(m_setup->maxSteps()).size();
  if (dropped > 0 && note)
    *note =
        tr("%n event(s) past the last step were set aside: they come back when the steps reach them again",
           "", static_cast<int>(dropped));
  return m_draft;
}

void NextRun::setDatasets(const WindowDialogs::Datasets& d) {
  const bool none = d.train.isEmpty() && d.validation.isEmpty() && d.alternative.isEmpty();
  for (const QString& f : {d.train, d.validation, d.alternative})
    if (!f.isEmpty()) nf::TokenFile::open(f.toStdString());  // throws naming the file and the problem
  if (!none && (d.train.isEmpty() || d.validation.isEmpty()))
    throw std::runtime_error("a training and a validation token file are needed");
  if (const std::string problem = datasetsTokenizerProblem(d); !problem.empty())
    throw std::runtime_error(problem + ": choose token files made with this model's tokenizer");
  m_datasets = d;
  m_setup->setDataDescription(
      none ? QString()
           : tr("train %1, eval %2%3")
                 .arg(QFileInfo(d.train).fileName(), QFileInfo(d.validation).fileName(),
                      d.alternative.isEmpty() ? QString() : ", " + QFileInfo(d.alternative).fileName()));
}

AnalysisSetup NextRun::analysisSetup(const std::string& validationData) const {
  AnalysisSetup setup;
  setup.modelFolder = m_folder.toStdString();
  setup.validationData = validationData.empty() ? m_datasets.validation.toStdString() : validationData;
  setup.datasetsFolder = AppFolders::datasetsFolder(m_folder).toStdString();  // when validationData is ""
  setup.startingModelHere = m_started;
  return setup;
}

void NextRun::refuseWhatCannotStart(const nf::RunConfig& config) const {
  auto refuse = [](const QString& why) { throw std::runtime_error(why.toStdString()); };
  const nf::Preset& preset = nf::findPreset(config.preset);
  if (config.mode == nf::TrainingMode::Remove && preset.nLayer != 0 && preset.nLayer != layers() && m_draft) {
    if (eventsAsMade(*m_draft) == eventsAsMade(nf::presetSchedule(preset, layers()).events))
      refuse(tr("The preset %1's schedule is made for %2 layers; this model has %3, whose other sites would "
                "keep their norms: choose %4, made for its depth, or edit the schedule on the timeline.")
                 .arg(QString::fromStdString(preset.name))
                 .arg(preset.nLayer)
                 .arg(layers())
                 .arg(QString::fromStdString(nf::presetForDepth(layers()).name)));
  }
  if (config.mode == nf::TrainingMode::Remove) {  // the autopilot's removals past the budget, as on the CLI
    try {
      config.schedule.validate(layers(), config.optimizer.maxSteps, config.removal.treatments());
    } catch (const std::invalid_argument& e) {
      refuse(tr("The schedule does not fit the run: %1").arg(QString::fromStdString(e.what())));
    }
  }
  // Token files another tokenizer made (checked when chosen too: here for files made again since). Where
  // that is not certain, the run's other_tokenizer warning compares end-of-text ids, which an instruct
  // model's config may set apart.
  if (const std::string problem = datasetsTokenizerProblem(m_datasets); !problem.empty())
    refuse(tr("%1. Choose token files made with this model's tokenizer (File › Choose Datasets), or none "
              "for the synthetic corpus made for it.")
               .arg(QString::fromStdString(problem)));
  // A device the plan cannot be made for (a GPU this machine or build lacks, a misspelt name). A plan that
  // does not fit starts with the preset's settings, as the CLI's does without --fit.
  if (!m_setup->memoryPlan()) refuse(tr("The memory plan: %1").arg(m_setup->memoryText()));
  nf::WorkerEnvironment workers;
  workers.worldSize = m_setup->workers();
  try {
    nf::batchShare(config.optimizer.microBatch, workers);
  } catch (const std::invalid_argument& e) {
    refuse(tr("The memory plan's micro-batch cannot be shared: %1").arg(QString::fromStdString(e.what())));
  }
}

std::string NextRun::datasetsTokenizerProblem(const WindowDialogs::Datasets& d) const {
  const bool none = d.train.isEmpty() && d.validation.isEmpty() && d.alternative.isEmpty();
  const std::shared_ptr<const nf::Tokenizer> tokenizer =
      none || m_folder.isEmpty() ? nullptr : nf::run::tokenizerIfAny(m_folder.toStdString());
  if (!tokenizer) return {};
  for (const QString& f : {d.train, d.validation, d.alternative}) {
    if (f.isEmpty()) continue;
    const nf::TokenFile file = nf::TokenFile::open(f.toStdString());
    if (file.meta().tokenizerFingerprint.empty()) continue;
    if (std::string problem = nf::otherTokenizerProblem(file, m_summary.shape.eotTokenId, tokenizer.get());
        !problem.empty())
      return problem;
  }
  return {};
}

NextRun::Launch NextRun::launch(const QString& dir) const {
  if (QFileInfo::exists(QString::fromStdString(nf::run::configPath(dir.toStdString()))))
    throw std::runtime_error(
        tr("%1 holds a run already: open it with File › Open Run, or choose another folder.")
            .arg(dir)
            .toStdString());
  std::vector<std::string> eval;
  for (const QString& f : {m_datasets.validation, m_datasets.alternative})
    if (!f.isEmpty()) eval.push_back(f.toStdString());
  // With the autopilot, removals set aside past the budget are its to bring forward (they wait at the last
  // step), as on the CLI.
  std::optional<nf::Schedule> schedule;
  if (m_draft) {
    schedule = m_draft->schedule();
    if (m_setup->autopilot()) {
      // Not one whose site an event of the draft changes the same way since (a removal added at an earlier
      // step): the schedule would change that site twice.
      std::set<std::pair<nf::EventAction, nf::SiteId>> changed;
      for (const nf::ScheduleEvent& e : schedule->events)
        for (const nf::SiteId& site : nf::Schedule::sitesOf(e, layers())) changed.emplace(e.action, site);
      for (const nf::ScheduleEvent& aside : m_draft->setAside()) {
        const std::vector<nf::SiteId> sites = nf::Schedule::sitesOf(aside, layers());
        if (std::none_of(sites.begin(), sites.end(), [&](const nf::SiteId& site) {
              return changed.count({aside.action, site}) > 0;
            }))
          schedule->events.push_back(aside);
      }
    }
  }
  Launch l;
  l.config = m_setup->nextRunConfig(m_folder.toStdString(), m_summary.shape, m_datasets.train.toStdString(),
                                    eval, schedule);
  refuseWhatCannotStart(l.config);
  if (m_datasets.train.isEmpty()) {
    const std::string folder = m_folder.toStdString(),
                      datasets = AppFolders::datasetsFolder(m_folder).toStdString();
    l.prepare = [folder, datasets](nf::RunConfig& config, const nf::ProgressFn& progress) {
      const nf::Datasets d = nf::prepareSyntheticDatasets(datasets, folder, progress);
      config.trainData = d.train;
      config.evalData = {d.val, d.alt};
    };
  }
  return l;
}

#include "views/RunSetupView.h"

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QFormLayout>
#include <QLabel>
#include <QMenu>
#include <QSpinBox>
#include <QStackedLayout>
#include <QToolButton>
#include <algorithm>

#include "analysis/tracked_analyses.h"
#include "model/device_memory.h"
#include "views/TrackedAnalysisText.h"

namespace {
QString trackedTitles(const std::vector<std::string>& names) {
  QStringList titles;
  for (const std::string& name : names) titles << TrackedAnalysisText::title(name);
  return titles.join(", ");
}
}  // namespace

RunSetupView::RunSetupView(QWidget* parent) : QWidget(parent) {
  m_mode = new QComboBox(this);
  m_mode->addItem(QString(), static_cast<int>(nf::TrainingMode::Remove));
  m_mode->addItem(QString(), static_cast<int>(nf::TrainingMode::Finetune));
  m_preset = new QComboBox(this);
  m_preset->setObjectName("preset");
  for (const nf::Preset& p : nf::presets()) m_preset->addItem(QString::fromStdString(p.name));
  m_steps = new QSpinBox(this);
  m_steps->setObjectName("steps");
  m_steps->setRange(1, 10'000'000);
  m_steps->setKeyboardTracking(false);  // a number typed is one change, not one per digit
  m_device = new QComboBox(this);
  m_device->setObjectName("device");
  m_device->setEditable(true);  // "cuda:1" and the like
  m_device->addItems({"cpu", "cuda"});
  m_workers = new QSpinBox(this);
  m_workers->setObjectName("workers");
  m_workers->setRange(1, 64);
  m_autopilot = new QCheckBox(this);
  m_track = new QToolButton(this);
  m_track->setPopupMode(QToolButton::InstantPopup);
  m_track->setToolButtonStyle(Qt::ToolButtonTextOnly);
  // Never wider than the dock: the analyses' names are short, the tooltip and the menu say them whole.
  m_track->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
  m_track->setMinimumWidth(80);
  auto* trackMenu = new QMenu(m_track);
  for (const nf::TrackedAnalysis& a : nf::trackedAnalyses()) {
    QAction* action = trackMenu->addAction(QString::fromStdString(a.name));
    action->setData(QString::fromStdString(a.name));
    action->setCheckable(true);
    action->setChecked(a.name == "nmae" || a.name == "sinks" || a.name == "pos0-ratio");
    connect(action, &QAction::toggled, this, [this] { updateTrackText(); });
  }
  m_track->setMenu(trackMenu);
  m_description = new QLabel(this);
  m_description->setWordWrap(true);
  m_data = new QLabel(this);
  m_data->setWordWrap(true);
  m_folder = new QLabel(this);
  m_folder->setWordWrap(true);
  m_memory = new QLabel(this);
  m_memory->setWordWrap(true);
  // Two pages: the next run's form (a model is shown), or the settings of the run shown, to read.
  m_formPage = new QWidget(this);
  m_form = new QFormLayout(m_formPage);
  m_runSettings = new QLabel(this);
  m_runSettings->setObjectName("runSettings");
  m_runSettings->setWordWrap(true);
  m_runSettings->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  m_runSettings->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_runSettings->setMargin(9);  // as far from the dock's edge as the form's fields
  m_pages = new QStackedLayout(this);
  m_pages->addWidget(m_formPage);
  m_pages->addWidget(m_runSettings);
  for (QWidget* field : std::initializer_list<QWidget*>{m_mode, m_preset, m_steps, m_autopilot, m_track,
                                                        m_device, m_workers, m_memory, m_data, m_folder}) {
    if (field == m_data) m_form->addRow(m_description);
    m_form->addRow(new QLabel(this), field);
  }
  connect(m_preset, &QComboBox::currentTextChanged, this, [this] {
    const nf::Preset& p = nf::findPreset(preset());
    const QSignalBlocker block(m_steps);  // presetChanged rebuilds the draft for the new budget anyway
    m_steps->setValue(static_cast<int>(presetSteps(p)));
    m_description->setText(describePreset(p));
    updateMemoryPlan();
    Q_EMIT presetChanged();
  });
  connect(m_steps, qOverload<int>(&QSpinBox::valueChanged), this, &RunSetupView::stepsChanged);
  connect(m_workers, qOverload<int>(&QSpinBox::valueChanged), this, [this] { m_workersChosen = true; });
  connect(m_device, &QComboBox::currentTextChanged, this, [this](const QString& device) {
    // One worker per GPU found for "cuda"; a chosen GPU or the CPU: one, unless the user says more (the
    // CPU after "cuda" had kept its GPU count).
    const QSignalBlocker notChosen(m_workers);
    if (device == "cuda")
      m_workers->setValue(std::max(1, nf::cudaDeviceCount()));
    else if (device.startsWith("cuda:") || !m_workersChosen)
      m_workers->setValue(1);
    updateMemoryPlan();
    Q_EMIT deviceChanged();
  });
  connect(m_mode, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
    m_autopilot->setEnabled(mode() == nf::TrainingMode::Remove);  // it times removals
    updateMemoryPlan();
  });
  matchModelDepth(4);
  retranslate();
}

// A preset's description in the GUI's language (the engine's, core/train/presets.cpp, is English).
QString RunSetupView::describePreset(const nf::Preset& p) {
  if (p.name == "tiny")
    return tr(
        "4-layer models such as the bundled tiny GPT-2 and LLaMA: the MLP, QK and V norms one layer every 10 "
        "steps, then the final norm, then recovery; 32×128 tokens per step");
  if (p.name == "small")
    return tr(
        "6-layer models of 256 tokens (the small-models sweep): LN_mlp, LN_qk one layer every 15 steps, LN_v "
        "every 20, LN_f, then recovery; 32×256 tokens per step");
  if (p.name == "blog-v2")
    return tr(
        "the blog's v2 recipe for GPT-2 Small: ln_2, ln_1 qk, ln_1 v, ln_f (all layers at once) with "
        "position-0 and end-of-text treatments, then EOT off, then position 0 off");
  if (p.name == "pythia-70m")
    return tr(
        "Pythia-70M (Appendix C): GPT-2 Small's settings, the schedule by the depth rule for 6 blocks "
        "(LN_mlp from step 20, LN_qk from 32, LN_v from 44, LN_f at 62)");
  if (p.name == "by-depth")
    return tr(
        "any model: GPT-2 Small's settings with the paper's schedule rule for the model's depth (the "
        "rule that gives Table 4's schedules for 12 to 48 blocks)");
  if (p.optimizer.context == 1024)  // the paper's Table 4 rows
    return tr("the paper's schedule for %1 (Table 4): %2×%3 sequences of 1024 tokens per step")
        .arg(QString::fromStdString(p.name))
        .arg(p.optimizer.microBatch)
        .arg(p.optimizer.accumulation);
  return QString::fromStdString(p.description);
}

std::vector<std::string> RunSetupView::trackedAnalyses() const {
  std::vector<std::string> names;
  for (const QAction* action : m_track->menu()->actions())
    if (action->isChecked()) names.push_back(action->data().toString().toStdString());
  return names;
}

void RunSetupView::setTrackedAnalyses(const std::vector<std::string>& names) {
  for (QAction* action : m_track->menu()->actions())
    action->setChecked(std::count(names.begin(), names.end(), action->data().toString().toStdString()) > 0);
}

void RunSetupView::updateTrackText() {
  const QString titles = trackedAnalyses().empty() ? tr("nothing") : trackedTitles(trackedAnalyses());
  QStringList names;  // as --track takes them
  for (const std::string& name : trackedAnalyses()) names << QString::fromStdString(name);
  m_track->setText(names.isEmpty() ? tr("nothing") : names.join(", "));
  m_track->setToolTip(tr("Analyses measured while the run trains, every twentieth of the run and at each "
                         "removal event, and plotted under the training curves: %1")
                          .arg(titles));
}

nf::TrainingMode RunSetupView::mode() const {
  return static_cast<nf::TrainingMode>(m_mode->currentData().toInt());
}
std::string RunSetupView::preset() const { return m_preset->currentText().toStdString(); }
int RunSetupView::workers() const { return m_workers->value(); }
int64_t RunSetupView::maxSteps() const { return m_steps->value(); }
void RunSetupView::setMaxSteps(int64_t steps) { m_steps->setValue(static_cast<int>(steps)); }

QString RunSetupView::device() const { return m_device->currentText().trimmed(); }

// The preset's step budget; by-depth's follows the model's depth, as the engine sets it (makeRunConfig).
int64_t RunSetupView::presetSteps(const nf::Preset& p) const {
  return p.nLayer == 0 && m_shape ? nf::stepsForDepth(m_shape->nLayer) : p.optimizer.maxSteps;
}

void RunSetupView::matchModelDepth(int layers) {
  const nf::Preset& chosen = nf::presetForDepth(layers);
  m_preset->setCurrentText(QString::fromStdString(chosen.name));
  const QSignalBlocker block(m_steps);
  m_steps->setValue(static_cast<int>(presetSteps(chosen)));
  m_description->setText(describePreset(chosen));
}

void RunSetupView::setModelShape(const nf::ModelShape& shape) {
  m_shape = shape;
  updateMemoryPlan();
}

void RunSetupView::updateMemoryPlan() {
  m_plan.reset();
  m_planProblem.clear();
  if (m_shape) {
    nf::RunChoices choices;
    choices.device = device().toStdString();
    choices.schedule = nf::Schedule{};  // memory does not depend on it: a preset of another depth plans too
    try {
      const nf::RunConfig config = nf::makeRunConfig(preset(), mode(), *m_shape, choices);
      m_freeBytes = nf::deviceMemory(config.device).freeBytes;
      m_plan = nf::planTrainingMemory(nf::planRequest(config, *m_shape, m_freeBytes));
    } catch (const std::exception& e) {  // a device name half typed, or one this build cannot use
      m_planProblem = QString::fromStdString(e.what()).section('\n', 0, 0);  // LibTorch's: no backtrace
    }
  }
  m_memory->setText(memoryText());
}

bool RunSetupView::autopilot() const { return m_autopilot->isChecked(); }
void RunSetupView::setAutopilot(bool on) { m_autopilot->setChecked(on); }

void RunSetupView::setEditable(bool editable) { m_formPage->setEnabled(editable); }

bool RunSetupView::isEditable() const { return m_formPage->isEnabled(); }

void RunSetupView::showRun(bool run, const nf::RunConfig* settings) {
  m_shownRun = settings ? std::optional<nf::RunConfig>(*settings) : std::nullopt;
  m_pages->setCurrentIndex(run ? 1 : 0);
  retranslate();
}

QString RunSetupView::runSettingsText() const {
  if (!m_shownRun) return tr("<i>The run's settings come with its first answer.</i>");
  const nf::RunConfig& c = *m_shownRun;
  const nf::OptimizerSettings& o = c.optimizer;
  QStringList eval;
  for (const std::string& f : c.evalData) eval << QString::fromStdString(f).section('/', -1);
  return tr("<b>The run shown was set up with</b><br>%1 · preset %2 · %3 steps · %4<br>micro-batch %5 × %6 "
            "sequences of %7 tokens · learning rate %8 → %9 · warm-up %10 steps<br>data: %11; evaluated on "
            "%12<p><i>Its settings are its own (config.json). To set up a new run, open a model (File › "
            "Open Model Folder or Open Recent).</i>")
             .arg(QString::fromStdString(nf::trainingModeName(c.mode)), QString::fromStdString(c.preset))
             .arg(o.maxSteps)
             .arg(QString::fromStdString(c.device))
             .arg(o.microBatch)
             .arg(o.accumulation)
             .arg(o.context)
             .arg(o.lr, 0, 'g', 3)
             .arg(o.minLr, 0, 'g', 3)
             .arg(o.warmupSteps)
             .arg(c.trainData.empty() ? tr("the synthetic corpus")
                                      : QString::fromStdString(c.trainData).section('/', -1),
                  eval.isEmpty()
                      ? (c.trainData.empty() ? tr("its validation sets, made with it") : tr("nothing"))
                      : eval.join(", ")) +
         (c.autopilot.enabled
              ? "<br>" +
                    tr("removals timed by the autopilot: within %1 nats, %2–%3 steps apart, up to %4 at once")
                        .arg(c.autopilot.tolerance)
                        .arg(c.autopilot.minGap)
                        .arg(c.autopilot.maxGap)
                        .arg(c.autopilot.maxGroup) +
                    (c.autopilot.patience > 0 ? tr("; then training until the loss, averaged over %1 steps "
                                                   "at a time, stops improving")
                                                    .arg(c.autopilot.patience)
                                              : QString())
              : QString()) +
         (c.tracking.analyses.empty() ? QString()
          : c.tracking.interval(o.maxSteps) == 1
              ? "<br>" + tr("tracked: %1, at every step").arg(trackedTitles(c.tracking.analyses))
              : "<br>" + tr("tracked: %1, every %2 steps and at each removal")
                             .arg(trackedTitles(c.tracking.analyses))
                             .arg(c.tracking.interval(o.maxSteps)));
}

void RunSetupView::showMemoryPlan(bool shown) {
  m_showPlan = shown;
  m_memory->setText(memoryText());
}

nf::RunConfig RunSetupView::nextRunConfig(const std::string& model, const nf::ModelShape& shape,
                                          const std::string& train, const std::vector<std::string>& eval,
                                          const std::optional<nf::Schedule>& schedule) {
  nf::RunChoices choices;
  choices.model = model;
  choices.device = device().toStdString();
  choices.maxSteps = maxSteps();
  choices.schedule = schedule;
  choices.trainData = train;
  choices.evalData = eval;  // evaluations and checkpoints as the engine sets them, for the CLI too
  if (m_autopilot->isChecked() && mode() == nf::TrainingMode::Remove) {
    choices.autopilot = nf::AutopilotSettings{};
    choices.autopilot->enabled = true;
  }
  if (!trackedAnalyses().empty()) {
    choices.tracking = nf::TrackingSettings{};
    choices.tracking->analyses = trackedAnalyses();
  }
  nf::RunConfig c = nf::makeRunConfig(preset(), mode(), shape, choices);
  // The settings this pane shows: planned again now, as free memory may have changed since.
  updateMemoryPlan();
  if (m_plan && m_plan->fits) nf::applyPlan(*m_plan, c);
  return c;
}

QString RunSetupView::memoryText() const {
  if (!m_shape || !m_showPlan) return QString();
  if (!m_plan) return tr("cannot plan for %1: %2").arg(device(), m_planProblem);
  if (!m_plan->fits)
    return tr("does not fit in the %1 free on %2: %3")
        .arg(QString::fromStdString(nf::formatBytes(m_freeBytes)), device(),
             QString::fromStdString(m_plan->reason));
  return tr("%1 predicted of %2 free · micro-batch %3 × %4 · activation checkpointing %5")
      .arg(QString::fromStdString(nf::formatBytes(m_plan->estimate.total)),
           QString::fromStdString(nf::formatBytes(m_freeBytes)))
      .arg(m_plan->microBatch)
      .arg(m_plan->accumulation)
      .arg(m_plan->activationCheckpointing ? tr("on") : tr("off"));
}

void RunSetupView::commitTypedValues() { m_steps->interpretText(); }

void RunSetupView::setDataDescription(const QString& text) {
  m_dataText = text;
  retranslate();
}

void RunSetupView::setRunFolder(const QString& folder) {
  m_runFolder = folder;
  retranslate();
}

void RunSetupView::retranslate() {
  m_mode->setItemText(0, tr("remove the norms (the protocol)"));
  m_mode->setItemText(1, tr("fine-tune, nothing removed (control)"));
  m_mode->setToolTip(tr("The vanilla control uses the same data, learning rate and steps"));
  auto label = [this](QWidget* field, const QString& text) {
    if (auto* l = qobject_cast<QLabel*>(m_form->labelForField(field))) l->setText(text);
  };
  label(m_mode, tr("Mode"));
  label(m_preset, tr("Preset"));
  label(m_steps, tr("Steps"));
  label(m_device, tr("Device"));
  label(m_workers, tr("Workers"));
  label(m_autopilot, tr("Timing"));
  label(m_track, tr("Track"));
  for (QAction* action : m_track->menu()->actions())
    action->setText(TrackedAnalysisText::title(action->data().toString().toStdString()));
  updateTrackText();
  m_autopilot->setText(tr("Autopilot: each removal when the loss has recovered"));
  m_autopilot->setToolTip(
      tr("The schedule gives the order of the removals and the first one's step; each later one fires once "
         "the smoothed loss is back within 0.02 nats of its level before the last (at least 10, at most 80 "
         "steps later), several sites of a kind at once when recovery is quick. The timeline shows its "
         "decisions as they are made (docs/TRAINING.md, \"The autopilot\")."));
  label(m_memory, tr("Memory"));
  label(m_data, tr("Data"));
  label(m_folder, tr("Run folder"));
  m_data->setText(m_dataText.isEmpty()
                      ? tr("synthetic corpus (seed 1), tokenized with the model's tokenizer; "
                           "made on the first start")
                      : m_dataText);
  m_folder->setText(m_runFolder.isEmpty() ? tr("a new folder per run") : m_runFolder);
  m_device->setToolTip(tr("cpu, cuda or cuda:N"));
  m_workers->setToolTip(
      tr("Processes that train this run together, each on its share of every batch, with the same result "
         "as one: on cuda one per GPU, on the CPU several processes (on a machine with few cores two "
         "processes can use them better than one). The batch must split evenly over them."));
  m_memory->setText(memoryText());
  m_runSettings->setText(runSettingsText());
  m_description->setText(describePreset(nf::findPreset(preset())));
  m_memory->setToolTip(
      tr("The peak memory of a training step predicted on this device, and the micro-batch × accumulation "
         "and activation checkpointing that Start uses: they keep the preset's sequences per step and fit "
         "%1% of the free memory.")
          .arg(qRound(nf::kUsableMemoryFraction * 100)));
}

void RunSetupView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QWidget::changeEvent(event);
}

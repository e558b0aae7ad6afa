// The next run's settings: mode (remove or the vanilla fine-tune control), preset (its optimizer, removal
// settings and schedule), steps, device, and where its data and run folder come from; and the memory plan
// for them (train/memory_plan.h): the peak predicted on the device and the micro-batch × accumulation
// and activation checkpointing that Start uses. While a run is shown: that run's own settings, to read.
#pragma once
#include <QWidget>
#include <optional>

#include "train/memory_plan.h"
#include "train/settings.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QSpinBox;
class QToolButton;
class QStackedLayout;

class RunSetupView : public QWidget {
  Q_OBJECT
 public:
  explicit RunSetupView(QWidget* parent = nullptr);

  nf::TrainingMode mode() const;
  std::string preset() const;
  int64_t maxSteps() const;
  void setMaxSteps(int64_t steps);
  // Takes what is typed in the steps box but not yet entered (Start from the toolbar leaves the focus
  // there): the run would otherwise train the budget shown before.
  void commitTypedValues();
  QString device() const;
  // Workers training the run together, each on its share of every batch: the GPUs found on cuda,
  // 1 on the CPU unless chosen (docs/TRAINING.md, "Several workers").
  int workers() const;
  // The analyses the next run tracks (analysis/tracked_analyses.h; by default the three cheap ones), at
  // the engine's default cadence: a twentieth of the run and each removal event.
  std::vector<std::string> trackedAnalyses() const;
  void setTrackedAnalyses(const std::vector<std::string>& names);
  bool autopilot() const;  // the next removal's steps are decided while it trains
  void setAutopilot(bool on);
  // Picks the preset made for this depth (tiny for 4 layers, gpt2 for 12, …) and its step budget.
  void matchModelDepth(int layers);
  void setDataDescription(const QString& text);
  void setRunFolder(const QString& folder);  // "" : a new folder per run
  QString runFolder() const { return m_runFolder; }
  // The model the memory plan is for (its shape, not its weights).
  void setModelShape(const nf::ModelShape& shape);
  // Plans again with the device's free memory now (Start calls it: memory may have changed since).
  void updateMemoryPlan();
  // The plan for the current settings; none without a model, or for a device that cannot be asked.
  const std::optional<nf::MemoryPlan>& memoryPlan() const { return m_plan; }
  const std::optional<nf::ModelShape>& modelShape() const { return m_shape; }  // the plan's
  QString memoryText() const;
  void showMemoryPlan(bool shown);  // off while a run on another machine is shown
  // Whether the next run's settings can be changed (the run shown's, when shown, stay readable).
  void setEditable(bool editable);
  bool isEditable() const;
  // A run is shown (`run`): its own settings, to read, instead of the form, or while they are on their way
  // (a connected run not yet answered: `settings` null) a line saying so, not another run's. Else the form
  // of the next run.
  void showRun(bool run, const nf::RunConfig* settings);
  // The next run's settings the engine's way (nf::makeRunConfig, as the CLI makes them): the preset, mode,
  // steps and device chosen here, the memory plan applied (planned again now: free memory may have changed).
  nf::RunConfig nextRunConfig(const std::string& model, const nf::ModelShape& shape, const std::string& train,
                              const std::vector<std::string>& eval,
                              const std::optional<nf::Schedule>& schedule);

 Q_SIGNALS:
  void presetChanged();  // the draft schedule is rebuilt from the preset
  void stepsChanged();   // the draft keeps its events under the new step budget
  void deviceChanged();

 protected:
  void changeEvent(QEvent* event) override;
  QSize sizeHint() const override { return {320, 420}; }  // a narrow dock: the plots get the room

 private:
  static QString describePreset(const nf::Preset& preset);
  int64_t presetSteps(const nf::Preset& preset) const;
  void retranslate();
  QComboBox* m_mode;
  QComboBox* m_preset;
  QSpinBox* m_steps;
  QComboBox* m_device;
  QSpinBox* m_workers;
  bool m_workersChosen = false;  // the user set the worker count (a device change then keeps it on the CPU)
  QCheckBox* m_autopilot;        // the next removal times itself (schedule/autopilot.h)
  QToolButton* m_track;          // its menu: one checkable action per tracked analysis
  void updateTrackText();
  QLabel* m_description;
  QLabel* m_data;
  QLabel* m_folder;
  QLabel* m_memory;
  QFormLayout* m_form;
  QString m_runFolder, m_dataText;
  std::optional<nf::ModelShape> m_shape;
  std::optional<nf::MemoryPlan> m_plan;
  int64_t m_freeBytes = 0;
  QString runSettingsText() const;
  bool m_showPlan = true;
  QStackedLayout* m_pages;
  QWidget* m_formPage;
  QLabel* m_runSettings;
  std::optional<nf::RunConfig> m_shownRun;
  QString m_planProblem;  // why there is no plan: the device could not be asked
};

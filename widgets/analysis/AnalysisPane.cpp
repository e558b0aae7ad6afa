#include "analysis/AnalysisPane.h"

#include <QEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QStackedWidget>
#include <QVBoxLayout>

#include "views/Plots.h"

AnalysisPane::AnalysisPane(AnalysisRunner* runner, const QString& key, QWidget* parent)
    : QWidget(parent), m_runner(runner), m_key(key) {
  m_status = new QLabel(this);
  m_status->setWordWrap(true);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_progress = new QProgressBar(this);
  m_progress->setMaximumWidth(140);
  m_progress->setTextVisible(false);
  m_progress->hide();
  m_refresh = new QPushButton(this);
  connect(m_refresh, &QPushButton::clicked, this, &AnalysisPane::refresh);
  auto* header = new QHBoxLayout;
  header->addWidget(m_status, 1);
  header->addWidget(m_progress);
  header->addWidget(m_refresh);
  m_emptyText = new QLabel(this);
  m_emptyText->setWordWrap(true);
  m_emptyText->setAlignment(Qt::AlignCenter);  // no layout alignment: it would break the wrapped height
  m_compute = new QPushButton(this);
  connect(m_compute, &QPushButton::clicked, this, &AnalysisPane::refresh);
  auto* empty = new QWidget(this);
  auto* emptyLayout = new QVBoxLayout(empty);
  emptyLayout->addStretch(1);
  emptyLayout->setContentsMargins(24, 0, 24, 0);
  emptyLayout->addWidget(m_emptyText);
  emptyLayout->addWidget(m_compute, 0, Qt::AlignHCenter);
  emptyLayout->addStretch(2);
  auto* result = new QWidget(this);
  m_body = new QVBoxLayout(result);
  m_body->setContentsMargins(0, 0, 0, 0);
  m_pages = new QStackedWidget(this);
  m_pages->addWidget(empty);
  m_pages->addWidget(result);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(header);
  layout->addWidget(m_pages, 1);

  connect(runner, &AnalysisRunner::sourceChanged, this, [this] {
    m_sourceChanged = true;
    updateStatus();
  });
  connect(runner, &AnalysisRunner::modelReplaced, this, [this] {  // back to what it will compute
    m_hasResult = m_sourceChanged = m_computing = false;  // (a job of the model before is not this one's)
    m_progress->hide();
    m_error.clear();
    m_provenance.clear();
    m_pages->setCurrentIndex(0);
    updateStatus();
  });
  connect(runner, &AnalysisRunner::inputsChanged, this, &AnalysisPane::markInputsChanged);
  connect(runner, &AnalysisRunner::availabilityChanged, this, [this] {
    updateEmptyText();
    updateStatus();
  });
  connect(runner, &AnalysisRunner::started, this, [this](const QString& key) {
    if (key != m_key) return;
    m_computing = true;
    m_error.clear();
    m_progress->setRange(0, 0);
    m_progress->show();
    updateStatus();
  });
  connect(runner, &AnalysisRunner::progress, this, [this](const QString& key, qint64 done, qint64 total) {
    if (key != m_key || total <= 0) return;
    m_progress->setRange(0, 1000);
    m_progress->setValue(static_cast<int>(1000 * done / total));
  });
  auto finish = [this] {
    m_computing = false;
    m_progress->hide();
    updateStatus();
  };
  connect(runner, &AnalysisRunner::finished, this, [this, finish](const QString& key) {
    if (key == m_key) finish();
  });
  connect(runner, &AnalysisRunner::failed, this, [this, finish](const QString& key, const QString& message) {
    if (key != m_key) return;
    m_error = message;
    finish();
  });
  updateStatus();
}

void AnalysisPane::refresh() {
  if (m_runner->availability() != AnalysesCan::Compute) return;  // the pane says why
  m_error.clear();
  m_requestedInputs = m_inputs;
  m_runner->request(m_key, makeWork());
}

void AnalysisPane::markInputsChanged() {
  ++m_inputs;
  updateStatus();
}

void AnalysisPane::setCurrentStep(int64_t step) {
  // The run went back (a rollback after a divergence): figures of a step it left are of a model now gone,
  // even once it trains past that step again.
  if (step < m_currentStep && m_shownStep > step) m_sourceChanged = true;
  m_currentStep = step;
  updateStatus();
}

bool AnalysisPane::isStale() const {
  // A saved model (step −1) never moves on; a run's model does, and any model can be replaced.
  return m_hasResult &&
         (m_sourceChanged || m_shownInputs != m_inputs || (m_shownStep >= 0 && m_currentStep > m_shownStep));
}

QString AnalysisPane::statusText() const { return m_status->text(); }

namespace {
// The engine's header phrases (snapshot.cpp normSummary, token_sequences.cpp) in the GUI's language.
QString translatedNorms(const std::string& norms) {
  const QString n = QString::fromStdString(norms);
  static const QRegularExpression allFake(QStringLiteral("^LN-free \\((\\S+) at all (\\d+) sites\\)$"));
  static const QRegularExpression someFake(QStringLiteral("^(\\d+) of (\\d+) sites (\\S+)$"));
  if (const auto m = allFake.match(n); m.hasMatch())
    return AnalysisPane::tr("LN-free (%1 at all %2 sites)").arg(m.captured(1), m.captured(2));
  static const QRegularExpression someRamping(
      QStringLiteral("^(\\d+) of (\\d+) sites (\\S+), (\\d+) ramping$"));
  if (const auto m = someFake.match(n); m.hasMatch())
    return AnalysisPane::tr("%1 of %2 sites %3").arg(m.captured(1), m.captured(2), m.captured(3));
  if (const auto m = someRamping.match(n); m.hasMatch())
    return AnalysisPane::tr("%1 of %2 sites %3, %4 ramping")
        .arg(m.captured(1), m.captured(2), m.captured(3), m.captured(4));
  static const QRegularExpression mixRamping(QStringLiteral("^(.+), (\\d+) ramping$"));  // kinds by name
  if (const auto m = mixRamping.match(n); m.hasMatch())
    return AnalysisPane::tr("%1, %2 ramping").arg(m.captured(1), m.captured(2));
  if (n == "LN-free (folded)") return AnalysisPane::tr("LN-free (folded)");
  static const QRegularExpression standard(
      QStringLiteral("^LN-free \\(standard form: (\\S+) with a huge ε\\)$"));
  if (const auto m = standard.match(n); m.hasMatch())
    return AnalysisPane::tr("LN-free (standard form: %1 with a huge ε)").arg(m.captured(1));
  if (n == "LN-free") return AnalysisPane::tr("LN-free");
  return n;  // "LayerNorm", "RMSNorm": names
}

QString translatedData(const std::string& data) {
  QString d = QString::fromStdString(data);
  // The parts the engine may add (analysis_request.cpp, token_sequences.cpp), each translated on its own.
  QString suffix;
  static const QRegularExpression sequence(QStringLiteral(", sequence (\\d+)$"));
  if (const auto m = sequence.match(d); m.hasMatch()) {
    suffix = AnalysisPane::tr(", sequence %1").arg(m.captured(1));
    d.truncate(m.capturedStart());
  }
  static const QRegularExpression fewer(
      QStringLiteral(" \\((\\d+) were asked for: the file holds no more that do not overlap\\)$"));
  if (const auto m = fewer.match(d); m.hasMatch()) {
    suffix = AnalysisPane::tr(" (%1 were asked for: the file holds no more that do not overlap)")
                 .arg(m.captured(1)) +
             suffix;
    d.truncate(m.capturedStart());
  }
  static const QRegularExpression chunks(
      QStringLiteral("^(.*): (\\d+) chunks? × (\\d+) tokens from the start$"));
  static const QRegularExpression documents(
      QStringLiteral("^(.*): (\\d+) documents? × (\\d+) tokens, each from the end-of-text token before it$"));
  static const QRegularExpression bosDocuments(QStringLiteral(
      "^(.*): (\\d+) documents? × (\\d+) tokens, each from the begin-of-sequence token that starts it$"));
  static const QRegularExpression ioi(QStringLiteral("^IOI prompt set (.*)$"));
  static const QRegularExpression ioiFrame(QStringLiteral("^IOI prompts: (.*)$"));
  if (const auto m = chunks.match(d); m.hasMatch())
    d = (m.captured(2) == "1" ? AnalysisPane::tr("%1: %2 sequence × %3 tokens from the start")
                              : AnalysisPane::tr("%1: %2 sequences × %3 tokens from the start"))
            .arg(m.captured(1), m.captured(2), m.captured(3));
  else if (const auto m = documents.match(d); m.hasMatch())
    d = (m.captured(2) == "1"
             ? AnalysisPane::tr("%1: %2 document × %3 tokens, each from the end-of-text token before it")
             : AnalysisPane::tr("%1: %2 documents × %3 tokens, each from the end-of-text token before it"))
            .arg(m.captured(1), m.captured(2), m.captured(3));
  else if (const auto m = bosDocuments.match(d); m.hasMatch())
    d = (m.captured(2) == "1"
             ? AnalysisPane::tr(
                   "%1: %2 document × %3 tokens, each from the begin-of-sequence token that starts it")
             : AnalysisPane::tr(
                   "%1: %2 documents × %3 tokens, each from the begin-of-sequence token that starts it"))
            .arg(m.captured(1), m.captured(2), m.captured(3));
  else if (const auto m = ioi.match(d); m.hasMatch())
    d = AnalysisPane::tr("IOI prompt set %1").arg(m.captured(1));
  else if (const auto m = ioiFrame.match(d); m.hasMatch())
    d = AnalysisPane::tr("IOI prompts: %1").arg(m.captured(1));
  return d + suffix;
}
}  // namespace

void AnalysisPane::showHeader(int64_t step, const std::string& model, const std::string& norms,
                              const std::string& data) {
  m_hasResult = true;
  m_pages->setCurrentIndex(1);
  m_sourceChanged = false;
  m_shownInputs = m_requestedInputs;
  m_shownStep = step;
  m_model = model;
  m_norms = norms;
  m_data = data;
  // Every export of these figures says what they are of.
  m_provenance = {QStringLiteral("analysis: ") + m_key,
                  QStringLiteral("model: ") + QString::fromStdString(model),
                  QStringLiteral("step: ") + (step >= 0 ? QString::number(step) : "saved model"),
                  QStringLiteral("norms: ") + QString::fromStdString(norms),
                  QStringLiteral("data: ") + QString::fromStdString(data)};
  for (QCustomPlot* plot : plots()) setPlotProvenance(plot, m_provenance);
  updateStatus();
  Q_EMIT resultShown();
}

void AnalysisPane::updateStatus() {
  QString text;
  const QString whyNot = whyNotComputable(m_runner->availability());
  m_refresh->setVisible(m_hasResult);  // before a result the page's own button computes
  m_refresh->setEnabled(whyNot.isEmpty());
  m_compute->setEnabled(!m_computing && whyNot.isEmpty());
  if (!m_hasResult) {
    text = QString();  // the page below says it
  } else {
    text = (m_shownStep >= 0 ? tr("<b>Step %1</b>").arg(m_shownStep) : tr("<b>Saved model</b>")) + " · " +
           tr("%1 · %2 · %3")
               .arg(QString::fromStdString(m_model), translatedNorms(m_norms), translatedData(m_data))
               .toHtmlEscaped();
    if (isStale())
      text += " · <span style='color:#d35400'><b>" +
              (m_sourceChanged             ? tr("stale: the model has changed since")
               : m_shownInputs != m_inputs ? tr("stale: its settings have changed since")
                                           : tr("stale: the model is at step %1").arg(m_currentStep)) +
              "</b></span>";
  }
  // On a run trained here the analysis takes its share of the processor (or GPU) while it computes.
  if (m_computing)
    text += " · <i>" +
            (m_runner->computesBesideTraining() ? tr("computing… (training here slows meanwhile: they share "
                                                     "the processor)")
                                                : tr("computing…")) +
            "</i>";
  if (m_hasResult && !whyNot.isEmpty()) text += "<br><i>" + whyNot.toHtmlEscaped() + "</i>";
  if (!m_error.isEmpty())
    text += "<br><span style='color:#c0392b'>" + tr("Failed: %1").arg(m_error.toHtmlEscaped()) + "</span>";
  m_status->setText(text);
}

void AnalysisPane::retranslate() {
  m_refresh->setText(tr("Refresh"));
  m_refresh->setToolTip(tr("Compute this analysis on the model as it is now"));
  m_compute->setText(tr("Compute now"));
  m_compute->setToolTip(m_refresh->toolTip());
  updateEmptyText();
  updateStatus();
}

void AnalysisPane::updateEmptyText() {
  QString note = whyNotComputable(m_runner->availability());
  if (note.isEmpty())
    note =
        tr("Not computed yet for this model. It takes seconds on the bundled model; "
           "Refresh analyses (toolbar) computes every pane.");
  m_emptyText->setText("<p><b>" + title().toHtmlEscaped() + "</b></p><p>" + description() + "</p><p><i>" +
                       note.toHtmlEscaped() + "</i></p>");
}

QString AnalysisPane::whyNotComputable(AnalysesCan can) {
  switch (can) {
    case AnalysesCan::Compute:
      return QString();
    case AnalysesCan::NoModel:
      return tr("No model is open: open a model folder or a run to compute this analysis.");
    case AnalysesCan::WaitForRun:
      return tr("The run is not ready yet: its model can be analysed once it trains.");
    case AnalysesCan::ModelElsewhere:
      return tr(
          "This run's model is not on this machine: open the run where it trains, or connect to it, "
          "to compute analyses.");
    case AnalysesCan::RunEnded:
      return tr(
          "The connected run has ended and its server answers no more: open its run folder or model "
          "on the machine that trained it to analyse it.");
  }
  return QString();
}

void AnalysisPane::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QWidget::changeEvent(event);
}

void AnalysisPane::exportInteractively(const PaintedFigure& figure, QWidget* dialogParent) {
  const QString path =
      QFileDialog::getSaveFileName(dialogParent, tr("Export"), figure.name + ".svg",
                                   tr("SVG drawing (*.svg);;PNG image (*.png);;CSV data (*.csv)"));
  QString error;
  if (!path.isEmpty() && !figure.write(path, &error))
    QMessageBox::warning(dialogParent, tr("Export failed"), error);
}

#include "AnalysisPane.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

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
  m_body = new QVBoxLayout;
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(header);
  layout->addLayout(m_body, 1);

  connect(runner, &AnalysisRunner::sourceChanged, this, [this] {
    m_sourceChanged = true;
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
  m_error.clear();
  m_runner->request(m_key, makeWork());
}

void AnalysisPane::setCurrentStep(int64_t step) {
  m_currentStep = step;
  updateStatus();
}

bool AnalysisPane::isStale() const {
  // A saved model (step −1) never moves on; a run's model does, and any model can be replaced.
  return m_hasResult && (m_sourceChanged || (m_shownStep >= 0 && m_currentStep > m_shownStep));
}

QString AnalysisPane::statusText() const { return m_status->text(); }

void AnalysisPane::showHeader(int64_t step, const std::string& model, const std::string& norms,
                              const std::string& data) {
  m_hasResult = true;
  m_sourceChanged = false;
  m_shownStep = step;
  m_description =
      tr("%1 · %2 · %3")
          .arg(QString::fromStdString(model), QString::fromStdString(norms), QString::fromStdString(data));
  updateStatus();
  Q_EMIT resultShown();
}

void AnalysisPane::updateStatus() {
  QString text;
  if (!m_hasResult) {
    text = tr("Not computed yet: press Refresh.");
  } else {
    text = (m_shownStep >= 0 ? tr("<b>Step %1</b>").arg(m_shownStep) : tr("<b>Saved model</b>")) + " · " +
           m_description.toHtmlEscaped();
    if (isStale())
      text += " · <span style='color:#d35400'><b>" +
              (m_sourceChanged ? tr("stale: the model has changed since")
                               : tr("stale: the model is at step %1").arg(m_currentStep)) +
              "</b></span>";
  }
  if (m_computing) text += " · <i>" + tr("computing…") + "</i>";
  if (!m_error.isEmpty())
    text += "<br><span style='color:#c0392b'>" + tr("Failed: %1").arg(m_error.toHtmlEscaped()) + "</span>";
  m_status->setText(text);
}

void AnalysisPane::retranslate() {
  m_refresh->setText(tr("Refresh"));
  m_refresh->setToolTip(tr("Compute this analysis on the model as it is now"));
  updateStatus();
}

void AnalysisPane::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QWidget::changeEvent(event);
}

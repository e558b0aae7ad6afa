#include "window/WindowDialogs.h"

#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>

#include "serve/steering_client.h"

namespace {

// OK and Cancel under the form; true when the dialog was accepted.
bool runWithButtons(QDialog& dialog, QFormLayout* form, const QString& okText = QString()) {
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
  if (!okText.isEmpty()) buttons->button(QDialogButtonBox::Ok)->setText(okText);
  QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  form->addRow(buttons);
  return dialog.exec() == QDialog::Accepted;
}

}  // namespace

std::optional<nf::ServeAddress> WindowDialogs::askServedRun(QWidget* parent, const QString& runsFolder) {
  QDialog dialog(parent);
  dialog.setWindowTitle(tr("Connect to Run"));
  auto* form = new QFormLayout(&dialog);
  auto* explanation = new QLabel(
      tr("A run started with <tt>normfree-cli … --serve PORT</tt> on a server. From another machine, open "
         "an SSH tunnel first: <tt>ssh -N -L PORT:127.0.0.1:PORT server</tt>. Address and token are in the "
         "run's serve.json."),
      &dialog);
  explanation->setWordWrap(true);
  form->addRow(explanation);
  auto* address = new QLineEdit(QSettings().value("connect/address", "127.0.0.1:").toString(), &dialog);
  address->setPlaceholderText("127.0.0.1:40213");
  auto* token = new QLineEdit(&dialog);
  token->setEchoMode(QLineEdit::Password);
  auto* fromFile = new QPushButton(tr("Read serve.json…"), &dialog);
  QObject::connect(fromFile, &QPushButton::clicked, &dialog, [&] {
    const QString file = QFileDialog::getOpenFileName(&dialog, tr("A Run's serve.json"), runsFolder,
                                                      tr("serve.json (serve.json);;All files (*)"));
    if (file.isEmpty()) return;
    try {
      const nf::ServeAddress a = nf::readServeFile(file.toStdString());
      address->setText(QString::fromStdString(a.text()));
      token->setText(QString::fromStdString(a.token));
    } catch (const std::exception& e) {
      QMessageBox::warning(&dialog, tr("Cannot read serve.json"),
                           tr("The file is not a run's serve.json.") + "\n\n" + e.what());
    }
  });
  form->addRow(tr("Address (host:port)"), address);
  form->addRow(tr("Token"), token);
  form->addRow(QString(), fromFile);
  dialog.resize(520, dialog.sizeHint().height());
  if (!runWithButtons(dialog, form, tr("Connect"))) return std::nullopt;
  const QString text = address->text().trimmed();
  try {
    const nf::ServeAddress a = nf::serveAddressOf(text.toStdString(), token->text().trimmed().toStdString());
    QSettings().setValue("connect/address", text);
    return a;
  } catch (const std::exception& e) {  // a malformed address, or a serve.json that cannot be read (FileError)
    QMessageBox::warning(parent, tr("Cannot connect"),
                         tr("Give the address as host:port and the run's token.") + "\n\n" + e.what());
    return std::nullopt;
  }
}

std::optional<WindowDialogs::Datasets> WindowDialogs::askDatasets(QWidget* parent, const Datasets& current) {
  QDialog dialog(parent);
  dialog.setWindowTitle(tr("Choose Datasets"));
  auto* form = new QFormLayout(&dialog);
  QLineEdit* edits[3];
  const QString labels[] = {tr("Training tokens"), tr("Validation tokens"), tr("Second eval set (optional)")};
  const QString values[] = {current.train, current.validation, current.alternative};
  for (int i = 0; i < 3; ++i) {
    edits[i] = new QLineEdit(values[i], &dialog);
    auto* browse = new QPushButton(tr("Browse…"), &dialog);
    QObject::connect(browse, &QPushButton::clicked, &dialog, [&dialog, edit = edits[i]] {
      const QString f =
          QFileDialog::getOpenFileName(&dialog, tr("Token File"), edit->text(), tr("Token files (*.bin)"));
      if (!f.isEmpty()) edit->setText(f);
    });
    auto* row = new QHBoxLayout;
    row->addWidget(edits[i], 1);
    row->addWidget(browse);
    form->addRow(labels[i], row);
  }
  form->addRow(new QLabel(tr("Token files as `normfree-cli tokenize` writes them. Leave all empty to use the "
                             "synthetic corpus made for the model."),
                          &dialog));
  if (!runWithButtons(dialog, form)) return std::nullopt;
  return Datasets{edits[0]->text(), edits[1]->text(), edits[2]->text()};
}

std::optional<WindowDialogs::Settings> WindowDialogs::askSettings(QWidget* parent, const Settings& current) {
  QDialog dialog(parent);
  dialog.setWindowTitle(tr("Settings"));
  auto* form = new QFormLayout(&dialog);
  auto* language = new QComboBox(&dialog);
  language->addItem("English", "en");
  language->addItem("Deutsch", "de");
  language->setCurrentIndex(current.language == "de" ? 1 : 0);
  auto* every = new QSpinBox(&dialog);
  every->setRange(0, 1'000'000);
  every->setSpecialValueText(tr("never (refresh by hand)"));
  every->setValue(current.autoRefreshSteps);
  form->addRow(tr("Language"), language);
  form->addRow(tr("Refresh visible analyses every N steps"), every);
  auto* note = new QLabel(tr("Analyses share the processor with training: while one computes, training "
                             "slows down (on a CPU, to about a third)."),
                          &dialog);
  note->setWordWrap(true);
  form->addRow(note);
  if (!runWithButtons(dialog, form)) return std::nullopt;
  return Settings{language->currentData().toString(), every->value()};
}

void WindowDialogs::showGuide(QWidget* parent) {
  QMessageBox box(parent);
  box.setWindowTitle(tr("The First Ten Minutes"));
  box.setTextFormat(Qt::RichText);
  box.setText(tr(
      "<ol><li>The bundled tiny GPT-2 is open, with the <b>tiny</b> removal preset on the timeline "
      "(bottom).</li>"
      "<li>Press <b>Start</b>. The first start makes the fine-tuning data (a few seconds), then training "
      "runs; "
      "the loss plot fills and a dashed line marks each removal.</li>"
      "<li>If the loss has not recovered when the next removal comes, <b>drag</b> the next events to the "
      "right "
      "on the timeline (Ctrl-click selects several; Shift-drag the first of a group changes its gap). Ctrl+Z "
      "undoes.</li>"
      "<li>Press <b>Refresh analyses</b> (F5): the panes on the right show the model as it is now, and say "
      "when "
      "they have gone stale.</li>"
      "<li>In <b>Heads</b>, click a head to see its DLA and DE per token and its attention pattern. After "
      "the "
      "last removal DLA equals DE exactly.</li>"
      "<li>Right-click any plot to export it as PNG, SVG, PDF or CSV; File › Export All Figures writes them "
      "all.</li></ol>"));
  box.exec();
}

void WindowDialogs::showError(QWidget* parent, const QString& title, const QString& text,
                              const QString& detail) {
  auto* box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, parent);
  box->setInformativeText(detail);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

void WindowDialogs::showAbout(QWidget* parent) {
  QMessageBox::about(
      parent, tr("About NormFree Workbench"),
      tr("<b>NormFree Workbench %1</b><br>Removes LayerNorm from GPT-2, Pythia and LLaMA-family models "
         "by fine-tuning and shows the circuits of the result.")
          .arg(QApplication::applicationVersion()));
}

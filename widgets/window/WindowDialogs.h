// The main window's dialogs, each asking for one thing and returning it (nullopt: cancelled): the run to
// connect to, the datasets, the settings; and the help texts.
#pragma once
#include <QCoreApplication>
#include <QString>
#include <optional>

#include "serve/serve_address.h"

class QWidget;

class WindowDialogs {
  Q_DECLARE_TR_FUNCTIONS(WindowDialogs)

 public:
  // The address and token of a run served with --serve (typed, or read from its serve.json).
  static std::optional<nf::ServeAddress> askServedRun(QWidget* parent, const QString& runsFolder);

  struct Datasets {
    QString train, validation, alternative;  // all empty: the synthetic corpus made for the model
  };
  static std::optional<Datasets> askDatasets(QWidget* parent, const Datasets& current);

  struct Settings {
    QString language;          // "en" or "de"
    int autoRefreshSteps = 0;  // refresh the visible analyses every N steps (0: by hand)
  };
  static std::optional<Settings> askSettings(QWidget* parent, const Settings& current);

  // A warning, window-modal: it does not block the event loop (training goes on).
  static void showError(QWidget* parent, const QString& title, const QString& text, const QString& detail);
  static void showGuide(QWidget* parent);  // the first ten minutes
  static void showAbout(QWidget* parent);
};

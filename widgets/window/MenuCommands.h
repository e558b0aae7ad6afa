// What each menu and toolbar command does: the file choosers and dialogs that end in one of the main
// window's public operations (open a model or run, connect, load a schedule, choose datasets, export,
// settings), and the run controls. Only MainWindow's public API is used, so a command does here exactly
// what a test or the CLI-like entry points of app/gui do.
#pragma once
#include <QCoreApplication>

class MainWindow;
class WindowActions;

class MenuCommands {
  Q_DECLARE_TR_FUNCTIONS(MenuCommands)

 public:
  static void connect(MainWindow* window, WindowActions* actions);
};

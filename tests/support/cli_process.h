// Running normfree-cli in the background from a test, as a user's shell would: its stderr to a file, its
// exit status when it ends. Torch-free.
#pragma once
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "check.h"
#include "temp_dir.h"

extern char** environ;

namespace nf::test {

struct Finished {
  int status;
  std::string err;
};

struct CliResult {
  int status;
  std::string out, err;
};

// Runs the CLI with `arguments` (a shell command line) and waits: its exit status, stdout and stderr.
inline CliResult cli(const std::string& arguments) {
  TempDir io;
  const std::string cmd =
      std::string(NF_CLI) + " " + arguments + " >" + io.path("out") + " 2>" + io.path("err");
  CliResult r{runCommand(cmd), "", ""};
  std::ifstream o(io.path("out")), e(io.path("err"));
  r.out.assign(std::istreambuf_iterator<char>(o), {});
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  return r;
}

// Runs the CLI with `arguments` (split at spaces) in the background, stderr to errPath (stdout to outPath).
// With `ownGroup`, in a process group of its own, as a terminal's foreground job: a signal to the group
// (-pid) reaches it and the workers it launches, as Ctrl-C does.
inline pid_t startCli(const std::string& arguments, const std::string& errPath,
                      const std::string& outPath = "/dev/null", bool ownGroup = false) {
  std::vector<std::string> words{NF_CLI};
  std::stringstream in(arguments);
  for (std::string w; in >> w;) words.push_back(w);
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 1, outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&files, 2, errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (ownGroup) {
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
  }
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, NF_CLI, &files, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attributes);
  REQUIRE_EQ(error, 0);
  return pid;
}

// Waits for it to end: its exit status (128 + the signal when killed) and what it said on stderr.
inline Finished finish(pid_t pid, const std::string& errPath) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::ifstream e(errPath);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
          std::string(std::istreambuf_iterator<char>(e), {})};
}

}  // namespace nf::test

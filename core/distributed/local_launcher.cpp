#include "distributed/local_launcher.h"

#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "util/child_process.h"
#include "util/exit_status.h"

namespace nf {
namespace {

// The workers' process ids, for the signal handler (async-signal-safe: a fixed array of atomics).
constexpr int kMaxLocalWorkers = 1024;
std::atomic<pid_t> g_workers[kMaxLocalWorkers];
std::atomic<int> g_workerCount{0};

extern "C" void passSignalOn(int signal) {
  for (int i = 0; i < g_workerCount.load(); ++i)
    if (const pid_t pid = g_workers[i].load(); pid > 0) ::kill(pid, signal);
}

// This process's environment with torchrun's variables set for worker `rank`.
std::vector<std::string> workerEnvironment(int rank, int workers, int port) {
  return environmentWith({"RANK=" + std::to_string(rank), "LOCAL_RANK=" + std::to_string(rank),
                          "WORLD_SIZE=" + std::to_string(workers),
                          "LOCAL_WORLD_SIZE=" + std::to_string(workers), "MASTER_ADDR=127.0.0.1",
                          "MASTER_PORT=" + std::to_string(port), "TORCHELASTIC_USE_AGENT_STORE=True",
                          "TORCHELASTIC_RESTART_COUNT=0"});
}

}  // namespace

int launchLocalWorkers(const LaunchOptions& options, std::ostream& log) {
  const int n = options.workers;
  if (n < 1 || n > kMaxLocalWorkers)
    throw std::invalid_argument("--nproc " + std::to_string(n) + ": choose 1 to " +
                                std::to_string(kMaxLocalWorkers) + " workers");
  // The store the workers meet at, on a port the system picks (torchrun's agent hosts it the same way).
  c10d::TCPStoreOptions storeOptions;
  storeOptions.port = 0;
  storeOptions.isServer = true;
  storeOptions.waitWorkers = false;
  c10d::TCPStore store("127.0.0.1", storeOptions);
  const int port = store.getPort();

  std::vector<pid_t> pids(n, -1);
  std::vector<int> statuses(n, 0);
  g_workerCount = 0;
  auto previousInt = std::signal(SIGINT, passSignalOn);
  auto previousTerm = std::signal(SIGTERM, passSignalOn);
  int running = 0;
  bool allStarted = true;
  for (int rank = 0; rank < n; ++rank) {
    std::vector<std::string> argv{options.program};
    argv.insert(argv.end(), options.arguments.begin(), options.arguments.end());
    std::vector<std::string> env = workerEnvironment(rank, n, port);
    pid_t pid = -1;
    const int error = ::posix_spawn(&pid, options.program.c_str(), nullptr, nullptr, pointers(argv).data(),
                                    pointers(env).data());
    if (error != 0) {
      log << "launcher: could not start worker " << rank << " (" << options.program
          << "): " << std::strerror(error) << "\n";
      passSignalOn(SIGTERM);
      allStarted = false;
      break;
    }
    pids[rank] = pid;
    g_workers[rank] = pid;
    g_workerCount = rank + 1;
    ++running;
  }

  // Wait for all. After the first failure the others have the timeout to notice it and stop with a message
  // naming the lost worker; whoever is left after that is killed — a few seconds after worker 0 has ended,
  // since the run ends with it (a hung worker had kept the launcher waiting out the timeout again).
  using Clock = std::chrono::steady_clock;
  constexpr auto kAfterWorker0 = std::chrono::seconds(5);
  std::optional<Clock::time_point> deadline;
  bool killed = false, worker0Ended = false, cutByWorker0 = false;
  while (running > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, deadline ? WNOHANG : 0);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) break;
    if (pid == 0) {  // WNOHANG, nobody ended yet
      if (!killed && Clock::now() > *deadline) {
        if (cutByWorker0)
          log << "launcher: worker 0 ended the run; killing the workers still running "
              << std::chrono::seconds(kAfterWorker0).count() << " s after it\n";
        else
          log << "launcher: workers still running " << static_cast<int>(options.timeoutSeconds) + 30
              << " s after a worker failed; killing them\n";
        for (int r = 0; r < n; ++r)
          if (pids[r] > 0) ::kill(pids[r], SIGKILL);
        killed = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    for (int r = 0; r < n; ++r) {
      if (pids[r] != pid) continue;
      statuses[r] = status;
      pids[r] = -1;
      g_workers[r] = -1;
      --running;
      const bool succeeded = WIFEXITED(status) && (WEXITSTATUS(status) == exit_status::kSuccess ||
                                                   WEXITSTATUS(status) == exit_status::kStopped);
      if (!succeeded && !deadline)
        deadline = Clock::now() +
                   std::chrono::milliseconds(static_cast<int64_t>((options.timeoutSeconds + 30) * 1000));
      if (r == 0) worker0Ended = true;
    }
    if (deadline && worker0Ended && !cutByWorker0 && Clock::now() + kAfterWorker0 < *deadline) {
      deadline = Clock::now() + kAfterWorker0;
      cutByWorker0 = true;
    }
  }
  std::signal(SIGINT, previousInt);
  std::signal(SIGTERM, previousTerm);
  g_workerCount = 0;

  bool allSucceeded = true, allStopped = true, anyFailed = !allStarted;
  for (int r = 0; r < n && allStarted; ++r) {
    const int s = statuses[r];
    const bool ok = WIFEXITED(s) && WEXITSTATUS(s) == exit_status::kSuccess,
               stopped = WIFEXITED(s) && WEXITSTATUS(s) == exit_status::kStopped;
    allSucceeded = allSucceeded && ok;
    allStopped = allStopped && stopped;
    if (!ok && !stopped) {
      anyFailed = true;
      log << "launcher: worker " << r << " of " << n << " " << howItEnded(s) << "\n";
    }
  }
  // Workers that all ended with one status (4: every one saw the divergence; 2: every one refused the
  // command) say it for the run, as one process would; otherwise the run failed.
  const auto agreed = [&]() -> std::optional<int> {
    if (!allStarted || !WIFEXITED(statuses[0])) return std::nullopt;
    for (int r = 1; r < n; ++r)
      if (!WIFEXITED(statuses[r]) || WEXITSTATUS(statuses[r]) != WEXITSTATUS(statuses[0]))
        return std::nullopt;
    return WEXITSTATUS(statuses[0]);
  }();
  if (anyFailed) return agreed.value_or(exit_status::kFailure);
  return allSucceeded ? exit_status::kSuccess : (allStopped ? exit_status::kStopped : exit_status::kFailure);
}

}  // namespace nf

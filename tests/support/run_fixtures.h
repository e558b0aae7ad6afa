// Fixtures for tests that train: a small removal run over a random model and token file, a run stopped
// after some steps, and the records of a run's metrics log.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "fixtures.h"
#include "run/metrics_log.h"
#include "run/run_directory.h"
#include "train/settings.h"
#include "train/trainer.h"

namespace nf::test {

// A small model (of the given shape) and a token file in dir; a remove-mode config over them.
inline RunConfig smallRun(const TempDir& dir, TrainingMode mode = TrainingMode::Remove,
                          const ModelShape& c = smallConfig()) {
  if (!std::filesystem::exists(dir.path("model"))) {
    CausalLM model = randomModel(c, 1);
    saveModel(*model, dir.path("model"));
    const auto tokens = randomTokens(c, 1, 6000, 3).flatten();
    writeTokens(dir.path("train.bin"),
                std::vector<int32_t>(tokens.data_ptr<int64_t>(), tokens.data_ptr<int64_t>() + 6000),
                c.vocabSize);
  }
  RunConfig r;
  r.mode = mode;
  r.model = dir.path("model");
  r.trainData = dir.path("train.bin");
  r.optimizer.microBatch = 4;
  r.optimizer.accumulation = 2;
  r.optimizer.context = 16;
  r.optimizer.maxSteps = 30;
  r.optimizer.warmupSteps = 3;
  r.optimizer.lr = 1e-3;
  r.optimizer.minLr = 1e-4;
  r.checkpointInterval = 10;
  r.eval.interval = 0;
  r.removal.emaMomentum = 0.8;
  r.schedule.events = {
      {1, 5, EventAction::MakeFake, SiteKind::Mlp, 0},  {2, 7, EventAction::MakeFake, SiteKind::Mlp, 1},
      {3, 10, EventAction::MakeFake, SiteKind::Qk, -1}, {4, 12, EventAction::MakeFake, SiteKind::V, 0},
      {5, 14, EventAction::MakeFake, SiteKind::V, 1},   {6, 16, EventAction::MakeFake, SiteKind::Final, -1}};
  return r;
}

// The id of a process that has ended and been reaped: no process has it (until the kernel reuses it).
inline pid_t deadProcess() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

// Trains until at least `steps` steps are done, then stops (with a checkpoint); returns the steps done. The
// wait is for the event (polled), not for a time.
inline int64_t runUntil(Trainer& trainer, int64_t steps) {
  std::thread stopper([&] {
    while (trainer.stepsDone() < steps) std::this_thread::sleep_for(std::chrono::microseconds(200));
    trainer.requestStop();
  });
  trainer.run();
  stopper.join();
  return trainer.stepsDone();
}

// Every record of metrics.jsonl, as written.
inline std::vector<nlohmann::json> allRecords(const std::string& runDir) {
  // Through the project's own reader: a run still writing may have left a partial last line, which it
  // holds back until its end arrives (reading lines with getline parsed that half line and failed).
  std::vector<nlohmann::json> out;
  for (const std::string& line : MetricsFollower(runDir).read().lines)
    out.push_back(nlohmann::json::parse(line));
  return out;
}

// The records of one type in the run's history as it stands (stretches trained again after a resume or a
// rollback once, as they were trained last).
inline std::vector<nlohmann::json> records(const std::string& runDir, const std::string& type) {
  std::vector<nlohmann::json> out;
  for (const auto& r : currentHistory(allRecords(runDir)))
    if (r["type"] == type) out.push_back(r);
  return out;
}

}  // namespace nf::test

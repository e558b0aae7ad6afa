// A run's metrics as series the training view plots: the records of metrics.jsonl (run_directory.h),
// whether they arrive from the engine's in-process listener or from following the file of a headless run.
// Plain C++ (no Qt, no torch).
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

struct MetricsStore {
  struct Steps {  // one entry per optimizer step
    std::vector<double> step, ce, aux, loss, lr, gradNorm, tokensPerSecond;
  };
  struct EvalPoint {
    double step = 0, loss = 0;
  };
  struct AppliedEvent {
    int64_t step = 0;
    std::string description;  // "step 40: LN_mlp.0 → fake"
  };
  struct ScalePoint {
    double step = 0;
    double tracked = std::numeric_limits<double>::quiet_NaN();  // NaN when not tracked
    double frozen = std::numeric_limits<double>::quiet_NaN();   // NaN while the site is real
  };

  // One measurement of a tracked analysis (a "track" record, docs/TRAINING.md "Tracked analyses").
  struct TrackedPoint {
    double step = 0;
    bool atEvent = false;  // removal events fired at this step (measured on the model they left)
    double value = 0;
    std::vector<double> perLayer;  // empty where the analysis has none
  };
  struct TrackedSeries {
    std::vector<TrackedPoint> points;
    std::string data;  // what it is measured on ("val.bin: 16 chunks × 128 tokens …"), "" when unsaid
    double totalSeconds = 0;  // what its measurements took, all together
    int64_t measured = 0;
    double secondsPerMeasurement() const { return measured > 0 ? totalSeconds / measured : 0; }
  };

  Steps steps;
  // By eval set: its file name ("val.bin"), or its whole path where another file of that name came first
  // (two sets named val.bin in different folders are two curves, not one zigzag between them).
  std::map<std::string, std::vector<EvalPoint>> evals;
  std::map<std::string, std::string> evalFiles;  // each series' file, as recorded
  std::vector<AppliedEvent> events;
  std::map<std::string, std::vector<ScalePoint>> scales;  // by site ("LN_v.2")
  std::map<std::string, TrackedSeries> tracked;           // by analysis ("nmae")
  std::string mode;                                       // "remove", "finetune", "pretrain"
  int64_t maxSteps = 0;      // the start record's budget, or a later resume's (resume --steps N)
  std::string lastStatus;    // "start", "resume", "pause", "continue", "stop", "finish" (the latest of these)
  std::string finishReason;  // why the run finished before its step budget (the autopilot's plateau), or ""
  std::string lastWarning;   // the latest "warning" record's message (a checkpoint that failed, low disk)
  std::string lastWarningCode;
  int64_t lastCheckpointStep = -1;  // the newest "checkpoint" record's step (−1: none yet), and its size
  double lastCheckpointBytes = 0;   // and its code ("checkpoint_failed", "low_disk_space"), to translate by
  // A multi-worker run: its workers, and each one's pace in the latest step (tokens per second).
  int worldSize = 1;
  std::vector<double> workerTokensPerSecond;
  int64_t generation = 0;  // bumped by clear(): plots rebuild instead of appending

  // Adds one metrics.jsonl line; returns false (and changes nothing) for a line that is not a record.
  bool ingest(const std::string& line);
  void clear();
  // A "resume" or "rollback" record: the run went on from `stepsDone`, so the records after it that came
  // before (a stretch trained again now) are dropped, and generation is bumped so that plots rebuild.
  void rewindTo(int64_t stepsDone);
  int64_t lastStep() const { return steps.step.empty() ? 0 : static_cast<int64_t>(steps.step.back()); }
  // Each site made fake so far, with its frozen scale (the newest), by site name.
  std::map<std::string, double> frozenScales() const;
  // Mean throughput (tokens per second) over the last `window` steps (0 when unknown).
  double recentTokensPerSecond(size_t window = 20) const;
};

// Exponential moving average, one value at a time (weight of the past: `smoothing`, 0 ≤ smoothing < 1), with
// TensorBoard's start-up bias correction, so the first points are not pulled towards zero.
struct Smoother {
  double smoothing = 0.9;
  double average = 0, weight = 0;
  double next(double value) {
    average = smoothing * average + (1 - smoothing) * value;
    weight = smoothing * weight + (1 - smoothing);
    return average / weight;
  }
};

// The downstream benchmarks (eval/benchmark.h) on a snapshot, for the workbench's Benchmarks pane: the model
// now and the model it started from scored on the same items, each as `normfree-cli bench` writes a task's
// result, with the analyses' header. Only here, never from a request over the network: the task files are
// read by path. Plain C++ header.
#pragma once
#include <nlohmann/json.hpp>

#include "eval/benchmark_tasks.h"
#include "run/snapshot.h"
#include "text/tokenizer.h"
#include "util/progress.h"

namespace nf {

// {"header": {"analysis": "benchmark", …}, "task", "file", "n", "acc", "acc_stderr", ["acc_norm", …],
//  "items": […]} — eval/benchmark.h's toJson with the items.
nlohmann::json benchmarkOnSnapshot(const ModelSnapshot& snapshot, const Tokenizer& tokenizer,
                                   const BenchmarkData& data, const ProgressFn& progress = {});

}  // namespace nf

// The downstream benchmarks (eval/benchmark.h) on a snapshot: one task's items scored as `normfree-cli bench`
// writes a task's result, with the analyses' header — what the "benchmark" analysis (analysis_request.h)
// answers, here or on a server, to which the items travel in the request. Plain C++ header.
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

// What the workers of a multi-worker run must agree on, built on WorkerGroup's exchanges: work that worker
// 0 alone does for all of them, worker 0's weights everywhere, and the check at every checkpoint that they
// still hold the same weights and data position. Every function takes the group as a pointer: null is a
// one-process run, where each is trivial. Engine-internal (torch).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "distributed/worker_group.h"

namespace nf {

class CausalLMImpl;

// Runs `work` on worker 0 (checks, writing the run directory) and gives its text to every worker, or
// throws its error on every worker, so no worker goes on when worker 0 could not.
std::string onWorker0(WorkerGroup* group, const std::string& during,
                      const std::function<std::string()>& work);

// Worker 0's values of `parameters` on every worker (a fresh model's initialisation, whatever the device
// did).
void broadcastWeights(WorkerGroup* group, const std::vector<torch::Tensor>& parameters);

// What files hold, as the agreement check compares it: FNV-1a over each file's size and its first and last
// MiB. A worker on another machine may read another file under the same name, and train another run unsaid.
uint64_t sampledFilesFingerprint(const std::vector<std::string>& paths);

// Throws, naming the worker and the first parameter (or the data position, or the data files) that
// differs, when a worker's weights, data position or data files are not worker 0's — `atStart`: as the
// run starts or resumes (the workers read different models, checkpoints or data), else diverged since. A
// cheap fingerprint per parameter (float64 sum and sum of squares) is compared bit for bit.
void requireWorkersAgree(WorkerGroup* group, CausalLMImpl& model, const std::array<uint64_t, 4>& dataPosition,
                         uint64_t dataFiles, int64_t step, bool atStart = false);

}  // namespace nf

// The workers of one multi-process run, joined into a c10d process group: Gloo on CPU, NCCL on CUDA (the
// collectives PyTorch ships; we add only what a training run needs on top). Every exchange names what the
// run was doing, and a worker that dies, hangs or loses the network turns into a WorkerLost error that
// names it: each worker beats a heartbeat into the rendezvous store, and after a failed exchange the
// survivors look for an error a worker left there before it stopped, else at whose beat stopped.
// Engine-internal (torch).
#pragma once
#include <torch/types.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "distributed/worker_environment.h"

namespace nf {

// Another worker (or the rendezvous store's host) died, hung or became unreachable.
class WorkerLost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class WorkerGroup {
 public:
  // Joins the run's other workers through the TCPStore at MASTER_ADDR:MASTER_PORT, served by rank 0 unless
  // the launcher serves it. Waits at most worker.timeoutSeconds for all of them; WorkerLost otherwise.
  WorkerGroup(const WorkerEnvironment& worker, const torch::Device& device);
  ~WorkerGroup();
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;

  int rank() const;
  int size() const;
  bool isMain() const { return rank() == 0; }

  // The exchanges. Each blocks until every worker has made the same call; `during` ("step 12's
  // gradients") goes into the WorkerLost message when one does not.
  void sum(torch::Tensor& values, const std::string& during);        // in place, element-wise over workers
  void broadcast(torch::Tensor& values, const std::string& during);  // worker 0's values, in place
  int64_t sum(int64_t value, const std::string& during);             // over the workers
  int64_t broadcast(int64_t value, const std::string& during);       // worker 0's value
  std::string broadcastText(const std::string& text, const std::string& during);  // worker 0's text
  torch::Tensor gather(const torch::Tensor& values, const std::string& during);   // [workers, …values]
  // Replaces every defined gradient of `parameters` by its mean over the workers. The gradients travel in
  // buckets of about 25 MB, all in flight at once so the backend can overlap them.
  void averageGradients(const std::vector<torch::Tensor>& parameters, const std::string& during);

  // What this worker's heartbeat tells the others: its steps done, for the message when it is lost.
  void setStepsDone(int64_t steps);
  // Leaves this worker's error where the others look when it stops answering, so that they name the
  // problem and not only the worker: a data file missing on its machine, say (best effort: the store's
  // host may be gone).
  void tellOthersOfFailure(const std::string& error);

 private:
  struct Impl;
  std::unique_ptr<Impl> m;
};

}  // namespace nf

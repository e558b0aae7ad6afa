#include "distributed/worker_group.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <thread>

namespace nf {
namespace {

using namespace std::chrono_literals;

// Since LibTorch 2.0 the backends (Gloo, NCCL) derive from c10d::Backend; in 1.13 from c10d::ProcessGroup.
#if TORCH_VERSION_MAJOR >= 2
using Collectives = c10d::Backend;
#else
using Collectives = c10d::ProcessGroup;
#endif

constexpr auto kBeatInterval = 1s;
// How long the survivors of a failed exchange watch the heartbeats: several beats, so a live worker's
// counter moves for certain.
constexpr auto kBeatWatch = 3s;
constexpr int64_t kBucketBytes = 25 << 20;

std::string workerName(int rank, int size) {
  return "worker " + std::to_string(rank) + " of " + std::to_string(size);
}

}  // namespace

struct WorkerGroup::Impl {
  WorkerEnvironment worker;
  torch::Device device;
  c10::intrusive_ptr<c10d::Store> store;  // the rendezvous store (rank 0 serves it unless the launcher does)
  c10::intrusive_ptr<Collectives> collectives;

  // The heartbeat has a store connection of its own, so it keeps beating while an exchange blocks.
  c10::intrusive_ptr<c10d::Store> beatStore;
  std::mutex beatMutex;  // beatStore and stopping
  std::condition_variable beatWake;
  bool stopping = false;
  std::atomic<int64_t> stepsDone{0};
  std::thread beat;

  Impl(const WorkerEnvironment& w, const torch::Device& d) : worker(w), device(d) {}

  std::string storeAddress() const { return worker.masterAddress + ":" + std::to_string(worker.masterPort); }
  std::string storeHost() const { return worker.launcherHostsStore ? "the launcher" : "worker 0"; }

  c10::intrusive_ptr<c10d::Store> connect(bool serve, std::chrono::milliseconds timeout) const {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(worker.masterPort);
    options.isServer = serve;
    options.waitWorkers = false;
    options.timeout = timeout;
    auto tcp = c10::make_intrusive<c10d::TCPStore>(worker.masterAddress, options);
    // torchrun's agent keeps keys of its own in the store it serves; its workers use this prefix.
    const std::string prefix = worker.launcherHostsStore
                                   ? "/worker/attempt_" + std::to_string(worker.launcherAttempt)
                                   : std::string("normfree");
    return c10::make_intrusive<c10d::PrefixStore>(prefix, tcp);
  }

  static std::string beatKey(int rank) { return "normfree/beat/" + std::to_string(rank); }
  static std::string failureKey(int rank) { return "normfree/failure/" + std::to_string(rank); }

  void join() {
    const auto timeout =
        std::chrono::milliseconds(static_cast<int64_t>(std::llround(worker.timeoutSeconds * 1000)));
    store = connect(worker.isMain() && !worker.launcherHostsStore, timeout);
    if (device.is_cuda()) {
#ifdef USE_C10D_NCCL
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      collectives =
          c10::make_intrusive<c10d::ProcessGroupNCCL>(store, worker.rank, worker.worldSize, options);
#else
      throw std::runtime_error(
          "this build has no NCCL, which multi-worker runs on CUDA use (its LibTorch has no CUDA, or nccl.h "
          "was not found: configure with -DNF_NCCL_INCLUDE_DIR=…)");
#endif
    } else {
#ifndef USE_C10D_GLOO
      throw std::runtime_error(
          "this build has no Gloo, which multi-worker runs on the CPU use (its headers were not found when "
          "it "
          "was configured: install libgloo-dev)");
#else
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      // The interface the peers reach us on: GLOO_SOCKET_IFNAME as in PyTorch; loopback for a local run;
      // otherwise the address this machine's hostname resolves to.
      if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"))
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(interface));
      else if (isLoopbackHost(worker.masterAddress))
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      else
        options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      collectives =
          c10::make_intrusive<c10d::ProcessGroupGloo>(store, worker.rank, worker.worldSize, options);
#endif
    }
    beatStore = connect(false, std::chrono::milliseconds(2000));
    beat = std::thread([this] { beatUntilStopped(); });
  }

  void beatUntilStopped() {
    std::unique_lock<std::mutex> lock(beatMutex);
    for (int64_t count = 1; !stopping; ++count) {
      try {
        const std::string beat = std::to_string(count) + " " + std::to_string(stepsDone.load());
        beatStore->set(beatKey(worker.rank), std::vector<uint8_t>(beat.begin(), beat.end()));
      } catch (const std::exception&) {
        // The store's host is gone; the next exchange fails and says so.
      }
      beatWake.wait_for(lock, kBeatInterval, [&] { return stopping; });
    }
  }

  // Every worker's heartbeat as "count steps"; "" where none was ever set. Throws when the store is gone.
  std::vector<std::string> readBeats() {
    std::lock_guard<std::mutex> lock(beatMutex);
    std::vector<std::string> beats(worker.worldSize);
    for (int r = 0; r < worker.worldSize; ++r) {
      if (!beatStore->check({beatKey(r)})) continue;
      const std::vector<uint8_t> value = beatStore->get(beatKey(r));
      beats[r].assign(value.begin(), value.end());
    }
    return beats;
  }

  // The errors other workers left before they stopped (tellOthersOfFailure), as "worker 1 of 2: …".
  std::string failuresOfOthers() {
    std::lock_guard<std::mutex> lock(beatMutex);
    std::string failures;
    for (int r = 0; r < worker.worldSize; ++r) {
      if (r == worker.rank || !beatStore->check({failureKey(r)})) continue;
      const std::vector<uint8_t> error = beatStore->get(failureKey(r));
      failures += (failures.empty() ? "" : "; ") + workerName(r, worker.worldSize) + ": " +
                  std::string(error.begin(), error.end());
    }
    return failures;
  }

  // After a failed exchange: did another worker stop on an error of its own? Else whose heartbeat stopped?
  // That worker died or hangs.
  [[noreturn]] void lost(const std::string& during, const std::string& cause) {
    const std::string me = workerName(worker.rank, worker.worldSize);
    std::string firstLine = cause.substr(0, cause.find('\n'));
    std::ostringstream message;
    try {
      const std::vector<std::string> before = readBeats();
      std::this_thread::sleep_for(kBeatWatch);
      const std::vector<std::string> after = readBeats();
      // Read after the watch: the error is set just before the worker's connections close, but the store
      // serves it on a thread of its own, which may not have taken it in yet when the exchange failed.
      if (const std::string failures = failuresOfOthers(); !failures.empty())
        throw WorkerLost(failures + " (it stopped on this error of its own during " + during + "; " + me +
                         " stops too)");
      std::vector<int> silent;
      for (int r = 0; r < worker.worldSize; ++r)
        if (r != worker.rank && before[r] == after[r]) silent.push_back(r);
      if (silent.empty()) {
        message << me << ": an exchange with the other workers failed during " << during
                << ", though every worker's heartbeat goes on (a network problem?)";
      } else {
        message << (silent.size() == 1 ? "worker " : "workers ");
        for (std::size_t i = 0; i < silent.size(); ++i) message << (i ? ", " : "") << silent[i];
        message << " of " << worker.worldSize << " stopped answering during " << during
                << " (its heartbeat stopped";
        const std::string& last = after[silent.front()];
        if (const auto space = last.find(' '); space != std::string::npos)
          message << " after step " << last.substr(space + 1);
        message << ": the process died or hangs); " << me << " stops too";
      }
    } catch (const WorkerLost&) {
      throw;
    } catch (const std::exception&) {
      message << storeHost() << ", which serves the rendezvous store at " << storeAddress()
              << ", is gone (died or unreachable) during " << during << "; " << me << " stops too";
    }
    message << " [" << firstLine << "]";
    throw WorkerLost(message.str());
  }

  template <class Exchange>
  void exchange(const std::string& during, Exchange&& run) {
    try {
      run();
    } catch (const WorkerLost&) {
      throw;
    } catch (const std::exception& e) {
      lost(during, e.what());
    }
  }
};

WorkerGroup::WorkerGroup(const WorkerEnvironment& worker, const torch::Device& device)
    : m(std::make_unique<Impl>(worker, device)) {
  try {
    m->join();
  } catch (const std::exception& e) {
    const std::string cause = e.what();
    throw WorkerLost(workerName(worker.rank, worker.worldSize) + " could not join the others through " +
                     m->storeAddress() + " within " + std::to_string(std::lround(worker.timeoutSeconds)) +
                     " s (is every worker started with the same MASTER_ADDR, MASTER_PORT and WORLD_SIZE?) [" +
                     cause.substr(0, cause.find('\n')) + "]");
  }
}

WorkerGroup::~WorkerGroup() {
  {
    std::lock_guard<std::mutex> lock(m->beatMutex);
    m->stopping = true;
  }
  m->beatWake.notify_all();
  if (m->beat.joinable()) m->beat.join();
}

void WorkerGroup::tellOthersOfFailure(const std::string& error) {
  std::lock_guard<std::mutex> lock(m->beatMutex);
  try {
    m->beatStore->set(Impl::failureKey(m->worker.rank), std::vector<uint8_t>(error.begin(), error.end()));
  } catch (const std::exception&) {
    // The store's host is gone: the others say so themselves.
  }
}

int WorkerGroup::rank() const { return m->worker.rank; }
int WorkerGroup::size() const { return m->worker.worldSize; }
void WorkerGroup::setStepsDone(int64_t steps) { m->stepsDone = steps; }

void WorkerGroup::sum(torch::Tensor& values, const std::string& during) {
  m->exchange(during, [&] {
    std::vector<at::Tensor> tensors{values};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp::SUM;
    m->collectives->allreduce(tensors, options)->wait();
  });
}

void WorkerGroup::broadcast(torch::Tensor& values, const std::string& during) {
  m->exchange(during, [&] {
    std::vector<at::Tensor> tensors{values};
    c10d::BroadcastOptions options;
    options.rootRank = 0;
    m->collectives->broadcast(tensors, options)->wait();
  });
}

int64_t WorkerGroup::sum(int64_t value, const std::string& during) {
  torch::Tensor t = torch::full({1}, value, torch::TensorOptions().dtype(torch::kLong).device(m->device));
  sum(t, during);
  return t.to(torch::kCPU).item<int64_t>();
}

int64_t WorkerGroup::broadcast(int64_t value, const std::string& during) {
  torch::Tensor t = torch::full({1}, value, torch::TensorOptions().dtype(torch::kLong).device(m->device));
  broadcast(t, during);
  return t.to(torch::kCPU).item<int64_t>();
}

std::string WorkerGroup::broadcastText(const std::string& text, const std::string& during) {
  const int64_t n = broadcast(static_cast<int64_t>(text.size()), during);
  if (n == 0) return "";
  torch::Tensor bytes = torch::empty({n}, torch::TensorOptions().device(m->device).dtype(torch::kUInt8));
  if (isMain()) bytes.copy_(torch::from_blob(const_cast<char*>(text.data()), {n}, torch::kUInt8));
  broadcast(bytes, during);
  const torch::Tensor host = bytes.to(torch::kCPU).contiguous();
  return std::string(reinterpret_cast<const char*>(host.data_ptr<uint8_t>()), static_cast<std::size_t>(n));
}

torch::Tensor WorkerGroup::gather(const torch::Tensor& values, const std::string& during) {
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int r = 0; r < size(); ++r) outputs[0].push_back(torch::empty_like(values));
  m->exchange(during, [&] {
    std::vector<at::Tensor> inputs{values.contiguous()};
    m->collectives->allgather(outputs, inputs)->wait();
  });
  return torch::stack(outputs[0]);
}

void WorkerGroup::averageGradients(const std::vector<torch::Tensor>& parameters, const std::string& during) {
  // Consecutive gradients of one dtype, flattened into one buffer per bucket.
  struct Bucket {
    std::vector<torch::Tensor> gradients;
    torch::Tensor flat;
    c10::intrusive_ptr<c10d::Work> work;
  };
  std::vector<Bucket> buckets;
  int64_t bytes = 0;
  for (const auto& p : parameters) {
    const torch::Tensor& g = p.grad();
    if (!g.defined()) continue;  // undefined on every worker alike: the same model ran the same code
    const int64_t size = g.numel() * static_cast<int64_t>(g.element_size());
    if (buckets.empty() || bytes + size > kBucketBytes ||
        buckets.back().gradients.front().scalar_type() != g.scalar_type())
      buckets.emplace_back(), bytes = 0;
    buckets.back().gradients.push_back(g);
    bytes += size;
  }
  m->exchange(during, [&] {
    for (Bucket& b : buckets) {
      std::vector<torch::Tensor> flat;
      for (const auto& g : b.gradients) flat.push_back(g.reshape({-1}));
      b.flat = torch::cat(flat);
      std::vector<at::Tensor> tensors{b.flat};
      c10d::AllreduceOptions options;
      options.reduceOp = c10d::ReduceOp::SUM;
      b.work = m->collectives->allreduce(tensors, options);
    }
    for (Bucket& b : buckets) {
      b.work->wait();
      b.flat.div_(static_cast<double>(size()));
      int64_t offset = 0;
      for (auto& g : b.gradients) {
        g.copy_(b.flat.narrow(0, offset, g.numel()).view_as(g));
        offset += g.numel();
      }
    }
  });
}

}  // namespace nf

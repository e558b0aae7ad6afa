// Who this process is in a multi-worker run, read the way torchrun sets it (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_USE_AGENT_STORE), so one command line runs
// under torchrun, Slurm's srun (with the variables exported from SLURM_*) or any launcher, and its device.
// Plain C++ (no torch): the GUI's run setup and the CLI's launcher read it too.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace nf {

struct WorkerEnvironment {
  int rank = 0, worldSize = 1;            // this worker among all of the run's workers
  int localRank = 0, localWorldSize = 1;  // … among those on this machine (one GPU each)
  std::string masterAddress = "127.0.0.1";
  int masterPort = 29500;  // the rendezvous store (c10d TCPStore) of rank 0 or of the launcher
  // torchrun's agent hosts the store itself (TORCHELASTIC_USE_AGENT_STORE=True): rank 0 connects to it
  // instead of serving one.
  bool launcherHostsStore = false;
  int launcherAttempt = 0;  // torchrun's restart count (TORCHELASTIC_RESTART_COUNT): its store keys' prefix
  // How long a worker waits for the others (to join, or inside one exchange) before it gives up and names
  // the workers that stopped answering. Not an environment variable: the command line's --worker-timeout.
  double timeoutSeconds = 600;

  bool isMain() const { return rank == 0; }  // the one worker that writes the run directory
};

// The variables' values by name (std::getenv in the engine; a map in tests).
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvironmentLookup processEnvironment();

// No RANK and no WORLD_SIZE: nullopt (a one-process run). Otherwise all of RANK, WORLD_SIZE, MASTER_ADDR
// and MASTER_PORT must be set, and every value well-formed and in range (rank < world size, port 1–65535,
// local rank < local world size); std::invalid_argument naming the variable and its value otherwise.
// LOCAL_RANK defaults to RANK and LOCAL_WORLD_SIZE to WORLD_SIZE (one machine).
std::optional<WorkerEnvironment> readWorkerEnvironment(
    const EnvironmentLookup& lookup = processEnvironment());

// The device a worker trains on: "cuda" becomes "cuda:<local rank>" (one GPU per worker) when there are
// several workers on the machine; "cpu" and an explicit "cuda:N" stay as they are.
std::string workerDevice(const std::string& device, const WorkerEnvironment& worker);

// "localhost", "::1" or 127.x.y.z: an address that only this machine reaches.
bool isLoopbackHost(const std::string& host);

// A TCP port free on 127.0.0.1 now (the system's pick), for a local run's rendezvous store when the port
// must be known before the store starts (the workbench starts the other workers, then serves it).
int freeLoopbackPort();

// Each worker's share of a micro-batch of `sequences` sequences: workers take consecutive, equal slices
// in rank order, so together they see exactly the sequences one process would, in its order. Throws
// std::invalid_argument when the sequences do not split evenly over the workers.
struct BatchShare {
  int64_t first = 0, count = 0;
};
BatchShare batchShare(int64_t sequences, const WorkerEnvironment& worker);

}  // namespace nf

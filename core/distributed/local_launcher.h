// `--nproc N`: a multi-worker run on this machine without torchrun. The launcher hosts the rendezvous
// store and starts N copies of a command as the run's workers with the variables torchrun would set
// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_USE_AGENT_STORE),
// so a worker cannot tell the two apart. Engine-internal (torch: c10d's TCPStore).
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace nf {

struct LaunchOptions {
  int workers = 2;
  std::string program;                 // the executable each worker runs
  std::vector<std::string> arguments;  // its arguments (argv[1…]), the same for every worker
  // How long the workers wait for each other; after one fails, the others get this long (plus a margin)
  // to notice and stop on their own before the launcher ends them.
  double timeoutSeconds = 600;
};

// Runs the workers to their end. Ctrl-C (SIGINT) and SIGTERM are passed on to every worker. Says on `log`
// how each worker that did not succeed ended. Returns 0 when every worker succeeded, 3 when all ended
// because they were stopped (exit 3: stopped before the last step) and 1 otherwise.
int launchLocalWorkers(const LaunchOptions& options, std::ostream& log);

}  // namespace nf

// The steering endpoint of a training run (docs/STEERING.md): HTTP + JSON on cpp-httplib (Debian's
// libcpp-httplib-dev, a maintained server we need not write), served by a thread of the process that trains
// — worker 0 of a multi-worker run — so a workbench on a laptop, through an SSH tunnel, follows the run and
// edits its schedule with the same rules and refusal codes as in-process edits. Every request carries the
// run's token, which only serve.json (owner-only) and the starting terminal know. Plain C++ header.
#pragma once
#include <memory>
#include <string>

#include "serve/serve_address.h"

namespace nf {

class Trainer;

class SteeringServer {
 public:
  // Binds the address (throws when it is in use or not this machine's, or not loopback without
  // allowRemote), before any run folder exists, so a bad --serve leaves nothing behind; serve() starts.
  explicit SteeringServer(const ServeOptions& options);
  // Binds and serves `trainer` at once.
  SteeringServer(Trainer& trainer, const ServeOptions& options);
  // Serves `trainer` (which must outlive the server) until destroyed, and writes the run directory's
  // serve.json (address and token, owner-only). Throws when it cannot write serve.json.
  void serve(Trainer& trainer);
  // The run will not train again in this process (its run() returned, and the process is closing):
  // from now on the controls, the autopilot switch and edits are refused (409, "run_ended") — they would
  // never take effect — while status, metrics, schedule and analyses are still answered.
  void runEnded();
  ~SteeringServer();  // stops serving; removes serve.json
  SteeringServer(const SteeringServer&) = delete;
  SteeringServer& operator=(const SteeringServer&) = delete;

  int port() const;
  const std::string& host() const;
  const std::string& token() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m;
};

}  // namespace nf

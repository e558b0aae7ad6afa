// One writer per run directory: a trainer (CLI, workbench, an orphaned worker) holds the run's lock for its
// whole life, taken before it writes anything. The lock is the kernel's (flock on RUN/trainer.lock), so a
// process that dies — killed, out of memory, its machine rebooted — releases it with no stale file to
// clean up; the file only says who holds it, for the refusal. Plain C++.
#pragma once
#include <optional>
#include <string>

namespace nf {

class RunLock {
 public:
  // Takes the lock of the run in `runDir` (the folder must exist). FileError naming the run and the holder
  // (pid, host, since when) when another trainer holds it.
  explicit RunLock(const std::string& runDir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int m_fd = -1;
};

// The pid of the run's last trainer when it is known to be gone: its lock file names a process on this host
// that no longer exists (killed, or its machine rebooted). nullopt when it may live, or cannot be known (the
// run was trained on another host, or never). What a stale serve.json is told by.
std::optional<long> goneTrainer(const std::string& runDir);

}  // namespace nf

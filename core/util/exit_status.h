// The exit statuses of normfree-cli, named once: the CLI returns them, the launcher of several workers reads
// its workers' and returns the run's, and scripts (and the tests) rely on them.
#pragma once

namespace nf::exit_status {

inline constexpr int kSuccess = 0;
inline constexpr int kFailure = 1;   // an error, said on stderr
inline constexpr int kUsage = 2;     // bad arguments
inline constexpr int kStopped = 3;   // a training run stopped before its last step (Ctrl-C, SIGTERM, a stop
                                     // request), with a checkpoint: `resume` continues it
inline constexpr int kDiverged = 4;  // a training run diverged and stopped
inline constexpr int kRefused = 5;   // a served run refused a request (`steer`'s edits): the answer says why

}  // namespace nf::exit_status

#include "util/blas_threads.h"

#include <dlfcn.h>

#include <cstdlib>

namespace nf {

bool letIdleBlasThreadsSleep() {
  // OpenBLAS reads the spin time (as a power of two of cycles, at least 2⁴) from its environment when it
  // starts its threads; these three entry points re-read it and restart them. Looked up by name, since the
  // BLAS behind LibTorch is chosen at install time (Debian's alternatives; MKL in other builds).
  using Call = int (*)();
  const auto readEnvironment = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "openblas_read_env"));
  const auto stopThreads = reinterpret_cast<Call>(dlsym(RTLD_DEFAULT, "blas_thread_shutdown_"));
  const auto startThreads = reinterpret_cast<Call>(dlsym(RTLD_DEFAULT, "blas_thread_init"));
  if (readEnvironment == nullptr || stopThreads == nullptr || startThreads == nullptr) return false;
  constexpr const char* kVariable = "OPENBLAS_THREAD_TIMEOUT";
  if (std::getenv(kVariable) != nullptr) return false;  // the user chose a spin time: keep it
  setenv(kVariable, "4", 1);
  readEnvironment();
  stopThreads();
  startThreads();
  unsetenv(kVariable);
  readEnvironment();  // what OpenBLAS reports of its environment is the real one again
  return true;
}

}  // namespace nf

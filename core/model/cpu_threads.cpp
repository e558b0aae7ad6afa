#include "model/cpu_threads.h"

#include <ATen/Parallel.h>
#include <sched.h>

#include <algorithm>
#include <exception>
#include <future>
#include <thread>
#include <vector>

#include "util/scope_exit.h"

namespace nf {

namespace {

// The CPUs the calling thread may run on (its affinity mask, as taskset and cpusets set it; CPU quotas are
// not seen), read once, on the first call.
int64_t usableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

thread_local bool insidePart = false;

}  // namespace

void forEachPart(int64_t n, int64_t minimumPerPart, const std::function<void(int64_t, int64_t)>& kernel) {
  if (n <= 0) return;
  static const int64_t cores = usableCores();
  const int64_t parts =
      insidePart ? 1 : std::clamp(n / std::max<int64_t>(minimumPerPart, 1), int64_t{1}, cores);
  auto range = [&](int64_t part) {
    const bool outer = insidePart;
    insidePart = true;
    const ScopeExit restore([outer] { insidePart = outer; });
    kernel(n * part / parts, n * (part + 1) / parts);
  };
  if (parts == 1) return range(0);
  std::vector<std::promise<void>> finished(parts - 1);
  for (int64_t part = 1; part < parts; ++part)
    at::launch([&, part] {
      try {
        range(part);
        finished[part - 1].set_value();
      } catch (...) {
        finished[part - 1].set_exception(std::current_exception());
      }
    });
  std::exception_ptr failure;
  try {
    range(0);
  } catch (...) {
    failure = std::current_exception();
  }
  for (auto& part : finished) {
    try {
      part.get_future().get();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace nf

// Spreading the engine's own CPU kernels (attention's heads, GELU) over the cores. Engine-internal (torch).
#pragma once
#include <cstdint>
#include <functional>

namespace nf {

// Runs kernel(begin, end) on disjoint ranges covering [0, n), one per core this process may run on (at most
// one per `minimumPerPart` items): one range on the calling thread, the others on ATen's inter-op thread
// pool, whose idle threads sleep; returns when all are done, rethrowing the exception of the lowest-numbered
// range that threw. Never call it from a task on that pool: it would wait for tasks queued behind it. Not
// ATen's parallel_for: its OpenMP threads spin while idle and took the cores from OpenBLAS's
// (docs/BENCHMARKS.md), and LibTorch 1.13 starts it with one thread here. Calls from inside a range run
// serially. The ranges depend only on n and the core count, and a kernel that writes each item alone gives
// the same bits on any number of cores.
void forEachPart(int64_t n, int64_t minimumPerPart, const std::function<void(int64_t, int64_t)>& kernel);

}  // namespace nf

// OpenBLAS's worker threads, set for an engine that also runs kernels of its own. Plain C++ (no torch):
// both executables call it first, next to util/allocator.h.
#pragma once

namespace nf {

// Lets OpenBLAS's idle worker threads sleep as soon as a matrix product is done. By default each spins
// (yielding) for 2²⁸ cycles — about 80 ms, longer than a small model's whole step — after every product,
// so on a 2-core CPU the second core is never free for the engine's own threaded kernels (attention's heads,
// GELU): split over two threads, they ran no faster than on one (docs/BENCHMARKS.md). Waking a sleeping
// worker costs microseconds per product. Applies only where the BLAS is OpenBLAS with its own threads
// (found at run time); the environment is left as it was, so child processes are not affected. Call while
// no other thread can be inside a BLAS call (the workers are stopped and restarted): first thing in main();
// returns whether it applied.
bool letIdleBlasThreadsSleep();

}  // namespace nf

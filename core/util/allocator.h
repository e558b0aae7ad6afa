// The C library's allocator, set for tensor work. Plain C++ (no torch): both executables call it first.
#pragma once

namespace nf {

// Keeps freed memory in the process for the next allocation instead of handing it back to the system.
// A training step allocates and frees the same large buffers every time (activations, logits, gradients);
// by default glibc serves each buffer above 32 MiB with a fresh mmap and unmaps it on free, so every step
// pays a page fault per 4 KiB page touched again — on a 2-core CPU that was a third of a tiny model's step
// (docs/BENCHMARKS.md, "A training step on the CPU"). Also one arena for all threads, so a trainer on a
// background thread (the GUI's) reuses memory the same way. The price: the resident size stays at the
// peak. Call before any thread is started; returns false when the C library refused a setting.
bool keepFreedMemoryForReuse();

}  // namespace nf

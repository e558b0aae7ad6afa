#include "util/allocator.h"

#include <climits>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace nf {

bool keepFreedMemoryForReuse() {
#if defined(__GLIBC__)
  // Every allocation up to 2 GiB from the heap (a C library that caps the threshold at 32 MiB, as older
  // glibc did, is told to use no mmap at all instead); the heap's top is never trimmed below 2 GiB of free
  // space; threads share the main arena (other arenas serve anything above 64 MiB by mmap regardless).
  const bool threshold = mallopt(M_MMAP_THRESHOLD, INT_MAX) == 1 || mallopt(M_MMAP_MAX, 0) == 1;
  const bool trim = mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
  const bool arena = mallopt(M_ARENA_MAX, 1) == 1;
  return threshold && trim && arena;
#else
  return true;  // other C libraries keep their own policy
#endif
}

}  // namespace nf

// prefetch.h — asking the caches for memory before the code that reads it runs.
#pragma once

#include <cstdint>

namespace sf {

constexpr int64_t kCacheLine = 64;  // bytes

// Asks for the cache line holding p — for reading (RW 0) or writing (1), into L1 (Locality 3) or
// L2 (2) — and returns at once: the line arrives while the caller goes on with other work. Changes
// no value. The empty asm statement that takes p keeps the ask: GCC deletes a loop whose only work
// is prefetching (a prefetch is not an effect it must keep), so a loop of bare __builtin_prefetch
// calls over a run of lines compiles to nothing.
template <int RW = 0, int Locality = 2>
inline void prefetch_line(const void* p) {
  __builtin_prefetch(p, RW, Locality);
  asm volatile("" : : "r"(p));
}

// Asks for the cache lines of [p, p + bytes) into the L2 cache (prefetcht1), as prefetch_line.
inline void prefetch_bytes(const void* p, int64_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (int64_t o = 0; o < bytes; o += kCacheLine) prefetch_line(c + o);
}

}  // namespace sf

// prefetch.h — asking the caches for memory before the code that reads it runs.
#pragma once

#include <cstdint>

namespace sf {

constexpr int64_t kCacheLine = 64;  // bytes

// Asks for the cache lines of [p, p + bytes) into the L2 cache (locality 2, prefetcht1) and
// returns at once: the lines arrive while the caller goes on with other work. Changes no value.
inline void prefetch_bytes(const void* p, int64_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (int64_t o = 0; o < bytes; o += kCacheLine) __builtin_prefetch(c + o, 0, 2);
}

}  // namespace sf

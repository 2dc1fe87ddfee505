#include "base/allocator.h"

#include <malloc.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

namespace sf {

void tune_allocator() {
#ifdef M_MMAP_THRESHOLD
  mallopt(M_MMAP_THRESHOLD, 256 << 20);  // blocks below 256 MiB come from the heap, not mmap
  mallopt(M_TRIM_THRESHOLD, 512 << 20);  // keep up to 512 MiB of freed heap for the next run
#endif
}

void advise_huge_pages([[maybe_unused]] void* p, [[maybe_unused]] size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t b = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t e = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (e > b) madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);
#endif
}

void reserve_huge_heap(size_t bytes) {
  void* p = std::malloc(bytes);  // the arena's top grows by `bytes`, untouched
  if (!p) return;
  advise_huge_pages(p, bytes);
  std::free(p);  // back to the top chunk, which the next allocations split
}

}  // namespace sf

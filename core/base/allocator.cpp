#include "base/allocator.h"

#include <malloc.h>

namespace sf {

void tune_allocator() {
#ifdef M_MMAP_THRESHOLD
  mallopt(M_MMAP_THRESHOLD, 64 << 20);  // blocks below 64 MiB come from the heap, not mmap
  mallopt(M_TRIM_THRESHOLD, 256 << 20);  // keep up to 256 MiB of freed heap for the next run
#endif
}

}  // namespace sf

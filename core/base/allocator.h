// allocator.h — keep freed activation memory in the process.
//
// A recorded forward pass allocates many (n, d) and (n, V) blocks; glibc serves blocks over
// 128 KiB with mmap and returns them to the kernel on free, so every run would pay its page faults
// again; keeping them in the heap removes most of a recording's overhead. Call once at program start.
#pragma once

#include <cstddef>

namespace sf {

void tune_allocator();

// Asks for transparent huge pages on the 2 MiB-aligned part of a fresh allocation, before it is
// first touched: a large weight matrix then faults in 2 MiB pages instead of 4 KiB ones (loading
// GPT-2 small spent most of its kernel time in those faults). A no-op for small blocks.
void advise_huge_pages(void* p, size_t bytes);

// Grows the calling thread's malloc arena by `bytes` on transparent huge pages and leaves the space
// free for that thread's next allocations. A training shard's recording, gradients and
// temporaries (~40 MB for the training benchmark's, reused every step) then sit on 2 MiB pages,
// and the products that stream through them miss the TLB less (glibc's own
// glibc.malloc.hugetlb=1 does the same for the whole process). Has an
// effect only when the allocator keeps the space: `bytes` below the mmap threshold and the trim
// threshold above it (tune_allocator's, or `stepformer train`'s); otherwise it costs one mmap.
void reserve_huge_heap(size_t bytes);

}  // namespace sf

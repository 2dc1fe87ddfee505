// allocator.h — keep freed activation memory in the process.
//
// A recorded forward pass allocates many (n, d) and (n, V) blocks; glibc serves blocks over
// 128 KiB with mmap and returns them to the kernel on free, so every run paid page faults again
// (measured: recording overhead on the small benchmark fell from 1.3 ms to 0.45 ms with this).
// Call once at program start.
#pragma once

namespace sf {

void tune_allocator();

}  // namespace sf

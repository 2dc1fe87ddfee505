// startup.h — settings the C library and the OpenMP runtime read only as a process starts.
//
// Call restart_with_runtime_settings(argv) first thing in main: it sets in the environment what the
// user left unset and starts the program again with the same arguments (execv of /proc/self/exe),
// since glibc and the OpenMP runtime have read their settings by the time main runs. It returns, doing nothing
// more, when every setting is there already, in the program started again (at most one restart)
// or when the exec fails (the process then runs as it is).
//
// How long OpenMP's idle threads spin before they sleep (only with OpenMP, and unless the user set
// the runtime's own variable or OMP_WAIT_POLICY): LLVM's libomp, which a GCC build links when it
// is installed (core/CMakeLists.txt), spins 200 ms by default, GCC's libgomp 300,000 turns of a
// pause loop, about 8 ms on a Zen 4 core. On a host whose other core is busy a thread spinning that
// long holds the core its partner waits for, and each of a decoding step's short regions can cost
// a slice (base/split_governor.h). KMP_BLOCKTIME = kBlocktime (milliseconds, libomp's unit) and
// GOMP_SPINCOUNT = kSpinCount (about 250 µs) are longer than the gaps between a step's products.
//
// GLIBC_TUNABLES gains heap_tunables() (unless it names glibc.malloc.hugetlb already): glibc grows
// its heap on transparent huge pages (hugetlb=1, madvise) and, with Arenas::One, every thread
// allocates from that one heap (arena_max=1). A long run's recordings are fresh memory (a 1,020-token prompt on GPT-2
// small's shape records about 1.2 GB), and each 4 KiB page faulted in costs the kernel's zeroing
// and, in a virtual machine, an exit to the hypervisor: 2 MiB pages take 512 times fewer faults.
// Without arena_max=1 the explorer's worker thread allocates from a heap of its own, which glibc
// does not grow on huge pages (the first map took as long as with no setting at all). Threads that
// allocate at once, a training step's shards (thousands of blocks a step each), would wait on the
// one heap's lock instead (a two-shard step of the training benchmark, runs alternated: 16.7–17.2 ms
// on one arena, 15.6–16.1 ms with an arena per thread), so training keeps an arena per thread
// (Arenas::PerThread). Sanitizer builds' allocators ignore both.
#pragma once

#include <string>

namespace sf {

inline constexpr const char* kSpinCount = "10000";
inline constexpr const char* kBlocktime = "1";

enum class Arenas { One, PerThread };

// The GLIBC_TUNABLES value to start with, given the current one (nullptr: unset): `current`
// itself when it names glibc.malloc.hugetlb (the user's choice), else `current` with
// glibc.malloc.hugetlb=1 and, for Arenas::One unless it names it, glibc.malloc.arena_max=1 appended.
std::string heap_tunables(const char* current, Arenas arenas);

void restart_with_runtime_settings(char** argv, Arenas arenas);

}  // namespace sf

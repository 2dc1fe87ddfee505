#include "base/threads.h"

#include <atomic>
#include <cstdlib>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(_OPENMP) && defined(__clang__)
#if __has_feature(address_sanitizer)
// A sanitizer build made by clang links LLVM's OpenMP runtime (libomp), which keeps its threads'
// buffers until the process exits; LeakSanitizer reads this hook for its default suppressions and
// would otherwise report those buffers as leaks of libomp.so.
extern "C" const char* __lsan_default_suppressions() { return "leak:libomp.so\n"; }
#endif
#endif

namespace sf {

namespace {

// The count for threads that have not chosen one: 1 in the library (tests, embedding programs),
// every core once the stepformer executable calls set_default_threads.
std::atomic<int> g_default_threads{1};
thread_local int t_threads = 0;  // this thread's count; 0: not chosen yet

int resolve(int n) { return n > 0 ? n : hardware_threads(); }

}  // namespace

int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

void set_threads(int n) {
  t_threads = resolve(n);
#ifdef _OPENMP
  // omp_set_num_threads sets the calling thread's own value (its implicit task's nthreads-var);
  // Eigen reads it through omp_get_max_threads() as long as Eigen::setNbThreads is never called.
  omp_set_num_threads(t_threads);
#endif
}

int threads() {
  if (t_threads == 0) set_threads(g_default_threads);
#ifdef _OPENMP
  return t_threads;
#else
  return 1;
#endif
}

int pass_threads(int64_t floats) {
#ifdef _OPENMP
  if (floats >= kSplitPassFloats && !omp_in_parallel()) return threads();
#endif
  (void)floats;
  return 1;
}

void set_default_threads(int n) {
  g_default_threads = resolve(n);
  set_threads(n);
}

void apply_default_threads() { set_threads(g_default_threads); }

bool parse_threads(const char* text, int& n) {
  if (text[0] < '0' || text[0] > '9') return false;  // strtol would skip spaces and take signs
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 0 || v > 1024) return false;
  n = static_cast<int>(v);
  return true;
}

}  // namespace sf

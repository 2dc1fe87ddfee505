// allocation_phase.cpp — malloc, free and their kin timed as Phase::Allocation (allocation_phase.h).
#include "allocation_phase.h"

#include <cerrno>
#include <cstddef>

#include "base/phase_timer.h"

#if SF_WRAP_MALLOC
// glibc's own entry points, which the wrappers below call: the executable's definitions take the
// place of the library's for every caller in the process (Eigen, std::vector, …).
extern "C" {
void* __libc_malloc(size_t);
void __libc_free(void*);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);

void* malloc(size_t n) {
  const sf::ScopedPhase phase(sf::Phase::Allocation);
  return __libc_malloc(n);
}
void free(void* p) {
  const sf::ScopedPhase phase(sf::Phase::Allocation);
  __libc_free(p);
}
void* calloc(size_t n, size_t size) {
  const sf::ScopedPhase phase(sf::Phase::Allocation);
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) {
  const sf::ScopedPhase phase(sf::Phase::Allocation);
  return __libc_realloc(p, n);
}
void* memalign(size_t align, size_t n) {
  const sf::ScopedPhase phase(sf::Phase::Allocation);
  return __libc_memalign(align, n);
}
void* aligned_alloc(size_t align, size_t n) { return memalign(align, n); }
int posix_memalign(void** out, size_t align, size_t n) {
  void* p = memalign(align, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
}
#endif

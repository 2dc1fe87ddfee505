// allocation_phase.h — the breakdown programs count the time spent in malloc and free as
// Phase::Allocation: allocation_phase.cpp, linked into them, wraps glibc's allocator with a
// ScopedPhase. Sanitizer builds keep their own allocator (SF_WRAP_MALLOC is 0 there).
#pragma once

#include <cstddef>  // defines __GLIBC__ on glibc

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SF_WRAP_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define SF_WRAP_MALLOC 0
#endif
#endif
#ifndef SF_WRAP_MALLOC
#ifdef __GLIBC__
#define SF_WRAP_MALLOC 1
#else
#define SF_WRAP_MALLOC 0
#endif
#endif

#include "base/startup.h"

#include <cstdlib>
#include <optional>

#include <sys/auxv.h>
#include <unistd.h>

namespace sf {

namespace {

// GLIBC_TUNABLES is a colon-separated list of name=value.
bool names(const std::string& tunables, const std::string& name) {
  size_t at = 0;
  while ((at = tunables.find(name + "=", at)) != std::string::npos) {
    if (at == 0 || tunables[at - 1] == ':') return true;
    at += name.size();
  }
  return false;
}

// The variable's value before this process changed it (nullopt: unset), to put back.
struct Saved {
  const char* name;
  std::optional<std::string> value;
  explicit Saved(const char* n) : name(n) {
    if (const char* v = std::getenv(n)) value = v;
  }
  void restore() const {
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
};

}  // namespace

std::string heap_tunables(const char* current, Arenas arenas) {
  std::string t = current ? current : "";
  if (names(t, "glibc.malloc.hugetlb")) return t;
  auto add = [&t](const char* setting) { t += (t.empty() ? "" : ":") + std::string(setting); };
  add("glibc.malloc.hugetlb=1");
  if (arenas == Arenas::One && !names(t, "glibc.malloc.arena_max")) add("glibc.malloc.arena_max=1");
  return t;
}

void restart_with_runtime_settings(char** argv, Arenas arenas) {
  // Set in the environment of the program started again, and taken out at once: one restart at
  // most, even where the settings do not reach the new process (a set-user-ID program, whose
  // GLIBC_TUNABLES glibc erases, is not restarted at all).
  constexpr const char* kGuard = "STEPFORMER_STARTED_AGAIN";
  if (std::getenv(kGuard)) {
    unsetenv(kGuard);
    return;
  }
  if (getauxval(AT_SECURE)) return;
  const Saved spin("GOMP_SPINCOUNT"), blocktime("KMP_BLOCKTIME"), tunables("GLIBC_TUNABLES");
  bool changed = false;
#ifdef _OPENMP
  // Both runtimes' settings: each reads its own and ignores the other's.
  const bool policy = std::getenv("OMP_WAIT_POLICY") != nullptr;
  if (!std::getenv("GOMP_SPINCOUNT") && !policy) changed |= setenv("GOMP_SPINCOUNT", kSpinCount, 1) == 0;
  if (!std::getenv("KMP_BLOCKTIME") && !policy) changed |= setenv("KMP_BLOCKTIME", kBlocktime, 1) == 0;
#endif
  const std::string heap = heap_tunables(std::getenv("GLIBC_TUNABLES"), arenas);
  if (!tunables.value || heap != *tunables.value) changed |= setenv("GLIBC_TUNABLES", heap.c_str(), 1) == 0;
  if (changed && setenv(kGuard, "1", 1) == 0) {
    execv("/proc/self/exe", argv);
    unsetenv(kGuard);  // the exec failed
  }
  spin.restore();  // not started again: this process keeps the settings it started with
  blocktime.restore();
  tunables.restore();
}

}  // namespace sf

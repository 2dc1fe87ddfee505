#!/usr/bin/env bash
# Sets up everything stepformer needs on Debian 12 and builds it (Release, into build/).
#  - installs the missing Debian packages (as root, or through sudo);
#  - configures with CMake and builds with every core.
# Safe to run again: it only installs what is missing and rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(build-essential cmake pkg-config
  libeigen3-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
  libimgui-dev libstb-dev libglfw3-dev libgl-dev libgl1-mesa-dri fonts-dejavu-core
  xvfb xauth
  libsentencepiece-dev libicu-dev  # the Hugging Face tokenizers (core/text)
  libomp-14-dev  # LLVM's OpenMP runtime, which the matrix products run on (core/CMakeLists.txt)
  clang-14 libclang-rt-14-dev  # the sanitizer build and libFuzzer (scripts/test.sh, fuzz.sh)
  clang-format-14  # the formatter scripts/check-format.sh runs
  file desktop-file-utils appstream)  # the package test (tests/package_test.py): CPack, the desktop files
# scripts/package.sh asks for more (lintian) through STEPFORMER_EXTRA_PACKAGES.
read -r -a EXTRA <<<"${STEPFORMER_EXTRA_PACKAGES:-}"
PACKAGES+=("${EXTRA[@]}")

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "setup: these Debian packages are missing and I am neither root nor able to sudo: ${missing[*]}" >&2
    exit 1
  fi
  "${SUDO[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

BUILD_DIR=${STEPFORMER_BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$BUILD_DIR" -j"$(nproc)"

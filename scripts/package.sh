#!/usr/bin/env bash
# Builds the Debian package build/package/stepformer_<version>_amd64.deb from the Release build
# (scripts/setup.sh) with CPack — its dependencies come from the shared libraries the binary links
# (dpkg-shlibdeps) — and checks it with lintian: an error fails the script, warnings are printed.
# Install it with `sudo apt install ./build/package/stepformer_<version>_amd64.deb`; stepformer
# then runs from any folder and from the desktop menu (packaging/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
STEPFORMER_EXTRA_PACKAGES="lintian" bash scripts/setup.sh
rm -f build/package/stepformer_*.deb
cpack --config build/CPackConfig.cmake -G DEB -B build/package >/dev/null
deb=$(ls build/package/stepformer_*_amd64.deb)
echo "package: $deb"
dpkg-deb --info "$deb" | sed -n '/Package:/,$p'
echo "== lintian"
lintian --fail-on error --display-info "$deb"
echo "package: lintian found no error in $deb"

#!/usr/bin/env bash
# Lists the project's C++ sources (every tracked .cpp and .h), one per line, for the formatter.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -- '*.cpp' '*.h'

#!/usr/bin/env bash
# Fails (and lists the files) when a C++ source differs from what clang-format-14 makes of it.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format-14 >/dev/null 2>&1; then
  echo "check-format: clang-format-14 is missing (apt-get install clang-format-14)" >&2
  exit 1
fi
bash scripts/format-files.sh | xargs clang-format-14 --dry-run -Werror
echo "check-format: every C++ source is formatted"

#!/usr/bin/env bash
# Lists the project's C++ sources (every .cpp and .h that git tracks or would track: new files
# count before their first commit), one per line, for the formatter.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files --cached --others --exclude-standard -- '*.cpp' '*.h' | while IFS= read -r f; do
  [ -f "$f" ] && printf '%s\n' "$f"
done

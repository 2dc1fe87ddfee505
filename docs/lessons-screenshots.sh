#!/bin/sh
# Screenshots of every step of every built-in lesson for docs/lessons.md: 1600x900 under Xvfb,
# in presentation mode (the lessons switch it on), written to docs/img/lesson-NN-S.png.
#   sh docs/lessons-screenshots.sh [build/app/stepformer]
set -e
cd "$(dirname "$0")/.."
exe=${1:-build/app/stepformer}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in assets/lessons/*.txt; do
  name=$(basename "$f" .txt)
  num=${name%%-*}
  steps=$(grep -c '^caption step' "$f")
  script="$tmp/$name.txt"
  echo "lesson open $name" > "$script"
  i=1
  while [ "$i" -le "$steps" ]; do
    [ "$i" -gt 1 ] && echo "lesson next" >> "$script"
    echo "screenshot $PWD/docs/img/lesson-$num-$i.png" >> "$script"
    i=$((i + 1))
  done
  # --screenshot makes the run headless (no pointer over the window) and ends it.
  XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" xvfb-run -a -s "-screen 0 1600x900x24" \
    "$exe" --script "$script" --screenshot "$tmp/last.png"
  rm -f docs/img/lesson-"$num"-*.png.json
done

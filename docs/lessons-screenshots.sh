#!/bin/sh
# Screenshots of every step of every built-in lesson for docs/lessons.md: 1600x900 under Xvfb,
# in presentation mode (the lessons switch it on), written to docs/img/lesson-NN-S.png.
#   sh docs/lessons-screenshots.sh [build/app/stepformer [LESSON]]   (LESSON: e.g. 06-pre-post-ln)
# Each lesson is opened from its file in the checkout, the pictures are written to paths relative
# to it, and HOME is a scratch folder: the pictures name the lesson as assets/lessons/NN-NAME.txt,
# the exports folder as ~/.local/share/stepformer/exports and the last picture written as
# docs/img/..., as a reader sees them, and no path of this machine.
set -e
cd "$(dirname "$0")/.."
exe=${1:-build/app/stepformer}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in assets/lessons/${2:-*}.txt; do
  name=$(basename "$f" .txt)
  num=${name%%-*}
  steps=$(grep -c '^caption step' "$f")
  script="$tmp/$name.txt"
  echo "lesson open $f" > "$script"
  i=1
  while [ "$i" -le "$steps" ]; do
    [ "$i" -gt 1 ] && echo "lesson next" >> "$script"
    echo "screenshot docs/img/lesson-$num-$i.png" >> "$script"
    i=$((i + 1))
  done
  # --screenshot makes the run headless (no pointer over the window) and ends it.
  mkdir -p "$tmp/home"
  env -u XDG_DATA_HOME HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config" xvfb-run -a -s "-screen 0 1600x900x24" \
    "$exe" --script "$script" --screenshot "$tmp/last.png"
  rm -f docs/img/lesson-"$num"-*.png.json
done

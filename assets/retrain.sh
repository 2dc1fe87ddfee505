#!/bin/sh
# Retrains every shipped model (assets/models/<task>-<pre|post>ln.safetensors) from scratch, with
# the exact commands recorded in assets/models/README.md, JOBS trainings at a time (default 2,
# one per core; more help only when other programs compete for the cores).
#
#   sh assets/retrain.sh                       # uses build/app/stepformer, writes assets/models/
#   STEPFORMER=build-train/app/stepformer OUT=/tmp/models JOBS=2 sh assets/retrain.sh
#   TASKS="en-de en-lm" sh assets/retrain.sh  # only these tasks (both norms)
#
# Each model also gets <name>.metrics.json (loss, learning rate, gradient norms per step; residual
# norms and attention entropy every 50 steps; exact match on 1,000 held-out examples at the end).
set -eu
cd "$(dirname "$0")/.."
BIN=${STEPFORMER:-build/app/stepformer}
OUT=${OUT:-assets/models}
JOBS=${JOBS:-2}
[ -x "$BIN" ] || { echo "retrain.sh: $BIN not found; build first (cmake --build build)" >&2; exit 1; }
mkdir -p "$OUT"

# task  steps  cool-down  (every model: d_model 64, 4 heads, d_ff 256, 2+2 layers, batch 64,
#   seed 1, warm-up schedule with factor 1 over 400 steps, then a linear cool-down to 0 over the
#   last third of the steps, label smoothing 0.1, no dropout; except induction: attention-only
#   (d_ff 0) and no label smoothing, so that its loss shows the plateau and the drop to 0 as the
#   induction heads form)
# copy and reverse first: the main job and the tests use them.
JOBLIST="copy 2000 700
reverse 2000 700
sort 4000 1400
add 3000 1000
copy-lm 3000 1000
dates 2000 700
en-de 4000 1300
en-lm 3000 1000
induction 2000 700"

if [ -n "${TASKS:-}" ]; then
  JOBLIST=$(echo "$JOBLIST" | while read -r task rest; do
    case " $TASKS " in *" $task "*) echo "$task $rest" ;; esac
  done)
  [ -n "$JOBLIST" ] || { echo "retrain.sh: TASKS='$TASKS' names none of the shipped tasks" >&2; exit 1; }
fi

start=$(date +%s)
echo "$JOBLIST" | while read -r task steps cooldown; do
  for norm in pre post; do echo "$task $norm $steps $cooldown"; done
done | xargs -P "$JOBS" -L 1 sh -c '
  task=$0 norm=$1 steps=$2 cooldown=$3 dff=256 factor=1 smoothing=
  if [ "$task" = induction ]; then dff=0 smoothing="--label-smoothing 0"; fi
  "'"$BIN"'" train --task "$task" --norm "$norm" --layers 2 --d-model 64 --heads 4 --d-ff "$dff" \
    --batch 64 --warmup 400 --factor "$factor" --cooldown "$cooldown" --steps "$steps" --seed 1 --eval-every 250 \
    $smoothing --quiet \
    --out "'"$OUT"'/$task-${norm}ln.safetensors" > "'"$OUT"'/$task-${norm}ln.log" 2>&1 \
  && tail -n 1 "'"$OUT"'/$task-${norm}ln.log" \
  || { echo "FAILED: $task $norm (see '"$OUT"'/$task-${norm}ln.log)"; exit 255; }'
end=$(date +%s)
rm -f "$OUT"/*.log
echo "retrained $(($(echo "$JOBLIST" | wc -l) * 2)) models in $((end - start)) s with $JOBS parallel jobs"

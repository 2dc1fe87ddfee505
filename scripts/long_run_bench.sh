#!/usr/bin/env bash
# long_run_bench.sh — a 1,024-position GPT-2-shaped run in the explorer and in `stepformer decode`:
# peak memory, the time to the first attention map, and the model view's frame time.
#
#   bash scripts/long_run_bench.sh        # ≈ 1 minute per run on an idle 2-core machine
#
# The model: `stepformer init` of GPT-2 small's shape (d_model 768, 12 heads, 12 layers, d_ff 3072,
# learned positions, tied embeddings, GPT-2's tanh GELU) with a 50,257-word vocabulary, seed 1; the prompt: 1,019
# words drawn with a fixed seed (1,020 positions with <s>), greedy decoding to max-len 4. Each run
# starts a fresh explorer under Xvfb at 1600×900 (Mesa llvmpipe) with a script that loads the
# model, screenshots, sets the input, steps to layer 0's self-attention (the first map),
# screenshots, decodes to the end, opens the model view (144 maps) and screenshots; then
# --bench-frames draws 120 frames of that view. "First map" is the time between the first two
# screenshots (the files' modification times); peak RSS is /usr/bin/time's.
#
# Environment:
#   BUILD_DIR  the build with the explorer (default build/)
#   RUNS       explorer runs (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build}
RUNS=${RUNS:-3}
APP="$BUILD/app/stepformer"
if [ ! -x "$APP" ]; then
  echo "long_run_bench.sh: expected the explorer at $APP (bash scripts/setup.sh); found none" >&2
  exit 1
fi
for tool in xvfb-run /usr/bin/time python3; do
  command -v "$tool" >/dev/null || { echo "long_run_bench.sh: expected $tool on PATH; found none" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work" <<'EOF'
import json, random, sys
work = sys.argv[1]
vocab = ["<pad>", "<s>", "</s>", "<unk>"] + ["w%d" % i for i in range(50257 - 4)]
config = {"arch": "decoder-only", "d_model": 768, "n_heads": 12, "n_encoder_layers": 0,
          "n_decoder_layers": 12, "d_ff": 3072, "max_len": 1024, "norm": "pre",
          "activation": "gelu_tanh", "positional": "learned", "share_embeddings": True,
          "tgt_vocab": vocab}
with open(work + "/gpt2.json", "w") as f:
    json.dump(config, f)
rng = random.Random(1)
with open(work + "/prompt.txt", "w") as f:
    f.write(" ".join("w%d" % rng.randrange(50253) for _ in range(1019)))
EOF
"$APP" init --config "$work/gpt2.json" --seed 1 --out "$work/gpt2.safetensors" >/dev/null
prompt=$(cat "$work/prompt.txt")
cat >"$work/run.txt" <<EOF
model $work/gpt2.safetensors
max-len 4
decode greedy
attention kind=dec-self layer=0 head=0 view=heatmap
screenshot $work/s0.png
input $prompt
step 2
expect stage decoder layer 0 · masked self-attention
screenshot $work/s1.png
end
attention view=model
screenshot $work/s2.png
EOF

peak_mb() { awk '/Maximum resident set size/ { printf "%d", $NF / 1024 }' "$1"; }
# Seconds between two files' modification times (screenshots written by the script).
seconds_between() { awk -v a="$(stat -c %.3Y "$1")" -v b="$(stat -c %.3Y "$2")" 'BEGIN { printf "%.2f", b - a }'; }
echo "explorer, GPT-2 small's shape, 1,019-word prompt, greedy to max-len 4 (load average $(cut -d' ' -f1 /proc/loadavg)):"
for r in $(seq 1 "$RUNS"); do
  rm -f "$work"/s?.png
  if ! /usr/bin/time -v -o "$work/time.txt" xvfb-run -a -s "-screen 0 1600x900x24" \
    "$APP" --size 1600x900 --script "$work/run.txt" --bench-frames 120 >"$work/out.txt" 2>&1; then
    echo "long_run_bench.sh: the explorer run failed:" >&2
    cat "$work/out.txt" >&2
    exit 1
  fi
  first=$(seconds_between "$work/s0.png" "$work/s1.png")
  view=$(seconds_between "$work/s0.png" "$work/s2.png")
  frames=$(grep -m1 '^mean ' "$work/out.txt")
  echo "  run $r: peak RSS $(peak_mb "$work/time.txt") MB, first map ${first} s, model view ${view} s, frames: $frames"
done
/usr/bin/time -v -o "$work/time.txt" "$APP" decode --model "$work/gpt2.safetensors" --src "$prompt" --greedy \
  --max-len 4 >/dev/null
echo "stepformer decode, the same run: peak RSS $(peak_mb "$work/time.txt") MB"

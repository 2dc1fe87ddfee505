#!/usr/bin/env python3
"""GUI tests of the Inspect panel (docs/inspect.md), run by CTest under Xvfb like gui_test.py; the
PNG reader, the Xvfb runner and the heatmap checks are in guitest_common.py. Each case opens one
tab on a shipped model, takes a screenshot, exports the tab's grid as CSV and checks its numbers
against the command line or an identity:

  lens         the top token and its probability in every cell equal the argmax and softmax of
               `stepformer trace --lens`'s lens.logits for the same input
  attribution  the parts add up to the total, and the total is `stepformer trace`'s logit there
  heads        every score lies in [0, 1]; a head's map opens on the probe
  rollout      every row of R sums to 1 (rollout redistributes, never creates, mass)

usage: inspect_test.py CASE --exe STEPFORMER --xvfb-run XVFB_RUN --out DIR [--models DIR]
"""
import csv
import json
import math
import os
import struct
import subprocess
import sys

from guitest_common import check_heatmap, main

SRC, TGT = "3 1 4 1 5", "3 1 4 1 5"


def read_safetensors(path):
    """{name: (shape, [float…])} of the F32 tensors of a .safetensors file."""
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__" or t["dtype"] != "F32":
            continue
        a, b = t["data_offsets"]
        raw = data[8 + n + a:8 + n + b]
        out[name] = (t["shape"], list(struct.unpack(f"<{len(raw) // 4}f", raw)))
    return out


def model(t, name):
    return os.path.join(t.models, name + ".safetensors")


def trace(t, name, lens):
    out = t.path("trace.safetensors")
    cmd = [t.exe, "trace", "--model", model(t, name), "--src", SRC, "--tgt", TGT, "--out", out] + (["--lens"] if lens else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    t.check(p.returncode == 0, f"stepformer trace ran ({p.stderr.strip()})")
    return read_safetensors(out)


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def run_tab(t, name, lines, shot):
    s = f"""model {model(t, name)}
input {SRC}
target {TGT}
decode forced
end
{lines}
screenshot {t.path(shot + '.png')}
quit
"""
    p = t.run([], s)
    t.check(p.returncode == 0, f"the {shot} script ran without errors (exit {p.returncode})")
    img, lay = t.shot(shot)
    if img:
        check_heatmap(t, img, lay, "inspect", shot)


def case_lens(t):
    run_tab(t, "copy-preln", f"inspect lens\nlens-cell 2 3\ninspect-csv {t.path('lens.csv')}", "lens")
    want = trace(t, "copy-preln", True)
    shape, flat = want["lens.logits"]
    P, m, V = shape
    got = rows(t.path("lens.csv"))
    t.check(len(got) == P * m, f"the CSV has every cell ({len(got)} rows, {P}×{m} expected)")
    worst, same = 0.0, 0
    for r in got:
        p, i = int(r["point"]), int(r["position"])
        row = flat[(p * m + i) * V:(p * m + i + 1) * V]
        top = max(range(V), key=lambda j: row[j])
        mx = max(row)
        prob = math.exp(row[top] - mx) / sum(math.exp(x - mx) for x in row)
        same += int(r["top_id"]) == top
        worst = max(worst, abs(float(r["prob"]) - prob))
    t.check(same == len(got), f"top tokens equal trace --lens's argmax ({same}/{len(got)})")
    t.check(worst <= 1e-5, f"probabilities equal trace --lens's softmax (worst difference {worst:.2e})")


def case_attribution(t):
    run_tab(t, "reverse-preln", f"attribute 2\ninspect-csv {t.path('attr.csv')}", "attribution")
    got = rows(t.path("attr.csv"))
    parts = [float(r["value"]) for r in got if r["kind"] not in ("sum", "total")]
    total = [float(r["value"]) for r in got if r["kind"] == "total"][0]
    t.check(abs(sum(parts) - total) <= 1e-4, f"the parts add up to the total ({sum(parts):.6f} vs {total:.6f})")
    want = trace(t, "reverse-preln", False)
    shape, logits = want["logits"]
    V = shape[1]
    row = logits[2 * V:3 * V]
    top = max(range(V), key=lambda j: row[j])
    t.check(abs(row[top] - total) <= 1e-4, f"the total is trace's top logit at position 2 ({row[top]:.6f})")


def case_heads(t):
    run_tab(t, "copy-preln", f"detect 8 1\ninspect-csv {t.path('heads.csv')}\ndetect-head dec 0 0", "heads")
    got = rows(t.path("heads.csv"))
    t.check(len(got) > 0, f"the CSV holds the scores ({len(got)} rows)")
    t.check(all(0.0 <= float(r["score"]) <= 1.0 + 1e-6 for r in got), "every score lies in [0, 1]")
    t.check({r["pattern"] for r in got} == {"previous token", "duplicate token", "induction", "first token"},
            "the four patterns are scored")


def case_rollout(t):
    run_tab(t, "reverse-preln", f"rollout enc\ninspect-csv {t.path('rollout.csv')}", "rollout")
    got = rows(t.path("rollout.csv"))
    sums = [sum(float(v) for k, v in r.items() if k.startswith("from")) for r in got]
    t.check(len(sums) > 0 and all(abs(s - 1) <= 1e-4 for s in sums), f"every row of R sums to 1 ({sums})")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}


def add_args(ap):
    ap.add_argument("--models", default=os.path.join(os.path.dirname(__file__), "..", "..", "assets", "models"))


def folders(t, args):
    t.models = os.path.abspath(args.models)


if __name__ == "__main__":
    sys.exit(main(CASES, prefix="inspect_", add_args=add_args, setup=folders))

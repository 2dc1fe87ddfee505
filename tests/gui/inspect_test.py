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
  ablation     the ablated run's top 5 equal `stepformer trace --ablate`'s probabilities; the
               clean run's equal plain `stepformer trace`'s; KL > 0
  patching     the patching grid equals `stepformer patch`'s CSV; a cell opens its patched run
  cancel       the Cancel button stops a long patching run (a model made for it: hundreds of
               forward passes of 190 tokens); the panel says it was cancelled and patches again

usage: inspect_test.py CASE --exe STEPFORMER --xvfb-run XVFB_RUN --out DIR [--models DIR]
"""
import csv
import json
import math
import os
import re
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


LM_CLEAN, LM_CORRUPT = "the keys to the cabinet", "the key to the cabinet"


def case_ablation(t):
    s = f"""model {model(t, 'en-lm-preln')}
input {LM_CLEAN}
inspect ablation
ablate 0.3,1.0 zero
inspect-csv {t.path('ablation.csv')}
screenshot {t.path('ablation.png')}
quit
"""
    p = t.run([], s)
    t.check(p.returncode == 0, f"the ablation script ran without errors (exit {p.returncode})")
    img, lay = t.shot("ablation")
    if img:
        check_heatmap(t, img, lay, "inspect", "ablation")
    got = rows(t.path("ablation.csv"))
    runs = {}
    for r in got:
        runs.setdefault(r["run"], []).append(r)
    t.check(set(runs) == {"clean", "ablated", "kl"}, f"the CSV has both top-5 lists and the KL ({sorted(runs)})")
    kl = float(runs["kl"][0]["prob"])
    t.check(kl > 0, f"removing the heads moves the distribution (KL {kl:.4f})")
    for name, extra in (("clean", []), ("ablated", ["--ablate", "0.3,1.0"])):
        out = t.path(name + ".safetensors")
        q = subprocess.run([t.exe, "trace", "--model", model(t, "en-lm-preln"), "--src", LM_CLEAN, "--out", out] + extra,
                           capture_output=True, text=True)
        t.check(q.returncode == 0, f"stepformer trace {' '.join(extra)} ran ({q.stderr.strip()})")
        shape, probs = read_safetensors(out)["probs"]
        m, V = shape
        row = probs[(m - 1) * V:m * V]
        worst = max(abs(row[int(r["id"])] - float(r["prob"])) for r in runs[name])
        top = max(range(V), key=lambda j: row[j])
        t.check(int(runs[name][0]["id"]) == top, f"the {name} top token is trace's argmax ({top})")
        t.check(worst <= 1e-6, f"the {name} probabilities equal trace's (worst difference {worst:.2e})")


def case_patching(t):
    s = f"""model {model(t, 'en-lm-preln')}
input {LM_CLEAN}
inspect patching
patch resid are is | {LM_CLEAN} | {LM_CORRUPT}
inspect-csv {t.path('patch.csv')}
patch-cell 0 2
screenshot {t.path('patching.png')}
quit
"""
    p = t.run([], s)
    t.check(p.returncode == 0, f"the patching script ran without errors (exit {p.returncode})")
    img, lay = t.shot("patching")
    if img:
        check_heatmap(t, img, lay, "inspect", "patching")
    want = t.path("cli.csv")
    q = subprocess.run([t.exe, "patch", "--model", model(t, "en-lm-preln"), "--clean", LM_CLEAN, "--corrupt", LM_CORRUPT,
                        "--answer", "are", "--wrong", "is", "--what", "resid", "--out", want],
                       capture_output=True, text=True)
    t.check(q.returncode == 0, f"stepformer patch ran ({q.stderr.strip()})")
    got, ref = rows(t.path("patch.csv")), rows(want)
    t.check(len(got) == len(ref) and len(got) > 0, f"the grids have the same cells ({len(got)} and {len(ref)})")
    worst = max((abs(float(a["recovered"]) - float(b["recovered"])) for a, b in zip(got, ref)), default=1.0)
    same = all((a["layer"], a["position"], a["token"]) == (b["layer"], b["position"], b["token"]) for a, b in zip(got, ref))
    t.check(same and worst <= 1e-7, f"the panel's grid is the command line's (worst difference {worst:.2e})")
    # The stream entering layer 0 differs only at the corrupted token: 1 there, 0 elsewhere.
    row0 = {int(r["position"]): float(r["recovered"]) for r in got if r["layer"] == "0"}
    t.check(abs(row0[2] - 1) <= 1e-6 and all(abs(v) <= 1e-9 for i, v in row0.items() if i != 2),
            f"layer 0 recovers only at 'keys' ({row0})")


def box(lay, panel, prefix):
    """The first box (DrawnBoxes) of `panel` whose name starts with `prefix`: [name, x0, y0, x1, y1] or None."""
    for b in lay["panels"].get(panel, {}).get("boxes", []):
        if b[0].startswith(prefix):
            return b
    return None


def case_cancel(t):
    """Starts patching on a decoder big enough that the job takes hundreds of forward passes,
    waits until the panel shows its Cancel button, presses it (the pointer, as a mouse), waits
    until the panel says the run was cancelled, then patches a short prompt to the end."""
    cfg = {"arch": "decoder-only", "d_model": 256, "n_heads": 4, "n_encoder_layers": 0, "n_decoder_layers": 4,
           "d_ff": 1024, "max_len": 200, "norm": "pre", "activation": "gelu", "positional": "learned",
           "share_embeddings": False, "tgt_vocab": ["<pad>", "<s>", "</s>", "<unk>", "a", "b", "c", "d", "e"]}
    with open(t.path("big.json"), "w") as f:
        json.dump(cfg, f)
    big = t.path("big.safetensors")
    q = subprocess.run([t.exe, "init", "--config", t.path("big.json"), "--seed", "7", "--out", big],
                       capture_output=True, text=True)
    t.check(q.returncode == 0, f"stepformer init made the model ({q.stderr.strip()})")
    words = ("a b c d e " * 38).split()  # 190 tokens
    clean, corrupt = " ".join(words), " ".join(["b"] + words[1:])
    s = f"""model {big}
input {clean}
hover -100 -100
patch-start resid a b | {clean} | {corrupt}
wait-box inspect Cancel
screenshot {t.path('running.png')}
click inspect Cancel
wait-box inspect message cancelled
screenshot {t.path('cancelled.png')}
hover -100 -100
patch resid a b | a b c d e | b b c d e
screenshot {t.path('after.png')}
quit
"""
    p = t.run([], s, timeout=600)
    t.check(p.returncode == 0, f"the script ran without errors (exit {p.returncode})")
    _, run = t.shot("running")
    if run:
        t.check(box(run, "inspect", "Cancel") is not None, "while patching runs the panel shows a Cancel button")
    _, lay = t.shot("cancelled")
    if lay:
        msg = box(lay, "inspect", "message cancelled")
        # A slow build (ASan) may cancel before the clean and corrupted runs give the total.
        m = re.search(r"cancelled after (\d+) of (\d+) patched runs", msg[0]) if msg else None
        early = msg is not None and "cancelled before the first patched run" in msg[0]
        t.check(early or (m is not None and int(m.group(1)) < int(m.group(2))),
                f"the panel says the run was cancelled before its end ({msg[0] if msg else None})")
        t.check(box(lay, "inspect", "Cancel") is None, "the Cancel button is gone: the job stopped")
    img, after = t.shot("after")
    if img:
        check_heatmap(t, img, after, "inspect", "a patching run after the cancelled one")
        t.check(box(after, "inspect", "message") is None, "the finished run shows no message")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}


def add_args(ap):
    ap.add_argument("--models", default=os.path.join(os.path.dirname(__file__), "..", "..", "assets", "models"))


def folders(t, args):
    t.models = os.path.abspath(args.models)


if __name__ == "__main__":
    sys.exit(main(CASES, prefix="inspect_", add_args=add_args, setup=folders))

#!/usr/bin/env python3
"""GUI tests of the pre-LN vs post-LN views (compare mode, training, gradient norms at init; see
docs/compare.md), run by CTest under Xvfb like gui_test.py; the PNG reader, the Xvfb runner and
the heatmap checks are in guitest_common.py.

  compare    a pre-LN/post-LN pair (the shipped pair when there is one, else the golden-test
             fixtures) stepped in lockstep: `expect-compare aligned` after every kind of move,
             screenshots, and the plotted numbers exported twice to CSV are the same (determinism).
  training   trains both placements briefly with and without warm-up, pauses/resumes/cancels,
             saves the models, opens them in compare; screenshots; the loss CSV holds every run.
  gradnorms  the plotted gradient norms at initialisation (exported as CSV) equal what
             `stepformer gradnorms` prints.

usage: prepost_test.py CASE --exe STEPFORMER --xvfb-run XVFB_RUN --out DIR [--fixtures DIR] [--models DIR]
"""
import csv
import math
import os
import subprocess
import sys

from guitest_common import check_heatmap, colours, main, read_png


def read_csv(path):
    """{series: [(x, y), …]} of a plot's CSV export."""
    out = {}
    with open(path) as f:
        r = csv.reader(f)
        next(r)
        for row in r:
            out.setdefault(row[0], []).append((row[1], float(row[2])))
    return out


def pair(t):
    """The models the compare case opens: the shipped copy pair, else the fixtures."""
    pre, post = (os.path.join(t.models, f"copy-{n}.safetensors") for n in ("preln", "postln"))
    if os.path.exists(pre) and os.path.exists(post):
        return pre, post, "3 5 1 1 7"
    print("note: no shipped copy-preln/copy-postln pair: comparing the golden-test fixtures")
    return (os.path.join(t.fixtures, "encdec_pre_relu_sin.safetensors"),
            os.path.join(t.fixtures, "encdec_post_relu_sin.safetensors"), "3 5 1 1 7")


def case_compare(t):
    pre, post, src = pair(t)
    s = f"""compare files {pre} {post}
compare-input {src}
expect-compare aligned
screenshot {t.path('start.png')}
compare-step 2
expect-compare aligned
expect-compare stage-a LayerNorm before self-attention
expect-compare stage-b add positional encoding
compare-step
expect-compare stage-a self-attention
expect-compare stage-b self-attention
compare-token 2
expect-compare aligned
expect-compare stage-a choose the next token (step 1)
expect-compare stage-b choose the next token (step 1)
compare-step 4
expect-compare aligned
compare-select kind=dec-self layer=0 head=1
screenshot {t.path('step.png')}
export-plot compare.resid {t.path('resid-1.csv')}
export-plot compare.lnvar {t.path('lnvar-1.csv')}
export-plot compare.resid {t.path('resid.png')}
compare-back 5
compare-step 5
expect-compare aligned
export-plot compare.resid {t.path('resid-2.csv')}
export-plot compare.lnvar {t.path('lnvar-2.csv')}
compare-end
expect-compare finished
expect-compare aligned
screenshot {t.path('end.png')}
compare-home
compare-prev-token
expect-compare aligned
compare nonsense
expect-error
quit
"""
    p = t.run([], s)
    t.check(p.returncode == 0, f"the compare script ran without errors (exit {p.returncode})")
    for n in ("start", "step", "end"):
        img, lay = t.shot(n)
        if img:
            t.check("compare" in lay["panels"], f"{n}: the compare view is open")
            if n != "start":
                check_heatmap(t, img, lay, "compare", n)
    for n in ("resid", "lnvar"):
        a, b = t.path(f"{n}-1.csv"), t.path(f"{n}-2.csv")
        if t.check(os.path.exists(a) and os.path.exists(b), f"{n}: both CSV exports written"):
            da, db = read_csv(a), read_csv(b)
            t.check(len(da) == 2 and all(len(v) >= 4 for v in da.values()), f"{n}: two runs, every layer ({da})")
            t.check(open(a).read() == open(b).read(), f"{n}: the same numbers after stepping back and forth")
    if t.check(os.path.exists(t.path("resid.png")), "the residual-norm plot exported as PNG"):
        img = read_png(t.path("resid.png"))
        t.check(img.w > 200 and img.h > 80 and colours(img.region(0, 0, img.w, img.h, 2)) > 8,
                f"the exported plot is a picture ({img.w}x{img.h})")
    # Determinism across processes: the same script again gives the same CSV.
    first = open(t.path("resid-1.csv")).read() if os.path.exists(t.path("resid-1.csv")) else None
    p = t.run([], s)
    t.check(p.returncode == 0 and first is not None and open(t.path("resid-1.csv")).read() == first,
            "a second run writes the same numbers")


def case_training(t):
    common = "task=copy layers=2 d_model=32 heads=2 lr=3e-3 steps=40 batch=16 eval_examples=20"
    stem = t.path("trained")
    s = f"""train-both {common} warmup=off
wait-training 240
expect-training finished
train-both {common} warmup=on warmup_steps=10
wait-training 240
expect-training finished
screenshot {t.path('curves.png')}
export-plot training.loss {t.path('loss.csv')}
export-plot training.lr {t.path('lr.csv')}
export-plot training.grid-b {t.path('grid.csv')}
export-plot training.loss {t.path('loss.png')}
train-save {stem}
compare trained
expect-compare aligned
compare-token 1
screenshot {t.path('trained-compare.png')}
train-both {common} steps=100000
train-pause
expect-training paused
train-resume
expect-training running
train-cancel
expect-training cancelled
quit
"""
    p = t.run([], s, timeout=300)
    t.check(p.returncode == 0, f"the training script ran without errors (exit {p.returncode})")
    img, lay = t.shot("curves")
    if img:
        check_heatmap(t, img, lay, "training", "curves")
    t.shot("trained-compare")
    if t.check(os.path.exists(t.path("loss.csv")), "loss curves exported"):
        d = read_csv(t.path("loss.csv"))
        t.check(len(d) == 4, f"4 runs on the loss plot: with and without warm-up, both placements ({list(d)})")
        t.check(all(len(v) == 40 for v in d.values()), "every run has 40 steps")
        t.check(all(math.isfinite(y) for v in d.values() for _, y in v), "all losses are finite")
        t.check(any(n.startswith("earlier: post-LN, no warm-up") for n in d), "the run without warm-up is kept")
    if t.check(os.path.exists(t.path("lr.csv")), "learning-rate schedule exported"):
        d = read_csv(t.path("lr.csv"))
        warm = [v for n, v in d.items() if "warm-up 10" in n and not n.startswith("earlier")][0]
        ys = [y for _, y in warm]
        t.check(abs(max(ys) - 3e-3) < 1e-6 and ys.index(max(ys)) == 9, f"warm-up peaks at lr 3e-3 at step 10 ({max(ys)})")
    if t.check(os.path.exists(t.path("grid.csv")), "layer x step gradient grid exported"):
        rows = list(csv.reader(open(t.path("grid.csv"))))[1:]
        t.check(len(rows) == 4 * 40, f"4 layers x 40 steps in the grid ({len(rows)} cells)")
    for n in ("preln", "postln"):
        t.check(os.path.exists(f"{stem}-{n}.safetensors") and os.path.exists(f"{stem}-{n}.metrics.json"),
                f"saved {n} model and metrics")
    info = subprocess.run([t.exe, "info", f"{stem}-postln.safetensors"], capture_output=True, text=True)
    t.check(info.returncode == 0 and "post" in info.stdout, "the saved post-LN model loads with `stepformer info`")


def case_gradnorms(t):
    s = f"""gradnorms layers=4 seeds=3 d_model=32 heads=4 batch=8
screenshot {t.path('plot.png')}
export-plot gradnorms.grad {t.path('grad.csv')}
export-plot gradnorms.stream {t.path('stream.csv')}
quit
"""
    p = t.run([], s)
    t.check(p.returncode == 0, f"the gradnorms script ran without errors (exit {p.returncode})")
    img, lay = t.shot("plot")
    if img:
        check_heatmap(t, img, lay, "gradnorms", "plot")
    if not t.check(os.path.exists(t.path("grad.csv")) and os.path.exists(t.path("stream.csv")), "plots exported as CSV"):
        return
    grad, stream = read_csv(t.path("grad.csv")), read_csv(t.path("stream.csv"))
    for norm in ("pre", "post"):
        out = subprocess.run([t.exe, "gradnorms", "--layers", "4", "--seeds", "3", "--d-model", "32", "--heads", "4",
                              "--d-ff", "128", "--batch", "8", "--norm", norm], capture_output=True, text=True)
        t.check(out.returncode == 0, f"stepformer gradnorms --norm {norm} ran")
        rows = [l.split() for l in out.stdout.splitlines() if l.strip() and l.split()[0].isdigit()]
        t.check(len(rows) == 4, f"{norm}: 4 layers printed")
        for r in rows:
            l = int(r[0])
            for col, (plot, name, tol) in enumerate([(grad, f"{norm}-LN encoder", 5e-6), (grad, f"{norm}-LN decoder", 5e-6),
                                                     (stream, f"{norm}-LN encoder", 5e-4), (stream, f"{norm}-LN decoder", 5e-4)]):
                y = dict(plot[name])[str(l)]
                t.check(abs(y - float(r[col + 1])) <= tol,
                        f"{norm} layer {l} {name}: plotted {y:.6f} = printed {r[col + 1]}")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}


def add_args(ap):
    here = os.path.dirname(__file__)
    ap.add_argument("--fixtures", default=os.path.join(here, "..", "fixtures"))
    ap.add_argument("--models", default=os.path.join(here, "..", "..", "assets", "models"))


def folders(t, args):
    t.fixtures, t.models = os.path.abspath(args.fixtures), os.path.abspath(args.models)


if __name__ == "__main__":
    sys.exit(main(CASES, prefix="prepost-", add_args=add_args, setup=folders))

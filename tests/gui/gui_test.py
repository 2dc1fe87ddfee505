#!/usr/bin/env python3
"""GUI tests for the stepformer explorer (run by CTest, see tests/gui/CMakeLists.txt).

Each case writes an explorer script (docs/explorer.md), runs `stepformer --script` on a private
Xvfb server and checks what it wrote: the exit code, the PNG screenshots and the JSON written next
to each screenshot (the stage, and where each panel, its heatmap and the stepper's current stage
box are). The PNG reader, the Xvfb runner and the heatmap checks are in guitest_common.py.

usage: gui_test.py CASE --exe STEPFORMER --xvfb-run XVFB_RUN --out DIR
"""
import json
import os
import struct
import subprocess
import sys

from guitest_common import check_heatmap, colours, main, read_png

ACCENT = (255, 196, 61)  # the current stage's colour in the dark theme (gfx/style.cpp)


# ---- cases ------------------------------------------------------------------------------------

def accent_fraction(img, rect):
    x0, y0, x1, y1 = rect
    px = img.region(x0 + 4, y0 + 4, x1 - 4, y1 - 4)
    near = [p for p in px if all(abs(a - b) < 40 for a, b in zip(p, ACCENT))]
    return len(near) / max(1, len(px))


def case_walkthrough(t):
    """Loads a model, steps stage by stage, decodes to the end; the highlight moves."""
    s = f"""# walkthrough: one stage at a time, then to the end
model {t.model}
input 3 1 4 1 5
expect stage encoder · embed
screenshot {t.path('a.png')}
step 3
screenshot {t.path('b.png')}
next-token 2
attention kind=dec-self layer=1 head=0
screenshot {t.path('c.png')}
end
expect finished
screenshot {t.path('end.png')}
home
expect stage encoder · embed
quit
"""
    p = t.run([], s)
    t.check(p.returncode == 0, "the script ran without errors (exit 0)")
    a, la = t.shot("a")
    b, lb = t.shot("b")
    c, lc = t.shot("c")
    e, le = t.shot("end")
    if not (a and b and c and e):
        return
    t.check(la["cursor"] == 0 and lb["cursor"] == 3, f"cursor moved 0 -> 3 (found {la['cursor']} -> {lb['cursor']})")
    ma, mb = la["panels"]["stepper"]["mark"], lb["panels"]["stepper"]["mark"]
    t.check(ma != mb, f"the highlighted stage box moved between steps ({ma} -> {mb})")
    for img, lay, n in ((a, la, "a"), (b, lb, "b"), (c, lc, "c")):
        m = lay["panels"]["stepper"]["mark"]
        t.check(m[2] > m[0] and accent_fraction(img, m) > 0.6,
                f"{n}: the current stage box {m} is drawn in the highlight colour ({accent_fraction(img, m):.2f})")
    # The stepper region itself differs between the two shots.
    r = lb["panels"]["stepper"]["rect"]
    t.check(a.region(*r, step=3) != b.region(*r, step=3), "the stepper panel changed between steps")
    check_heatmap(t, c, lc, "attention", "c")
    check_heatmap(t, e, le, "attention", "end")
    t.check(le.get("finished") is True, f"decoding finished (output '{le.get('output')}')")


PANELS = ["model", "stepper", "attention", "qkv", "output", "pe", "masks", "kv", "residual"]
HEATMAP_PANELS = ["attention", "qkv", "pe", "masks", "kv"]


def case_panels(t):
    """Opens every panel (and every attention view) and checks each screenshot."""
    lines = [f"model {t.model}", "input 3 1 4 1 5 9", "next-token 3", "step 4"]
    for p in PANELS:
        lines += ["panels default", f"panel {p}", f"screenshot {t.path(p + '.png')}"]
    lines += ["panels default", "attention view=model kind=enc-self", f"screenshot {t.path('model-view.png')}",
              "attention view=head kind=cross layer=0", f"screenshot {t.path('head-view.png')}",
              "attention view=heatmap kind=dec-self layer=1 head=2", "cell 2 1", f"screenshot {t.path('cell.png')}",
              "panel masks", "attention kind=dec-self layer=0", f"screenshot {t.path('masks-dec.png')}", "quit"]
    p = t.run([], "\n".join(lines) + "\n")
    t.check(p.returncode == 0, "the script ran without errors (exit 0)")
    for name in PANELS:
        img, lay = t.shot(name)
        if not img:
            continue
        t.check(name in lay["panels"], f"{name}: the panel is open in the screenshot")
        if name in HEATMAP_PANELS:
            check_heatmap(t, img, lay, name, name)
    img, lay = t.shot("model-view")
    if img:
        check_heatmap(t, img, lay, "attention", "model-view")
    for n in ("head-view", "cell", "masks-dec"):
        t.shot(n)


def case_decoder_only(t):
    """A decoder-only, post-LN, learned-PE model: prefill, decode, every panel draws."""
    s = f"""model {t.deconly}
input a b c
next-token 2
panel output
panel residual
panel attention
screenshot {t.path('all.png')}
end
expect finished
panels default
panel pe
screenshot {t.path('pe.png')}
quit
"""
    p = t.run([], s)
    t.check(p.returncode == 0, "decoder-only script ran without errors (exit 0)")
    img, lay = t.shot("all")
    if img:
        check_heatmap(t, img, lay, "attention", "all")
    img, lay = t.shot("pe")
    if img:
        check_heatmap(t, img, lay, "pe", "pe")


def case_encoder_only(t):
    """An encoder-only (BERT-style) model: the encoder's stages end with the masked-LM head; the
    prediction at [MASK] is the one `stepformer decode` prints; decoder panels say why they are
    empty; decoder-only commands are refused by name."""
    s = f"""model {t.enconly}
end
screenshot {t.path('enc-example.png')}
input the cat [MASK] on a mat <pad>
expect stage encoder · embed
step 3
attention layer=0 head=1
screenshot {t.path('enc-attn.png')}
end
panel output
panel masks
screenshot {t.path('enc-end.png')}
panels default
panel kv
screenshot {t.path('enc-kv.png')}
attention kind=cross
expect-error
leak on
expect-error
quit
"""
    p = t.run([], s)
    t.check(p.returncode == 0, f"encoder-only script ran without errors (exit {p.returncode})")
    x, lx = t.shot("enc-example")
    if x:  # the example input of a masked-LM model (the digits kept from the last model do not fit) has a [MASK]
        t.check(len(lx.get("masked", [])) == 1, f"the example input holds one [MASK] (found {lx.get('masked')})")
    a, la = t.shot("enc-attn")
    e, le = t.shot("enc-end")
    k, lk = t.shot("enc-kv")
    if not (a and e and k):
        return
    check_heatmap(t, a, la, "attention", "enc-attn")
    check_heatmap(t, e, le, "masks", "enc-end")
    t.check(le["cursor"] == le["stages"] - 1 and "masked-LM head" in le["stage"],
            f"end: the last stage is the masked-LM head (found {le['cursor']}/{le['stages']}: {le['stage']})")
    t.check(le.get("finished") is True and le.get("output") == "", "nothing is decoded")
    # The same prediction from the command line.
    cli = subprocess.run([t.exe, "decode", "--model", t.enconly, "--src", "the cat [MASK] on a mat <pad>"],
                         capture_output=True, text=True, timeout=60)
    line = next((l for l in cli.stdout.splitlines() if l.strip().startswith("position 2 ")), "")
    parts = line.split("→")[1].split("|")[0].split() if "→" in line else []
    want = f"2:{parts[0]}:{parts[1]}" if len(parts) == 2 else "?"
    t.check(le.get("masked") == [want], f"the explorer's [MASK] prediction {le.get('masked')} is the CLI's ['{want}']")
    t.check("kv" in lk["panels"], "the KV cache panel opens (its text says the model has no decoder)")
    t.check("error" not in le["status"].lower(), f"no error in the status bar (found '{le['status']}')")


HF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "hf")


def case_hf_models(t):
    """The three Hugging Face fixture folders (tiny random GPT-2, Marian, BERT) open by script,
    step and draw: non-uniform heatmaps, the family in the window, no error in the status bar."""
    runs = [("gpt2-tiny", "Hello world, this is", "next-token 2", "kind=dec-self layer=1", "gpt2"),
            ("marian-tiny", "the house is small", "next-token 2", "kind=cross layer=1", "marian"),
            ("bert-tiny", "the cat [MASK] on the mat.", "end", "kind=enc-self layer=1", "bert")]
    lines = []
    for folder, text, move, attn, _ in runs:
        lines += [f"model {os.path.join(HF, folder)}", "expect model-loaded", f"input {text}", "step 3", move,
                  f"attention {attn} head=0 view=heatmap", "panel masks", f"screenshot {t.path(folder + '.png')}"]
    p = t.run([], "\n".join(lines + ["quit"]) + "\n")
    t.check(p.returncode == 0, f"the three folders ran without errors (exit {p.returncode})")
    for folder, _, _, _, family in runs:
        img, lay = t.shot(folder)
        if not img:
            continue
        t.check(lay.get("model") == folder, f"{folder}: the window shows the folder's model (found '{lay.get('model')}')")
        t.check("error" not in lay.get("status", "").lower(), f"{folder}: no error in the status bar ('{lay.get('status')}')")
        check_heatmap(t, img, lay, "attention", folder)
        check_heatmap(t, img, lay, "masks", folder + " masks")
        if family == "bert":
            t.check(len(lay.get("masked", [])) == 1 and lay["masked"][0].startswith("3:"),
                    f"bert: one [MASK] prediction at position 3, after [CLS] (found {lay.get('masked')})")
        else:
            t.check(lay.get("cursor", 0) > 20, f"{folder}: decoding stepped on (cursor {lay.get('cursor')})")


def case_default_view(t):
    """`stepformer --screenshot out.png` alone: the default view, then exit 0."""
    out = t.path("default.png")
    p = t.run(["--screenshot", out])
    t.check(p.returncode == 0, "--screenshot exits 0")
    img, lay = t.shot("default")
    if img:
        # With a shipped model the default view shows it; without, the window says so.
        if lay.get("model"):
            check_heatmap(t, img, lay, "attention", "default")
        else:
            print("note: no shipped model in assets/models/: the default view shows 'No model loaded'")
    # No shipped model at all: the window says so, and the app still exits cleanly.
    empty = t.path("empty-home")
    os.makedirs(os.path.join(empty, "assets", "models"), exist_ok=True)
    p = t.run(["--screenshot", t.path("nomodel.png")], env_extra={"STEPFORMER_HOME": empty})
    t.check(p.returncode == 0, "without any model --screenshot still exits 0")
    img, lay = t.shot("nomodel")
    if img:
        t.check(lay.get("model") == "", "no model is loaded")
    p = t.run(["--script", t.path("no-such-script.txt"), "--screenshot", t.path("x.png")])
    t.check(p.returncode != 0, "a missing script file gives a non-zero exit")
    p = t.run(["--bogus-flag"])
    t.check(p.returncode == 2, "an unknown flag gives exit 2")
    p = subprocess.run([t.exe, "--has-gui"], capture_output=True, timeout=30)
    t.check(p.returncode == 0, "--has-gui exits 0")


def case_bad_input(t):
    """Bad files, bad input and a bad script line: messages, the previous model kept, exit 1."""
    corrupt = t.path("corrupt.safetensors")
    with open(corrupt, "wb") as f:
        f.write(struct.pack("<Q", 1 << 40) + b"{not json")
    text = t.path("not-a-model.safetensors")
    with open(text, "w") as f:
        f.write("hello\n")
    long_input = " ".join(["1"] * 40)
    s = f"""model {t.model}
input 1 2 3
model /no/such/model.safetensors
expect-error
model {corrupt}
expect-error
model {text}
expect-error
expect model-loaded
input
expect-error
input {long_input}
expect-error
input 1 zz 2
next-token
attention layer=9
expect-error
step many
expect-error
this-is-not-a-command
screenshot {t.path('bad.png')}
quit
"""
    p = t.run([], s)
    t.check(p.returncode == 1, f"a bad script line makes the exit code 1 (found {p.returncode})")
    err = p.stderr
    t.check("no/such/model" in err, "the missing model file is named in the message")
    t.check("corrupt.safetensors" in err, "the corrupt model file is named in the message")
    t.check("max_len" in err or "over" in err or "tokens" in err, "the over-long input is reported")
    t.check("zz" in err, "the unknown word is reported")
    t.check("this-is-not-a-command" in err, "the bad script line is reported")
    img, lay = t.shot("bad")
    if img:
        t.check(lay.get("model") == "gui-model.safetensors", f"the previous model is kept (found '{lay.get('model')}')")
        check_heatmap(t, img, lay, "attention", "bad")


def case_export(t):
    """Export a panel and a heatmap to PNG and the recording to safetensors / NPY / CSV."""
    s = f"""model {t.model}
input 3 1 4
next-token 2
export-panel attention {t.path('panel.png')}
export-heatmap attention {t.path('heatmap.png')}
export-recording {t.path('rec.safetensors')}
export-recording {t.path('rec.npy')}
export-recording {t.path('rec.csv')}
wait 3
quit
"""
    p = t.run([], s)
    t.check(p.returncode == 0, "export script ran without errors")
    for n in ("panel.png", "heatmap.png"):
        path = t.path(n)
        if t.check(os.path.exists(path), f"{n} written"):
            img = read_png(path)
            px = img.region(0, 0, img.w, img.h, step=2)
            t.check(colours(px) >= 3, f"{n} is not blank ({img.w}x{img.h}, {colours(px)} colours)")
    st = t.path("rec.safetensors")
    if t.check(os.path.exists(st), "rec.safetensors written"):
        data = open(st, "rb").read()
        (n,) = struct.unpack("<Q", data[:8])
        header = json.loads(data[8:8 + n])
        names = [k for k in header if k != "__metadata__"]
        t.check("encoder.layers.0.self_attn.weights" in names, "the recording holds the encoder attention weights")
        t.check(any(k.startswith("steps.1.") for k in names), "the recording holds decoder step 1")
    npy = os.path.join(t.path("rec.npy"), "encoder.layers.0.self_attn.weights.npy")
    if t.check(os.path.exists(npy), "NPY export holds encoder.layers.0.self_attn.weights.npy"):
        d = open(npy, "rb").read()
        t.check(d[:6] == b"\x93NUMPY" and b"'shape': (4, 3, 3)" in d[:128], "the .npy header names shape (4, 3, 3)")
    csv = os.path.join(t.path("rec.csv"), "encoder.layers.0.self_attn.weights.h0.csv")
    if t.check(os.path.exists(csv), "CSV export holds one file per head"):
        rows = [r.split(",") for r in open(csv).read().split()]
        t.check(len(rows) == 3 and all(abs(sum(float(x) for x in r) - 1) < 1e-4 for r in rows),
                "each CSV row of attention weights sums to 1")


def case_presentation(t):
    """Presentation mode: light high-contrast theme, large text."""
    s = f"""model {t.model}
input 3 1 4 1
next-token
screenshot {t.path('dark.png')}
presentation on
scale 1.25
wait 3
screenshot {t.path('light.png')}
quit
"""
    p = t.run([], s)
    t.check(p.returncode == 0, "presentation script ran without errors")
    d, _ = t.shot("dark")
    l, _ = t.shot("light")
    if d and l:
        def mean_lum(img):
            px = img.region(0, 0, img.w, img.h, step=7)
            return sum(0.299 * r + 0.587 * g + 0.114 * b for r, g, b in px) / len(px)
        t.check(mean_lum(l) > mean_lum(d) + 60, f"presentation mode is light ({mean_lum(d):.0f} -> {mean_lum(l):.0f})")


def case_bench(t):
    """--bench-frames prints the frame-time line (the figure itself is machine-dependent) and what
    the frames showed: the model, its input and the heatmaps drawn, as loaded."""
    p = t.run(["--bench-frames", "20"])
    t.check(p.returncode == 0, "--bench-frames exits 0")
    line = next((l for l in p.stdout.splitlines() if l.startswith("mean ")), "")
    t.check(line.endswith(" ms") and ", p95 " in line, f"prints 'mean X ms, p95 Y ms' (found '{line}')")
    what = next((l for l in p.stdout.splitlines() if l.startswith("(20 frames of ")), "")
    # The benchmark's own model: 6 + 6 layers of 8 heads over 64 source tokens; the model view of
    # the encoder's self-attention draws its 48 maps of 64x64.
    t.check("encoder-decoder, 6+6 layers, 8 heads, d_model 128) on 64 source" in what and "48 of 64x64" in what,
            f"describes the benchmark model and its 48 maps of 64x64 (found '{what}')")
    # A script's model is described as loaded: copy-preln has 2 + 2 layers of 4 heads, and the
    # model view of its encoder self-attention over 5 source tokens draws 2 x 4 maps of 5x5.
    p = t.run(["--bench-frames", "10"], script="model copy-preln\ninput 1 2 3 4 5\npanels default\n"
                                                "attention kind=enc-self view=model\nstep 30\n")
    what = next((l for l in p.stdout.splitlines() if l.startswith("(10 frames of ")), "")
    t.check(p.returncode == 0 and "copy-preln" in what and "2+2 layers, 4 heads" in what and
            "on 5 source" in what and "8 of 5x5" in what,
            f"describes the script's model, its input and the 8 maps of the model view (found '{what}')")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}


def models(t, args):
    """The models the gui.models test writes into the output folder."""
    t.model = os.path.join(t.out, "gui-model.safetensors")
    t.deconly = os.path.join(t.out, "gui-deconly.safetensors")
    t.enconly = os.path.join(t.out, "gui-enconly.safetensors")


if __name__ == "__main__":
    sys.exit(main(CASES, setup=models))

#!/usr/bin/env python3
"""GUI tests for the stepformer explorer (run by CTest, see tests/gui/CMakeLists.txt).

Each case writes an explorer script (docs/explorer.md), runs `stepformer --script` on a private
Xvfb server (started here with -displayfd, so parallel runs never pick the same display; xvfb-run
is the fallback when the Xvfb binary is not on PATH), and checks what it wrote: the exit code, the PNG screenshots (read with zlib, standard
library only) and the JSON written next to each screenshot (the stage, and where each panel, its
heatmap and the stepper's current stage box are).

usage: gui_test.py CASE --exe STEPFORMER --xvfb-run XVFB_RUN --out DIR
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

SCREEN = "-screen 0 1600x900x24"
ACCENT = (255, 196, 61)  # the current stage's colour in the dark theme (gfx/style.cpp)


# ---- PNG reading ----------------------------------------------------------------------------

class Image:
    def __init__(self, w, h, bpp, rows):
        self.w, self.h, self.bpp, self.rows = w, h, bpp, rows

    def px(self, x, y):
        r = self.rows[y]
        i = x * self.bpp
        return r[i], r[i + 1], r[i + 2]

    def region(self, x0, y0, x1, y1, step=1):
        x0, y0 = max(0, int(x0)), max(0, int(y0))
        x1, y1 = min(self.w, int(x1)), min(self.h, int(y1))
        return [self.px(x, y) for y in range(y0, y1, step) for x in range(x0, x1, step)]


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError(f"{path}: not a PNG file")
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        (ln,) = struct.unpack(">I", data[pos:pos + 4])
        typ, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + ln]
        pos += 12 + ln
        if typ == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif typ == b"IDAT":
            idat.append(body)
        elif typ == b"IEND":
            break
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise AssertionError(f"{path}: unexpected PNG format depth={depth} type={ctype}")
    bpp = 4 if ctype == 6 else 3
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return Image(w, h, bpp, rows)


# ---- running the explorer ---------------------------------------------------------------------

class Ctx:
    def __init__(self, args):
        self.exe, self.xvfb, self.out, self.case = args.exe, args.xvfb_run, os.path.abspath(args.out), args.case
        self.model = os.path.join(self.out, "gui-model.safetensors")
        self.deconly = os.path.join(self.out, "gui-deconly.safetensors")
        self.failures = []

    def path(self, name):
        return os.path.join(self.out, f"{self.case}-{name}")

    def start_display(self):
        """One Xvfb for the whole case; returns its DISPLAY or None (then xvfb-run is used)."""
        xvfb = shutil.which("Xvfb")
        if not xvfb:
            return None
        r, w = os.pipe()
        self.server = subprocess.Popen([xvfb, "-displayfd", str(w), "-nolisten", "tcp"] + SCREEN.split(),
                                       pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(w)
        with os.fdopen(r) as f:
            num = f.readline().strip()
        if not num:
            self.server.kill()
            return None
        return ":" + num

    def stop_display(self):
        if getattr(self, "server", None):
            self.server.terminate()
            self.server.wait(timeout=30)

    def run(self, extra, script=None, timeout=150, env_extra=None):
        if not hasattr(self, "display"):
            self.display = self.start_display()
        cmd = ([self.exe] if self.display else [self.xvfb, "-a", "-s", SCREEN, self.exe])
        if script is not None:
            sp = self.path("script.txt")
            with open(sp, "w") as f:
                f.write(script)
            cmd += ["--script", sp]
        cmd += extra
        home = self.path("home")
        os.makedirs(home, exist_ok=True)
        env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home, **(env_extra or {}))
        if self.display:
            env["DISPLAY"] = self.display
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout, env=env,
                           cwd=self.out)  # a message may quote binary bytes of a script
        print(f"$ {' '.join(cmd)}\n-> exit {p.returncode}\n{p.stdout}{p.stderr}")
        return p

    def check(self, cond, what):
        print(("ok    " if cond else "FAIL  ") + what)
        if not cond:
            self.failures.append(what)
        return cond

    def shot(self, name):
        """Reads a screenshot and its layout JSON; checks its size."""
        png = self.path(name + ".png")
        if not self.check(os.path.exists(png), f"{name}.png was written"):
            return None, None
        img = read_png(png)
        layout = json.load(open(png + ".json", errors="replace"))  # a status may quote binary bytes
        self.check((img.w, img.h) == (1600, 900), f"{name}.png is 1600x900 (found {img.w}x{img.h})")
        return img, layout


def colours(pixels):
    return len(set(pixels))


def spread(pixels):
    lum = [0.299 * r + 0.587 * g + 0.114 * b for r, g, b in pixels]
    m = sum(lum) / max(1, len(lum))
    return (sum((v - m) ** 2 for v in lum) / max(1, len(lum))) ** 0.5


def check_heatmap(t, img, layout, panel, name):
    p = layout["panels"].get(panel)
    if not t.check(p is not None, f"{name}: panel '{panel}' is open"):
        return
    x0, y0, x1, y1 = p["heatmap"]
    if not t.check(x1 - x0 > 8 and y1 - y0 > 8, f"{name}: panel '{panel}' drew a heatmap ({x0},{y0})-({x1},{y1})"):
        return
    px = img.region(x0 + 1, y0 + 1, x1 - 1, y1 - 1, step=2)
    t.check(colours(px) >= 3 and spread(px) > 4.0,
            f"{name}: the '{panel}' heatmap is not uniform ({colours(px)} colours, spread {spread(px):.1f})")


def accent_fraction(img, rect):
    x0, y0, x1, y1 = rect
    px = img.region(x0 + 4, y0 + 4, x1 - 4, y1 - 4)
    near = [p for p in px if all(abs(a - b) < 40 for a, b in zip(p, ACCENT))]
    return len(near) / max(1, len(px))


# ---- cases ------------------------------------------------------------------------------------

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
    """--bench-frames prints the frame-time line (the figure itself is machine-dependent)."""
    p = t.run(["--bench-frames", "20"])
    t.check(p.returncode == 0, "--bench-frames exits 0")
    line = next((l for l in p.stdout.splitlines() if l.startswith("mean ")), "")
    t.check(line.endswith(" ms") and ", p95 " in line, f"prints 'mean X ms, p95 Y ms' (found '{line}')")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}


def main(cases=None, extra_args=(), prefix=""):
    """Runs one case; other GUI test files reuse it with their own cases (each takes the Ctx,
    whose .args holds the parsed command line, extra_args included) and output-name prefix."""
    cases = cases or CASES
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(cases))
    ap.add_argument("--exe", required=True)
    ap.add_argument("--xvfb-run", required=True)
    ap.add_argument("--out", required=True)
    for a in extra_args:
        ap.add_argument(a, required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    t = Ctx(args)
    t.args = args
    t.case = prefix + args.case
    try:
        cases[args.case](t)
    finally:
        t.stop_display()
    if t.failures:
        print(f"\n{len(t.failures)} check(s) failed:\n  " + "\n  ".join(t.failures))
        return 1
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

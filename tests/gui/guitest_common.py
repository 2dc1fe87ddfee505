"""What the GUI test checkers (gui_test.py, prepost_test.py) share: a PNG reader (zlib, standard
library only), a private Xvfb server per case (started with -displayfd, so parallel runs never pick
the same display; xvfb-run is the fallback when the Xvfb binary is not on PATH), running
`stepformer --script`, checks that print ok/FAIL, screenshot and heatmap checks, and the command
line every checker takes:

  CHECKER CASE --exe STEPFORMER --xvfb-run XVFB_RUN --out DIR
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import zlib

SCREEN = "-screen 0 1600x900x24"


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
        self.failures = []
        self.passed = 0
        # Every check and every run's whole output go to this log; the test's own output (what CI
        # shows, cut to its first and last lines) holds the failed checks, each run's command and
        # exit code, and a failed run's last lines: a failure is never among the lines cut away.
        os.makedirs(self.out, exist_ok=True)
        self.log_path = self.path("checks.log")
        self.log = open(self.log_path, "w")

    def note(self, text, show=False):
        self.log.write(text + "\n")
        self.log.flush()
        if show:
            print(text, flush=True)

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
        self.note(f"$ {' '.join(cmd)}\n-> exit {p.returncode}\n{p.stdout}{p.stderr}")
        print(f"$ {' '.join(cmd)} -> exit {p.returncode}", flush=True)
        if p.returncode != 0:
            print("  " + "\n  ".join((p.stdout + p.stderr).strip().splitlines()[-20:]), flush=True)
        return p

    def check(self, cond, what):
        self.note(("ok    " if cond else "FAIL  ") + what, show=not cond)
        if cond:
            self.passed += 1
        else:
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


def boxes(lay, panel):
    """The named rectangles a panel drew ([name, x0, y0, x1, y1] each); "menu" is the menu bar."""
    if panel == "menu":
        return lay.get("menu", [])
    return lay["panels"].get(panel, {}).get("boxes", [])


def find_box(lay, panel, prefix):
    """The first box of `panel` whose name starts with `prefix`, or None."""
    return next((b for b in boxes(lay, panel) if b[0].startswith(prefix)), None)


def font_px(lay):
    """The UI font's size in pixels for a screenshot's scale and presentation mode."""
    return round(16 * lay.get("scale", 1) * (1.45 if lay.get("presentation") else 1))


def check_boxes_inside(t, lay, name, panels=None, vertical=False):
    """Every box of the given panels (all when None) lies within its panel's width (and height
    when `vertical`) and within the region it is drawn in (a box's sixth number, the right edge of
    its window or child window, a column): no text line, button or plot runs past the edge."""
    for key, p in lay["panels"].items():
        if panels is not None and key not in panels:
            continue
        x0, y0, x1, y1 = p["rect"]
        out = [b for b in p.get("boxes", [])
               if b[1] < x0 - 1 or b[3] > min(x1, b[5] if len(b) > 5 else x1) + 1 or (vertical and (b[2] < y0 - 1 or b[4] > y1 + 1))]
        t.check(not out, f"{name}: every box of '{key}' lies inside it {p['rect']} (outside: {out})")


# ---- the command line -------------------------------------------------------------------------

def main(cases, prefix="", add_args=None, setup=None):
    """Runs one case (a function of a Ctx) named on the command line; returns the exit code.

    prefix: put before the case name in every output file name; add_args(parser): extra options
    (the case finds them in ctx.args); setup(ctx, args): called before the case runs."""
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(cases))
    ap.add_argument("--exe", required=True)
    ap.add_argument("--xvfb-run", required=True)
    ap.add_argument("--out", required=True)
    if add_args:
        add_args(ap)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    case = cases[args.case]
    args.case = prefix + args.case
    t = Ctx(args)
    t.args = args
    if setup:
        setup(t, args)
    try:
        case(t)
    finally:
        t.stop_display()
    print(f"\n{t.passed} check(s) passed, {len(t.failures)} failed; every check and run: {t.log_path}")
    if t.failures:
        print(f"{len(t.failures)} check(s) failed:\n  " + "\n  ".join(t.failures))
        return 1
    print("all checks passed")
    return 0

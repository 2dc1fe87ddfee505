#!/usr/bin/env python3
"""GUI tests of lessons (docs/lessons.md), run by CTest (tests/gui/CMakeLists.txt).

- hostile: lessons written to attack the user (absolute paths, '..', a symbolic link out of the
  exports folder, an existing file, a huge wait and step count, `quit`, `train-save`, a FIFO as a
  model, a 100 MB lesson and one of binary garbage linked from it) run in the explorer. Every file
  outside the exports folder is unchanged (contents and modification times), the saved layout
  (imgui.ini) too, the exports land in the folder under fresh names, and the app answers SIGTERM
  and exits normally within a bound.
- builtin: every built-in lesson, every step, at 1600x900 in presentation mode: the caption is
  open, no two panels overlap, no text line, button or plot a panel records (its boxes) runs past
  the panel's edge (nor, in the caption, stepper, Q, K, V and KV cache panels, past its bottom),
  the compare view shows both runs' stage and formula without scrolling, the status bar shows no
  error.

usage: lesson_test.py CASE --exe STEPFORMER --xvfb-run XVFB_RUN --out DIR --source SRC
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from guitest_common import check_boxes_inside, main


def snapshot(root, skip):
    """Every file under root (but under skip): its hash, size and modification time."""
    out = {}
    for d, dirs, files in os.walk(root):
        if os.path.abspath(d).startswith(skip):
            continue
        for n in files + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
            p = os.path.join(d, n)
            st = os.lstat(p)
            if os.path.islink(p):
                out[p] = ("link", os.readlink(p))
            elif os.path.isfile(p) and st.st_size < (1 << 20):
                out[p] = (hashlib.sha256(open(p, "rb").read()).hexdigest(), st.st_size, st.st_mtime_ns)
            else:
                out[p] = (st.st_size, st.st_mtime_ns)
    return out


def case_hostile(t):
    root = t.path("hostile")
    shutil.rmtree(root, ignore_errors=True)
    home, data, outside = root + "/home", root + "/data", root + "/outside"
    exports = data + "/stepformer/exports"
    for d in (home + "/stepformer", exports, outside):
        os.makedirs(d)
    with open(outside + "/precious.txt", "w") as f:
        f.write("keep me\n")
    with open(outside + "/shot.png", "w") as f:
        f.write("not a screenshot\n")
    with open(home + "/stepformer/imgui.ini", "w") as f:
        f.write("[Stepformer][Settings]\nscale=1.25\npresentation=0\nspeed=2.00\n\n")
    with open(exports + "/existing.png", "w") as f:
        f.write("an earlier export\n")
    os.symlink(outside, exports + "/out")  # a link in the exports folder leaving it
    os.symlink(outside + "/precious.txt", exports + "/precious.txt")
    os.mkfifo(root + "/fifo.safetensors")
    with open(root + "/big.txt", "wb") as f:  # 100 MB: refused before it is read
        f.truncate(100 * 1024 * 1024)
    with open(root + "/garbage.txt", "wb") as f:
        f.write(bytes(range(256)) * 64)
    lesson = root + "/hostile.txt"
    with open(lesson, "w") as f:
        f.write(f"""caption lesson A hostile lesson
caption step Writes everywhere
caption text Every line here tries to leave the exports folder.
model {t.model}
input 3 1 4 1 5
end
panel attention
screenshot {outside}/precious.txt
screenshot {outside}/shot.png
screenshot ../../outside/escape.png
screenshot out/through-link.png
screenshot precious.txt
screenshot existing.png
export-panel attention {home}/stepformer/imgui.ini
export-heatmap attention /{outside}/heat.png
export-recording {outside}/rec.npy
export-recording ../rec.safetensors
train-save {outside}/model
quit
wait 100000000
step 99999999
next-token 2000000000
max-len 100000000
train-both steps=100000000
gradnorms layers=100000 seeds=100000
model {root}/fifo.safetensors
model {root}/missing.safetensors
lesson open {root}/big.txt
lesson open {root}/garbage.txt
caption step A second step
caption text Linked lessons and the second step.
screenshot {outside}/second.png
""")
    before = snapshot(root, exports)
    env = {"XDG_DATA_HOME": data}

    # Headless, to the end of the first step: exit 1 (lines failed), within the bound.
    start = time.time()
    p = t.run(["--lesson", lesson, "--screenshot", t.path("hostile.png")], timeout=150, env_extra=env)
    took = time.time() - start
    t.check(p.returncode == 1, f"the lesson's refused lines make the exit code 1 (found {p.returncode})")
    t.check(took < 120, f"the hostile lesson ends within 120 s ({took:.0f} s)")
    for what in ("a lesson cannot close the app", "a lesson cannot save models", "waits at most 600",
                 "moves at most 200", "decodes at most 1024", "steps in a lesson is at most",
                 "layers in a lesson is at most", "not found" if False else "no model file or folder",
                 "104857600 bytes, a lesson may have at most"):
        t.check(what in p.stderr, f"refused and said so: '{what}'")
    after = snapshot(root, exports)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    t.check(not changed, f"no file outside the exports folder changed (changed: {changed})")
    names = sorted(os.listdir(exports))
    t.note(f"exports: {names}")
    t.check(open(exports + "/existing.png").read() == "an earlier export\n", "an existing export is not overwritten")
    t.check(os.path.islink(exports + "/out") and os.path.islink(exports + "/precious.txt"),
            "the symbolic links in the exports folder are left as they are")
    for n in ("shot.png", "escape.png", "through-link.png", "precious-2.txt", "existing-2.png", "imgui.ini",
              "heat.png", "rec.npy", "rec.safetensors"):
        p_ = os.path.join(exports, n)
        t.check(os.path.exists(p_) and not os.path.islink(p_), f"exports/{n} was written inside the folder")
    t.check(os.path.getsize(exports + "/shot.png") > 1000, "the rewritten screenshot holds a PNG")
    t.check(os.path.isdir(exports + "/rec.npy") and len(os.listdir(exports + "/rec.npy")) > 3,
            "the recording went into a fresh folder in the exports folder")
    t.check("lesson export" in p.stderr and exports in p.stderr, "the UI says where each export went")

    # Interactive (the settings file is in use), on to the second step by a key, then SIGTERM:
    # the app answers, exits normally, and the saved layout is as it was.
    ini = open(home + "/stepformer/imgui.ini").read()
    cmd = [t.exe] if t.display else [t.xvfb, "-a", "-s", "-screen 0 1600x900x24", t.exe]
    e = dict(os.environ, XDG_CONFIG_HOME=home, HOME=home, **env)
    if t.display:
        e["DISPLAY"] = t.display
    proc = subprocess.Popen(cmd + ["--lesson", lesson], env=e, cwd=t.out, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace")
    deadline = time.time() + 90
    while time.time() < deadline and not os.path.exists(exports + "/shot-2.png"):
        time.sleep(0.5)
    t.check(os.path.exists(exports + "/shot-2.png"), "interactive: the first step ran (its exports appeared)")
    if t.display and shutil.which("xdotool"):
        # No window manager under Xvfb: the pointer over the window gives it the keyboard; the first
        # key after that may be taken for the focus change, so PageDown is sent until the step shows.
        subprocess.run(["xdotool", "mousemove", "800", "450"], env=e, timeout=30, capture_output=True)
        deadline = time.time() + 60
        while time.time() < deadline and not os.path.exists(exports + "/second.png"):
            subprocess.run(["xdotool", "key", "Next"], env=e, timeout=30, capture_output=True)
            time.sleep(2)
        t.check(os.path.exists(exports + "/second.png"), "interactive: PageDown went on to the second step")
    time.sleep(1)
    proc.send_signal(signal.SIGTERM)
    try:
        out, _ = proc.communicate(timeout=30)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        code = None
    t.note(out[-4000:])
    t.check(code in (0, 1), f"interactive: SIGTERM ends the app normally within 30 s (exit {code})")
    t.check(open(home + "/stepformer/imgui.ini").read() == ini, "the saved layout (imgui.ini) is unchanged")
    after = snapshot(root, exports)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    t.check(not changed, f"interactive: no file outside the exports folder changed (changed: {changed})")
    shutil.rmtree(root, ignore_errors=True)


def overlaps(a, b):
    return a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1


def case_builtin(t):
    src = t.args.source
    lessons = sorted(f for f in os.listdir(src + "/assets/lessons") if f.endswith(".txt"))
    t.check(len(lessons) >= 6, f"at least six built-in lessons ({len(lessons)})")
    for f in lessons:
        name = f[:-4]
        steps = sum(1 for l in open(src + "/assets/lessons/" + f) if l.split()[:2] == ["caption", "step"])
        lines = ["hover -100 -100", f"lesson open {name}"]  # the pointer off the window: no tooltips
        for i in range(steps):
            if i:
                lines.append("lesson next")
            lines.append(f"screenshot {t.path(name + '-' + str(i + 1) + '.png')}")
        lines.append("quit")
        home = t.path("home-" + name)
        p = t.run([], "\n".join(lines) + "\n", timeout=300, env_extra={"XDG_DATA_HOME": home})
        t.check(p.returncode == 0, f"{name}: every step ran without an error (exit {p.returncode})")
        for i in range(steps):
            shot = t.path(name + "-" + str(i + 1) + ".png")
            if not t.check(os.path.exists(shot), f"{name} step {i + 1}: screenshot written"):
                continue
            lay = json.load(open(shot + ".json"))
            panels = lay["panels"]
            t.check("caption" in panels, f"{name} step {i + 1}: the caption is open")
            t.check(len(panels) >= 2, f"{name} step {i + 1}: the caption and at least one panel ({list(panels)})")
            keys = list(panels)
            for a in range(len(keys)):
                for b in range(a + 1, len(keys)):
                    ra, rb = panels[keys[a]]["rect"], panels[keys[b]]["rect"]
                    t.check(not overlaps(ra, rb), f"{name} step {i + 1}: {keys[a]} {ra} and {keys[b]} {rb} apart")
            for k, v in panels.items():
                r = v["rect"]
                t.check(r[0] >= 0 and r[1] >= 0 and r[2] <= 1601 and r[3] <= 901,
                        f"{name} step {i + 1}: {k} {r} inside the window")
            t.check(lay.get("presentation") is True, f"{name} step {i + 1}: presentation mode")
            check_boxes_inside(t, lay, f"{name} step {i + 1}")
            # These never scroll their text away: the caption, the stepper's position and formula,
            # the Q, K, V arithmetic down to the softmax, the KV cache's right column.
            check_boxes_inside(t, lay, f"{name} step {i + 1} (height)", ["caption", "stepper", "qkv", "kv"], True)
            # The compare view shows each run's stage and formula without scrolling.
            cmp = panels.get("compare")
            if cmp:
                runs = [b for b in cmp.get("boxes", []) if b[0].startswith("run ")]
                low = [b for b in runs if b[2] < cmp["rect"][1] - 1 or b[4] > cmp["rect"][3] + 1]
                t.check(len(runs) == 4 and not low,
                        f"{name} step {i + 1}: both runs' stage and formula inside the compare view {cmp['rect']} "
                        f"(found {len(runs)}, outside: {low})")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}


def setup(t, args):
    t.model = os.path.join(t.out, "gui-model.safetensors")


if __name__ == "__main__":
    sys.exit(main(CASES, prefix="lesson_", add_args=lambda ap: ap.add_argument("--source", required=True),
                  setup=setup))

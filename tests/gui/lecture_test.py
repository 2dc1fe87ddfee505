#!/usr/bin/env python3
"""GUI tests for what a lecturer meets at 1600x900 (tests/gui/CMakeLists.txt): F11 in every state,
panels that never stack, attention heatmaps that stay readable in presentation mode, example inputs
per model, padding that fits, the batch view, and sampling that keeps the decoded prefix; the
stepper's position and the KV cache panel's column in narrow panels; the small things (the PE plot's
tooltip, the KV memory line, the View menu).

Keys go through the explorer's keyboard handlers (the script command `key`), the pointer through
`hover` and `click`; each screenshot's JSON says where every panel is, whether presentation mode is
on, the scale and the input, and the named boxes (text lines, buttons, plots, tooltips, menu items)
each panel and the menu bar drew.

usage: lecture_test.py CASE --exe STEPFORMER --xvfb-run XVFB_RUN --out DIR
"""
import os
import re
import sys

from guitest_common import boxes, check_boxes_inside, check_heatmap, find_box, font_px, main

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "..", "assets", "models")
HF = os.path.join(HERE, "..", "fixtures", "hf")
ALL_PANELS = ["model", "stepper", "attention", "qkv", "output", "pe", "masks", "kv", "residual", "compare",
              "training", "gradnorms"]


def shipped(name):
    return os.path.join(MODELS, name + ".safetensors")


def overlaps(a, b):
    """Rectangles [x0, y0, x1, y1] sharing more than a 1-pixel border."""
    return min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1


def check_no_overlap(t, lay, name):
    rects = {k: v["rect"] for k, v in lay["panels"].items()}
    bad = [(a, b) for i, a in enumerate(sorted(rects)) for b in sorted(rects)[i + 1:] if overlaps(rects[a], rects[b])]
    t.check(not bad, f"{name}: no two of {len(rects)} panels overlap (overlapping: {bad})")
    outside = [k for k, r in rects.items() if r[0] < -1 or r[1] < -1 or r[2] > lay["width"] + 1 or r[3] > lay["height"] + 1]
    t.check(not outside, f"{name}: every panel lies inside the window (outside: {outside})")


# ---- cases ------------------------------------------------------------------------------------

def case_f11(t):
    """F11 turns presentation mode on and off in every state, also once the compare, training and
    gradient-norm views have been opened (and with one of them focused); Ctrl+= and Ctrl+0 scale."""
    lines = [f"model {shipped('copy-preln')}", "input 3 1 4 1", "next-token"]
    shots = []
    for i, panel in enumerate(["stepper", "compare", "training", "gradnorms"]):
        lines += [f"panel {panel}", "wait 5", "key F11", "wait 3", f"screenshot {t.path(f'{i}-on.png')}",
                  "key F11", "wait 3", f"screenshot {t.path(f'{i}-off.png')}"]
        shots += [(f"{i}-on", True, panel), (f"{i}-off", False, panel)]
    lines += ["key F11", "key Ctrl+=", "wait 3", f"screenshot {t.path('scaled.png')}", "key Ctrl+0", "wait 3",
              f"screenshot {t.path('unscaled.png')}", "quit"]
    p = t.run([], "\n".join(lines) + "\n", timeout=300)
    t.check(p.returncode == 0, f"the script ran without errors (exit {p.returncode})")
    for name, want, panel in shots:
        _, lay = t.shot(name)
        if lay:
            t.check(lay.get("presentation") is want,
                    f"after opening '{panel}', F11 turns presentation mode {'on' if want else 'off'} "
                    f"(found {lay.get('presentation')})")
    _, a = t.shot("scaled")
    _, b = t.shot("unscaled")
    if a and b:
        t.check(a.get("presentation") is True and abs(a.get("scale", 0) - 1.25) < 1e-6,
                f"Ctrl+= in presentation mode scales to 1.25 (found {a.get('scale')})")
        t.check(abs(b.get("scale", 0) - 1.0) < 1e-6, f"Ctrl+0 resets the scale (found {b.get('scale')})")


def case_no_overlap(t):
    """Opening panels one after another never stacks them, in the default and presentation layouts,
    at scale 1 and 1.5; each one lands inside the window."""
    lines = [f"model {shipped('dates-preln')}", "next-token 2"]
    names = []
    for mode in ("default", "presentation"):
        lines += ["presentation " + ("on" if mode == "presentation" else "off"), "panels default"]
        for p in ALL_PANELS:
            lines += [f"panel {p}", f"screenshot {t.path(f'{mode}-{p}.png')}"]
            names.append(f"{mode}-{p}")
        lines += ["panels off", "panel masks", f"screenshot {t.path(f'{mode}-masks-alone.png')}"]
        names.append(f"{mode}-masks-alone")
    lines += ["presentation on", "scale 1.5", "panel pe", "panel kv", f"screenshot {t.path('scaled.png')}", "quit"]
    names.append("scaled")
    p = t.run([], "\n".join(lines) + "\n", timeout=400)
    t.check(p.returncode == 0, f"the script ran without errors (exit {p.returncode})")
    for n in names:
        _, lay = t.shot(n)
        if lay:
            check_no_overlap(t, lay, n)
    # The masks panel opened next to attention leaves the attention selection visible.
    _, lay = t.shot("default-masks")
    if lay:
        t.check("attention" in lay["panels"] and "masks" in lay["panels"], "masks opens beside the attention panel")


def case_heatmap_cells(t):
    """Presentation mode at 1600x900: an 18x18 attention map gets square cells of at least 18 px at
    scale 1 and 1.25; a small map's cells grow with the UI scale; the map stays inside its panel."""
    src = "Sat 21 Nov 2026 !!"  # 18 characters for the dates model
    lines = [f"model {shipped('dates-preln')}", f"input {src}", "end", "presentation on",
             "attention kind=enc-self layer=0 head=0 view=heatmap", f"screenshot {t.path('p1.png')}",
             "scale 1.25", f"screenshot {t.path('p125.png')}", "scale 1",
             f"model {shipped('copy-preln')}", "input 3 1 4", "end", "attention kind=enc-self layer=0 head=0",
             f"screenshot {t.path('small1.png')}", "scale 1.25", f"screenshot {t.path('small125.png')}", "quit"]
    p = t.run([], "\n".join(lines) + "\n")
    t.check(p.returncode == 0, f"the script ran without errors (exit {p.returncode})")

    def cells(name, n, minimum):
        img, lay = t.shot(name)
        if not img:
            return None
        check_heatmap(t, img, lay, "attention", name)
        x0, y0, x1, y1 = lay["panels"]["attention"]["heatmap"]
        cw, ch = (x1 - x0) / n, (y1 - y0) / n
        t.check(abs(cw - ch) < 1.0, f"{name}: square cells ({cw:.1f} x {ch:.1f} px)")
        t.check(ch >= minimum, f"{name}: cells of at least {minimum} px in presentation mode (found {ch:.1f})")
        rect = lay["panels"]["attention"]["rect"]
        t.check(x1 <= rect[2] and y1 <= rect[3], f"{name}: the map lies inside its panel")
        return ch

    cells("p1", 18.0, 18)
    cells("p125", 18.0, 18)
    a, b = cells("small1", 3.0, 40), cells("small125", 3.0, 40)
    if a and b:
        t.check(b > a * 1.1, f"a 3x3 map's cells grow with the UI scale ({a:.1f} -> {b:.1f} px)")


def case_examples(t):
    """"Example" gives each model its own kind of input: a date for `dates`, a prompt ending in '='
    for `copy-lm`, a sentence for GPT-2; '+ <pad>' on a long date source fits max_len."""
    runs = [("dates", shipped("dates-preln")), ("copylm", shipped("copy-lm-preln")), ("gpt2", os.path.join(HF, "gpt2-tiny"))]
    lines = []
    for name, path in runs:
        lines += [f"model {path}", "example", f"screenshot {t.path(name + '.png')}"]
    lines += [f"model {shipped('dates-preln')}", "input Saturday 21 Nov 2026", "pad", "panel masks", "attention kind=enc-self",
              f"screenshot {t.path('padded.png')}", "quit"]
    p = t.run([], "\n".join(lines) + "\n")
    t.check(p.returncode == 0, f"the script ran without errors (exit {p.returncode})")
    _, d = t.shot("dates")
    if d:
        s = d.get("input", "")
        t.check(any(ch.isdigit() for ch in s) and any(ch.isalpha() or ch == "/" for ch in s),
                f"dates: the example is a date (found '{s}')")
    _, c = t.shot("copylm")
    if c:
        t.check(c.get("input", "").endswith("="), f"copy-lm: the example prompt ends with '=' (found '{c.get('input')}')")
    _, g = t.shot("gpt2")
    if g:
        t.check(len(g.get("input", "").split()) >= 5 and not g["input"].replace(" ", "").isdigit(),
                f"gpt2: the example is a sentence (found '{g.get('input')}')")
    _, pd = t.shot("padded")
    if pd:
        t.check("<pad>" in pd.get("input", ""), f"dates: padding appended (input '{pd.get('input')}')")
        t.check("refused" not in pd.get("status", "") and "error" not in pd.get("status", "").lower(),
                f"dates: the padded input is accepted (status '{pd.get('status')}')")


def case_batch(t):
    """The Masks panel's batch view: the model's examples padded together, a mask per sequence."""
    lines = [f"model {shipped('copy-preln')}", "masks-view batch", f"screenshot {t.path('copy.png')}",
             f"model {shipped('copy-lm-preln')}", f"screenshot {t.path('copylm.png')}", "quit"]
    p = t.run([], "\n".join(lines) + "\n")
    t.check(p.returncode == 0, f"the script ran without errors (exit {p.returncode})")
    for n in ("copy", "copylm"):
        img, lay = t.shot(n)
        if img:
            check_heatmap(t, img, lay, "masks", n + " batch")


def case_sampling(t):
    """Changing the temperature mid-decode keeps the tokens decoded before the current step."""
    lines = [f"model {shipped('copy-lm-preln')}", "input 3 1 4 1 5 9 2 =", "decode sample", "seed 3",
             "next-token 4", f"screenshot {t.path('before.png')}", "temperature 2.5", f"screenshot {t.path('after.png')}",
             "panel output", "quit"]
    p = t.run([], "\n".join(lines) + "\n")
    t.check(p.returncode == 0, f"the script ran without errors (exit {p.returncode})")
    _, a = t.shot("before")
    _, b = t.shot("after")
    if a and b:
        before, after = a.get("output", ""), b.get("output", "")
        t.check(a.get("cursor") == b.get("cursor"), f"the cursor stays ({a.get('cursor')} -> {b.get('cursor')})")
        tb, ta = before.split(), after.split()
        t.check(len(tb) >= 4 and tb[:3] == ta[:3],
                f"the tokens before the current step are kept ('{before}' -> '{after}')")


def case_labels(t):
    """Labels a lecturer reads: the KV cache's rows of a decoder-only prompt name their positions
    (0, 1, 2, … with "·prefill", not all "t0") and the generated rows their steps; the stepper's
    decoder blocks carry one label for masked self-attention in every layer, at every scale."""
    lines = [f"model {shipped('copy-lm-preln')}", "input 3 1 4 1 5 =", "next-token 3", "panels off", "panel kv",
             f"screenshot {t.path('kv.png')}"]
    shots = []
    for name, model in (("encdec", "copy-preln"), ("deconly", "copy-lm-preln")):
        lines += [f"model {shipped(model)}", "input 3 1 4 1", "next-token 2", "panels off", "panel stepper"]
        for mode, scale in (("off", 1), ("on", 1), ("on", 1.5)):
            shot = f"{name}-{mode}-{scale}"
            lines += [f"presentation {mode}", f"scale {scale}", f"screenshot {t.path(shot + '.png')}"]
            shots.append(shot)
        lines += ["presentation off", "scale 1"]
    p = t.run([], "\n".join(lines + ["quit"]) + "\n", timeout=300)
    t.check(p.returncode == 0, f"the script ran without errors (exit {p.returncode})")
    _, lay = t.shot("kv")
    if lay:
        rows = []
        for label in lay["panels"]["kv"]["labels"]:
            m = re.match(r"^(\d+) \S+ ·(prefill|t\d+)$", label)
            if m and int(m.group(1)) == len(rows):
                rows.append(m.group(2))
        # "<s> 3 1 4 1 5 =": 7 prompt rows, then the rows of the tokens decoded at steps 1 and 2.
        t.check(rows[:7] == ["prefill"] * 7, f"the prompt's rows 0-6 are the prefill (found {rows[:7]})")
        t.check(rows[7:9] == ["t1", "t2"], f"the decoded rows say their steps t1, t2 (found {rows[7:]})")
    for shot in shots:
        _, lay = t.shot(shot)
        if not lay:
            continue
        labels = lay["panels"]["stepper"]["labels"]
        masked = [x for x in labels if x in ("Masked self", "Masked", "MS")]
        t.check(len(masked) == 2 and len(set(masked)) == 1,
                f"{shot}: both decoder layers' masked self-attention boxes carry one label (found {masked})")
        t.check("Self" not in labels, f"{shot}: no decoder block is labelled plain 'Self' ({labels})")


def case_small_things(t):
    """The PE plot's tooltip names a position ("position 3 '…'", not "token 3"); "Memory grows by
    1.0 KiB per token." breaks between words only, never inside the amount, whatever the panel's
    width; the Inspect panel's tabs keep their whole titles and the stepper's diagram boxes stay as
    tall as their text in the default layout, in presentation mode too; the View menu lists the panels and the view settings, and no ImGui demo."""
    lines = [f"model {shipped('copy-preln')}", "input 3 1 4 1 5", "next-token 2", "hover -100 -100", "panels off",
             "pe-view curves dim=0 dim2=1", "wait 3", "hover pe plot curves", "wait 3",
             f"screenshot {t.path('pe-tooltip.png')}", "hover -100 -100", "panels off", "panel kv"]
    kv = []
    for mode, scale, row in (("off", 1, "kv"), ("on", 1, "kv"), ("on", 2, "attention:1 kv:1"),
                             ("on", 1.5, "stepper:1 attention:1 kv:1")):
        shot = f"kv-{mode}-{scale}-{len(row.split())}"
        lines += [f"presentation {mode}", f"scale {scale}", f"layout {row}", "wait 3", f"screenshot {t.path(shot + '.png')}"]
        kv.append(shot)
    tabs = []
    for mode in ("off", "on"):
        shot = f"inspect-tabs-{mode}"
        lines += ["layout reset", f"presentation {mode}", "scale 1", "panels default", "inspect lens", "wait 3",
                  f"screenshot {t.path(shot + '.png')}"]
        tabs.append(shot)
    lines += ["layout reset", "presentation off", "scale 1", "panels default", "wait 3", "click menu View", "wait 3",
              f"screenshot {t.path('view-menu.png')}", "quit"]
    p = t.run([], "\n".join(lines) + "\n", timeout=300)
    t.check(p.returncode == 0, f"the script ran without errors (exit {p.returncode})")

    _, lay = t.shot("pe-tooltip")
    if lay:
        tip = find_box(lay, "pe", "tooltip ")
        t.check(tip is not None and re.match(r"^tooltip position \d+ ", tip[0]) is not None,
                f"hovering the PE curves names the position under the pointer (found {tip[0] if tip else None})")
    for shot in tabs:
        _, lay = t.shot(shot)
        if not lay:
            continue
        for title in ("Logit lens", "Attribution", "Head detectors", "Rollout", "Ablation", "Patching"):
            b = find_box(lay, "inspect", "tab " + title)
            need = 0.4 * font_px(lay) * len(title)  # a shortened tab ("Lo…") is about half that
            t.check(b is not None and b[3] - b[1] >= need,
                    f"{shot}: the Inspect tab '{title}' keeps its whole title ({b}; at least {need:.0f} px wide)")
        check_boxes_inside(t, lay, shot, ["inspect"])
        diagram = [b for b in boxes(lay, "stepper") if b[0].startswith("diagram ")]
        low = [b for b in diagram if b[4] - b[2] < 0.8 * font_px(lay)]
        t.check(len(diagram) > 0 and not low,
                f"{shot}: the stepper's diagram boxes stay at least as tall as their text ({len(diagram)} boxes; lower: {low})")
    wrapped = False
    for shot in kv:
        _, lay = t.shot(shot)
        if not lay:
            continue
        line = next((b for b in boxes(lay, "kv") if b[0].replace("\n", " ").startswith("Memory grows by")), None)
        if not t.check(line is not None, f"{shot}: the KV panel shows the memory line"):
            continue
        text = line[0].replace("\u00a0", " ")
        rows = text.split("\n")
        t.check(any(re.search(r"\d+(\.\d+)? (B|KiB|MiB|GiB)", r) for r in rows),
                f"{shot}: the amount and its unit stay on one line ({rows})")
        h, fpx = line[4] - line[2], font_px(lay)
        t.check(len(rows) * fpx * 0.9 <= h <= len(rows) * fpx * 1.5,
                f"{shot}: the line is drawn on exactly its {len(rows)} line(s) ({h} px at {fpx} px text)")
        check_boxes_inside(t, lay, shot, ["kv"])
        wrapped = wrapped or len(rows) > 1
    t.check(wrapped, "in the narrowest panel the memory line wraps (so wrapping is exercised)")

    _, lay = t.shot("view-menu")
    if lay:
        items = [b[0][len("View > "):] for b in boxes(lay, "menu") if b[0].startswith("View > ")]
        t.check(len(items) >= len(ALL_PANELS) and "Presentation mode" in items and "Reset layout" in items,
                f"clicking View opens the menu with the panels and the view settings ({items})")
        t.check(not [i for i in items if "demo" in i.lower() or "imgui" in i.lower()],
                f"the View menu has no ImGui demo item ({items})")


def case_stepper_narrow(t):
    """The stepper's "stage N of M" stays whole inside its panel however narrow the panel (a third
    of the window in presentation mode, at scale 1 and 1.5): its controls flow onto a second line;
    the stage's formula stays on screen (at the larger scale, when the stepper has half the window)."""
    lines = [f"model {shipped('dates-preln')}", "input Sat 21 Nov 2026", "next-token 3", "hover -100 -100"]
    shots = []
    for scale in (1, 1.5):
        for row in ("stepper", "stepper:1 attention:1", "attention:1 stepper:1 output:1", "attention:2 stepper:1"):
            shot = f"{scale}-{len(row.split())}-{row.split(':')[0]}"
            lines += ["presentation on", f"scale {scale}", f"layout {row}", "wait 3", f"screenshot {t.path(shot + '.png')}"]
            shots.append((shot, scale))
    p = t.run([], "\n".join(lines + ["quit"]) + "\n", timeout=300)
    t.check(p.returncode == 0, f"the script ran without errors (exit {p.returncode})")
    narrowest = 1e9
    for shot, scale in shots:
        _, lay = t.shot(shot)
        if not lay:
            continue
        st = lay["panels"].get("stepper")
        if not t.check(st is not None, f"{shot}: the stepper is open"):
            continue
        b = find_box(lay, "stepper", "stage ")
        if not t.check(b is not None and re.match(r"^stage \d+ of \d+", b[0]) is not None,
                       f"{shot}: the stepper says where it is ({b})"):
            continue
        x0, y0, x1, y1 = st["rect"]
        narrowest = min(narrowest, x1 - x0)
        t.check(b[1] >= x0 and b[3] <= x1 - 4 and b[2] >= y0 and b[4] <= y1,
                f"{shot}: '{b[0]}' {b[1:]} lies whole inside the stepper {st['rect']}")
        if scale > 1 and x1 - x0 < 700:
            continue  # a third of the window at a large scale: the formula may need scrolling
        f = find_box(lay, "stepper", "formula ")
        t.check(f is not None and f[2] >= y0 and f[4] <= y1,
                f"{shot}: the stage's formula is on screen inside the stepper ({f[1:] if f else None})")
        check_boxes_inside(t, lay, shot, ["stepper"])
    t.check(narrowest < 700, f"a narrow stepper was among the layouts ({narrowest} px)")


def case_kv_lesson(t):
    """Lesson 5's KV cache steps at 1600x900 in presentation mode: every line, the memory line and
    the cost plot of the panel's right column lie inside the panel (nothing cut, nothing scrolled
    away)."""
    lines = ["hover -100 -100", "lesson open 05-generation", "lesson next", "lesson next", "lesson next",
             f"screenshot {t.path('step4.png')}", "lesson next", f"screenshot {t.path('step5.png')}", "quit"]
    p = t.run([], "\n".join(lines) + "\n", timeout=300)
    t.check(p.returncode == 0, f"the script ran without errors (exit {p.returncode})")
    for shot in ("step4", "step5"):
        _, lay = t.shot(shot)
        if not lay:
            continue
        t.check(lay.get("presentation") is True, f"{shot}: presentation mode")
        if not t.check("kv" in lay["panels"], f"{shot}: the KV cache panel is open"):
            continue
        for prefix in ("Memory grows by", "plot flops", "bytes = 2 (K, V)", "= self"):
            t.check(find_box(lay, "kv", prefix) is not None, f"{shot}: the panel drew '{prefix}'")
        check_boxes_inside(t, lay, shot, ["kv"], vertical=True)


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}

if __name__ == "__main__":
    sys.exit(main(CASES, prefix="lecture-"))

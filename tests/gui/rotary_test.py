#!/usr/bin/env python3
"""GUI tests of what the Llama-style families change, run by CTest under Xvfb like gui_test.py
(the PNG reader, the Xvfb runner and the heatmap checks are in guitest_common.py):

  rotary   llama-tiny: the Positional encoding panel's rotary tab draws its two polar plots (q_m and
           k_n of one frequency, one coloured arrow per position), in normal and presentation mode;
           pythia-tiny (partial rotary) too; a model with added positions explains instead
  blocks   llama-tiny and pythia-tiny: the stepper's stage text says RMSNorm / SwiGLU / parallel
           residual, with no error in the status bar

usage: rotary_test.py CASE --exe STEPFORMER --xvfb-run XVFB_RUN --out DIR
"""
import os
import sys

from guitest_common import check_heatmap, colours, main, spread

HF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "hf")


def check_polar(t, img, lay, name):
    """The pe panel's mark rectangle holds the two polar plots: coloured arrows, not a blank area."""
    p = lay["panels"].get("pe")
    if not t.check(p is not None, f"{name}: the Positional encoding panel is open"):
        return
    x0, y0, x1, y1 = p["mark"]
    if not t.check(x1 - x0 > 100 and y1 - y0 > 60, f"{name}: the rotary tab drew its plots ({x0},{y0})-({x1},{y1})"):
        return
    px = img.region(x0 + 1, y0 + 1, x1 - 1, y1 - 1, step=1)
    t.check(colours(px) >= 12 and spread(px) > 4.0,
            f"{name}: the polar plots hold coloured arrows ({colours(px)} colours, spread {spread(px):.1f})")


def case_rotary(t):
    llama, pythia = os.path.join(HF, "llama-tiny"), os.path.join(HF, "pythia-tiny")
    lines = [f"model {llama}", "expect model-loaded", "input Hello world, this is a test", "end",
             "pe-view rotary layer=1 head=2 pair=1 m=5 n=2", f"screenshot {t.path('llama.png')}",
             "presentation on", "pe-view rotary", f"screenshot {t.path('llama-presentation.png')}", "presentation off",
             f"model {pythia}", "expect model-loaded", "input Hello world, this is a test", "end",
             "pe-view rotary layer=0 head=1 pair=0 m=4 n=1", f"screenshot {t.path('pythia.png')}",
             # Out-of-range choices are clamped, never a crash.
             "pe-view rotary layer=9 head=9 pair=9 m=99 n=99", f"screenshot {t.path('clamped.png')}",
             f"model {os.path.join(HF, 'gpt2-tiny')}", "expect model-loaded", "input Hello world", "end",
             "pe-view rotary", f"screenshot {t.path('gpt2.png')}", "quit"]
    p = t.run([], "\n".join(lines) + "\n")
    t.check(p.returncode == 0, f"the script ran without errors (exit {p.returncode})")
    for name in ["llama", "llama-presentation", "pythia", "clamped"]:
        img, lay = t.shot(name)
        if not img:
            continue
        t.check("error" not in lay.get("status", "").lower(), f"{name}: no error in the status bar ('{lay.get('status')}')")
        check_polar(t, img, lay, name)
    img, lay = t.shot("llama-presentation")
    if img:
        t.check(lay.get("presentation") is True, "presentation mode is on in the presentation shot")
    img, lay = t.shot("gpt2")
    if img:
        p = lay["panels"].get("pe", {})
        t.check(p.get("mark") == [0, 0, 0, 0], f"gpt2 (learned positions): no rotary plots, a note (mark {p.get('mark')})")
        check_heatmap(t, img, lay, "pe", "gpt2 pe")


def case_blocks(t):
    runs = [("llama-tiny", "step 1", "RMSNorm before"), ("llama-tiny", "step 4", "SwiGLU feed-forward"),
            ("pythia-tiny", "step 4", "feed-forward")]
    lines = []
    for i, (folder, move, _) in enumerate(runs):
        lines += [f"model {os.path.join(HF, folder)}", "expect model-loaded", "input Hello world, this is", "home",
                  move, "panel stepper", f"screenshot {t.path(f'{i}.png')}"]
    p = t.run([], "\n".join(lines + ["quit"]) + "\n")
    t.check(p.returncode == 0, f"the script ran without errors (exit {p.returncode})")
    for i, (folder, _, title) in enumerate(runs):
        img, lay = t.shot(str(i))
        if not img:
            continue
        t.check(title in lay.get("stage", ""), f"{folder}: the stage is '{title}…' (found '{lay.get('stage')}')")
        t.check("error" not in lay.get("status", "").lower(), f"{folder}: no error in the status bar")


if __name__ == "__main__":
    sys.exit(main({"rotary": case_rotary, "blocks": case_blocks}, prefix="rotary_"))

#!/usr/bin/env python3
"""GUI tests of what the Llama-style families change (docs/real-models.md), on the tiny hub
fixtures tests/fixtures/hf/llama-tiny (4 query heads share 2 K/V heads) and
mistral-tiny-sharded (the same grouping, and a sliding window of 3):

  gqa     the KV cache panel draws the grouping diagram (query heads coloured by their K/V head)
          and its K/V matrices, in the normal and the presentation theme, for both models;
  window  the Masks panel draws Mistral's band with the keys that fell out of the window marked
          (violet), on a prompt longer than the window; Llama, without a window, marks none.

usage: families_test.py CASE --exe STEPFORMER --xvfb-run XVFB_RUN --out DIR
"""
import os
import sys

from guitest_common import check_heatmap, main

HF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "hf")
PROMPT = "the cat sat on the mat and"  # longer than Mistral's window of 3
GROUP_COLOURS = [(31, 119, 180), (255, 127, 14)]  # head_colour(0), head_colour(1) (gfx/style.cpp)
OUT_OF_WINDOW = (170, 80, 230)  # panels/masks.cpp


def near(p, c, tol):
    return all(abs(a - b) <= tol for a, b in zip(p, c))


def count_near(img, rect, colour, tol):
    x0, y0, x1, y1 = rect
    return sum(1 for p in img.region(x0, y0, x1, y1) if near(p, colour, tol))


def no_error(t, lay, name):
    t.check("error" not in lay.get("status", "").lower(), f"{name}: no error in the status bar ('{lay.get('status')}')")


def case_gqa(t):
    """The KV cache panel on both grouped-query fixtures, dark and presentation theme."""
    lines = []
    for folder in ("llama-tiny", "mistral-tiny-sharded"):
        for pres in ("off", "on"):
            lines += [f"model {os.path.join(HF, folder)}", "expect model-loaded", f"input {PROMPT}", "next-token 3",
                      f"presentation {pres}", "panels off", "attention kind=dec-self layer=1 head=2",
                      "panel attention off", "kv-layer 1", "wait 5", f"screenshot {t.path(folder + '-kv-' + pres + '.png')}"]
    p = t.run([], "\n".join(lines + ["quit"]) + "\n")
    t.check(p.returncode == 0, f"the script ran without errors (exit {p.returncode})")
    for folder in ("llama-tiny", "mistral-tiny-sharded"):
        for pres in ("off", "on"):
            name = f"{folder}-kv-{pres}"
            img, lay = t.shot(name)
            if not img:
                continue
            no_error(t, lay, name)
            t.check(lay.get("presentation") == (pres == "on"), f"{name}: presentation {pres}")
            check_heatmap(t, img, lay, "kv", name)
            mark = lay["panels"].get("kv", {}).get("mark", [0, 0, 0, 0])
            if not t.check(mark[2] - mark[0] > 40 and mark[3] - mark[1] > 20,
                           f"{name}: the grouping diagram is drawn ({mark})"):
                continue
            for g, colour in enumerate(GROUP_COLOURS):
                n = count_near(img, mark, colour, 6)
                t.check(n > 200, f"{name}: K/V group {g}'s colour {colour} fills its heads ({n} pixels)")


def case_window(t):
    """Mistral's band in the Masks panel, keys outside it marked; Llama has no band."""
    lines = []
    runs = [("mistral-tiny-sharded", "off"), ("mistral-tiny-sharded", "on"), ("llama-tiny", "off")]
    for folder, pres in runs:
        lines += [f"model {os.path.join(HF, folder)}", "expect model-loaded", f"input {PROMPT}", "next-token 2",
                  f"presentation {pres}", "panels off", "attention kind=dec-self layer=1 head=0", "panel attention off",
                  "masks-view input", "panel masks", "wait 5",
                  f"screenshot {t.path(folder + '-masks-' + pres + '.png')}"]
    p = t.run([], "\n".join(lines + ["quit"]) + "\n")
    t.check(p.returncode == 0, f"the script ran without errors (exit {p.returncode})")
    for folder, pres in runs:
        name = f"{folder}-masks-{pres}"
        img, lay = t.shot(name)
        if not img:
            continue
        no_error(t, lay, name)
        check_heatmap(t, img, lay, "masks", name)
        mark = lay["panels"].get("masks", {}).get("mark", [0, 0, 0, 0])
        if folder.startswith("mistral"):
            if t.check(mark[2] - mark[0] > 40 and mark[3] - mark[1] > 40, f"{name}: the band is drawn ({mark})"):
                n = count_near(img, mark, OUT_OF_WINDOW, 8)
                t.check(n > 100, f"{name}: keys outside the window are marked violet ({n} pixels)")
        else:
            rect = lay["panels"].get("masks", {}).get("rect", [0, 0, 0, 0])
            n = count_near(img, rect, OUT_OF_WINDOW, 8)
            t.check(mark == [0, 0, 0, 0] and n < 20, f"{name}: no window, nothing marked ({mark}, {n} pixels)")


if __name__ == "__main__":
    sys.exit(main({"gqa": case_gqa, "window": case_window}, prefix="families_"))

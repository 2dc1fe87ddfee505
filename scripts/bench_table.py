#!/usr/bin/env python3
"""Builds the ratio table from one scripts/bench.sh run.

    python3 scripts/bench_table.py WORKDIR > docs/benchmarks.md

WORKDIR holds the Google Benchmark JSON files (*_bench.json, --benchmark_out) and the PyTorch
peers' peers.json (tests/bench/peers/results_json.py) and machine.txt (bench.sh's header lines).
Every time is the minimum wall time over the runs of that figure (one or a few iterations per
run): on a shared machine the minimum is the figure least disturbed by other processes.
"""

import glob
import json
import os
import re
import sys

UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def stepformer_times(workdir):
    """{benchmark name without /real_time, /min_time:…, /repeats:…: min real time in ms}."""
    out = {}
    for path in sorted(glob.glob(os.path.join(workdir, "*_bench.json"))):
        with open(path) as f:
            data = json.load(f)
        for b in data.get("benchmarks", []):
            if b.get("run_type") != "iteration" or b.get("error_occurred"):
                continue
            name = "/".join(p for p in b["run_name"].split("/")
                            if not re.match(r"(real_time|min_time:|repeats:|iterations:)", p))
            ms = b["real_time"] * UNIT_MS[b.get("time_unit", "ns")]
            out[name] = min(ms, out.get(name, float("inf")))
    return out


def peer_times(workdir):
    path = os.path.join(workdir, "peers.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return {k: v["min_ms"] for k, v in json.load(f).items()}


def fmt(ms):
    if ms is None:
        return "–"
    return "%.3f ms" % ms if ms < 10 else "%.1f ms" % ms


def main():
    workdir = sys.argv[1]
    sf, pt = stepformer_times(workdir), peer_times(workdir)
    with open(os.path.join(workdir, "machine.txt")) as f:
        machine = f.read().strip().splitlines()
    all_cores = os.cpu_count()
    floor = sf.get("weights_floor")
    floor_goal = ("≤ 1.15 × the weight-reading floor (%s): ≤ %s"
                  % (fmt(floor), fmt(1.15 * floor)) if floor else "≤ 1.15 × the weight-reading floor")

    # (figure, stepformer benchmark, peer key, goal: ("ratio", x) | ("ms", x) | None, goal text)
    rows = [
        ("base forward (d512, 8 heads, 6+6, d_ff 2048, 64 tokens), recording on, 1 thread",
         "forward/base_recorded", "forward_base/threads:1", ("ratio", 1.8), "≥ 1.8×"),
        ("small forward (d128, 4 heads, 2+2, d_ff 512, 32 tokens), recording on, 1 thread",
         "forward/small_recorded", "forward_small/threads:1", ("ratio", 4.0), "≥ 4×"),
        ("cached decode step at t = 64, base, 1 thread",
         "step_cached/64", "decode_cached/64", ("ms", 1.15 * floor if floor else None), floor_goal),
        ("training step, copy, d128, 2+2, batch 64, pre-LN, 1 thread",
         "Throughput/threads:1/pre:1", "train_step/threads:1/pre", ("ratio", 2.5), "≥ 2.5×"),
        ("training step, same, 2 threads",
         "Throughput/threads:2/pre:1", "train_step/threads:2/pre", ("ratio", 3.0), "≥ 3×"),
        ("base forward, all cores (%d)" % all_cores,
         "forward/base_recorded_all_cores", "forward_base/threads:0", ("ms", 25.0), "≤ 25 ms"),
        ("GPT-2 small forward, 128 tokens, 1 thread",
         "forward_128/threads:1", "gpt2_forward_128/threads:1", None, "reported"),
        ("GPT-2 small forward, 128 tokens, all cores (%d)" % all_cores,
         "forward_128/threads:0", "gpt2_forward_128/threads:0", None, "reported"),
        ("GPT-2 small cached decode step at t = 129, 1 thread",
         "decode_step/threads:1", "gpt2_decode_step/threads:1", None, "reported"),
        ("GPT-2 small cached decode step at t = 129, all cores (%d)" % all_cores,
         "decode_step/threads:0", "gpt2_decode_step/threads:0", None, "reported"),
    ]
    print("# Benchmarks: stepformer beside PyTorch")
    print()
    print("Written by `scripts/bench.sh` (do not edit by hand). Each figure is the **minimum wall")
    print("time** over repeated runs of one stepformer Google Benchmark (`tests/bench/`) and of its")
    print("PyTorch twin (`tests/bench/peers/`), run back to back on this machine; ratio = PyTorch ÷")
    print("stepformer (above 1: stepformer is faster). Random weights, batch 1, float32.")
    print()
    for line in machine:
        print("- " + line)
    print()
    print("| figure | stepformer | PyTorch | ratio | goal |")
    print("|---|---|---|---|---|")
    for figure, sk, pk, goal, goal_text in rows:
        s, p = sf.get(sk), pt.get(pk)
        ratio = p / s if s and p else None
        met = ""
        if goal and s:
            kind, x = goal
            if kind == "ratio" and ratio is not None:
                met = " ✓" if ratio >= x else " ✗"
            elif kind == "ms" and x is not None:
                met = " ✓" if s <= x else " ✗"
        print("| %s | %s | %s | %s | %s%s |" % (figure, fmt(s), fmt(p),
                                               "%.2f×" % ratio if ratio else "–", goal_text, met))
    print()
    print("Goals: the project's speed targets (base, small, decode, training); GPT-2 is reported. ✓ met,")
    print("✗ not met in this run. The decode floor is `weights_floor` of `decode_bench`: one")
    print("matrix-vector product with every weight matrix a cached step reads, measured in the same run.")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Builds the benchmark tables from one scripts/bench.sh run.

    python3 scripts/bench_table.py WORKDIR > docs/benchmarks.md

WORKDIR holds one folder per interleaved round (round1/, round2/, …), each with the Google
Benchmark JSON files of that round (*_bench.json, --benchmark_out) and the PyTorch peers'
peers.json (tests/bench/peers/results_json.py), and machine.txt (bench.sh's header lines).

Every figure pools its runs from all rounds and reports the minimum and the median wall time;
rates and fractions are computed from the minimum (the run least disturbed by other processes).
The work of a figure comes from the benchmark's own counters (FLOPs counted from the shapes with
stepper/cost.h, bytes with tests/bench/bench_common.h), never typed in here.

The host's limits come from host_limits_bench and its twin torch_host_limits.py in the same run:
  compute limit (per thread count) = the higher of our kernel's and OpenBLAS's (torch.mm) rate on
                                     the 1024³ product at that thread count;
  decode floor                     = the step's bytes ÷ the streaming read rate at that thread
                                     count, measured by the decode benchmark between the steps of
                                     each of its runs, 64 MiB after each step, the faster of two ways
                                     of reading (counter read_rate; tests/bench/stream_read.h), else
                                     the run's limit row.
A decode figure's ratio to its floor is the best over its runs of the run's time ÷ the floor at
that run's read rate: a shared host's memory bandwidth moves by half within seconds, so a floor
read once, or after the run, would judge the steps against another moment's memory.
"""

import glob
import json
import os
import re
import statistics
import sys

UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
ALL = os.cpu_count() or 1


class Figure:
    """The pooled runs of one benchmark (times in ms) and its counters."""

    def __init__(self):
        self.times = []
        self.counters = {}
        self.read_rates = []  # per run, beside times: the streaming read rate measured between its steps

    def floor_runs(self, nbytes):
        """(time ÷ floor, floor ms, read rate, time ms) of each run with a read rate of its own."""
        return [(t / (nbytes / r * 1e3), nbytes / r * 1e3, r, t)
                for t, r in zip(self.times, self.read_rates) if r]

    @property
    def min(self):
        return min(self.times) if self.times else None

    @property
    def median(self):
        return statistics.median(self.times) if self.times else None


def rounds(workdir):
    found = glob.glob(os.path.join(workdir, "round*"))
    found.sort(key=lambda p: int(re.sub(r"\D", "", os.path.basename(p)) or 0))
    return found or [workdir]


def stepformer_figures(workdir):
    """{benchmark name without /real_time, /min_time:…, … : Figure}, and the JSON contexts."""
    out, context = {}, {}
    for rdir in rounds(workdir):
        for path in sorted(glob.glob(os.path.join(rdir, "*_bench.json"))):
            with open(path) as f:
                data = json.load(f)
            context.update(data.get("context", {}))
            for b in data.get("benchmarks", []):
                if b.get("run_type") != "iteration" or b.get("error_occurred"):
                    continue
                name = "/".join(p for p in b["run_name"].split("/")
                                if not re.match(r"(real_time|manual_time|min_time:|repeats:|iterations:)", p))
                fig = out.setdefault(name, Figure())
                fig.times.append(b["real_time"] * UNIT_MS[b.get("time_unit", "ns")])
                fig.read_rates.append(b.get("read_rate"))
                for k in ("flops", "bytes", "kv_bytes", "mha_bytes", "width_bits", "threads", "cpu_mhz",
                          "peak_rss_MB", "rss_after_MB", "f32_MB", "held_MB", "file_MB"):
                    if k in b:
                        fig.counters[k] = max(b[k], fig.counters.get(k, b[k])) if k == "peak_rss_MB" else b[k]
    return out, context


def peer_figures(workdir):
    out = {}
    for rdir in rounds(workdir):
        path = os.path.join(rdir, "peers.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for key, v in json.load(f).items():
                fig = out.setdefault(key, Figure())
                fig.times += v.get("times_ms", [v["min_ms"]])
                for k in ("peak_rss_MB",):
                    if k in v:
                        fig.counters[k] = max(v[k], fig.counters.get(k, v[k]))
    return out


def fmt_ms(ms):
    if ms is None:
        return "–"
    if ms >= 1000:
        return "%.2f s" % (ms / 1e3)
    return "%.3f ms" % ms if ms < 10 else "%.1f ms" % ms


def fmt_pair(fig):
    if fig is None or not fig.times:
        return "–"
    return "%s / %s" % (fmt_ms(fig.min), fmt_ms(fig.median))


def fmt_work(flops=None, nbytes=None):
    if flops:
        return "%.3g GFLOP" % (flops / 1e9)
    if nbytes:
        return "%.1f MB" % (nbytes / 1e6)
    return "–"


def rate(fig, key):
    """Work per second from the minimum time (FLOP/s or B/s), or None."""
    if fig is None or not fig.times or not fig.counters.get(key):
        return None
    return fig.counters[key] / (fig.min / 1e3)


class Limits:
    def __init__(self, sf, pt):
        self.sf, self.pt = sf, pt

    def ours(self, shape, threads):
        return rate(self.sf.get("gemm_rate/%s/threads:%d" % (shape, threads)), "flops")

    def blas(self, shape, threads):
        fig = self.pt.get("torch_mm/%s/threads:%d" % (shape, threads))
        flops = self.sf.get("gemm_rate/%s/threads:%d" % (shape, threads))
        if fig is None or not fig.times or flops is None:
            return None
        return flops.counters["flops"] / (fig.min / 1e3)

    def compute(self, threads):
        """(rate, whose): the higher of ours and OpenBLAS's on 1024³ at this thread count."""
        cands = [(r, who) for r, who in ((self.ours("square_1024", threads), "our kernel"),
                                         (self.blas("square_1024", threads), "OpenBLAS")) if r]
        return max(cands) if cands else (None, None)

    def stream(self, threads):
        return rate(self.sf.get("stream_read/threads:%d" % threads), "bytes")

    def fma(self, threads):
        return rate(self.sf.get("fma_peak/threads:%d" % threads), "flops")


def gflops(x):
    return "–" if x is None else "%.1f GFLOP/s" % (x / 1e9)


def gbps(x):
    return "–" if x is None else "%.1f GB/s" % (x / 1e9)


def limits_table(lim, sf, context):
    kernel = context.get("gemm_kernel", "?")
    width = sf.get("fma_peak/threads:1", Figure()).counters.get("width_bits")
    print("### The host's limits (measured in this run)")
    print()
    print("| limit | 1 thread | all cores (%d) |" % ALL)
    print("|---|---|---|")
    shapes = (("square_1024", "1024 × 1024 × 1024"), ("gpt2_fc1_128", "128 × 768 × 3072 (GPT-2 fc1)"),
              ("base_fc1_64", "64 × 512 × 2048 (base fc1)"))
    for shape, text in shapes:
        print("| our GEMM (`core/base/gemm`, %s kernel), %s | %s | %s |"
              % (kernel, text, gflops(lim.ours(shape, 1)), gflops(lim.ours(shape, 0))))
        print("| OpenBLAS (`torch.mm`), %s | %s | %s |"
              % (text, gflops(lim.blas(shape, 1)), gflops(lim.blas(shape, 0))))
    fma_fig = sf.get("fma_peak/threads:1", Figure())
    mhz = fma_fig.counters.get("cpu_mhz")
    per_cycle = ""
    if mhz and lim.fma(1):
        per_cycle = " (≈ %.0f FLOPs per cycle at the %.0f MHz /proc/cpuinfo states)" % (lim.fma(1) / (mhz * 1e6), mhz)
    print("| FMA peak: register-resident loop, %s-bit vectors | %s%s | %s |"
          % (int(width) if width else "?", gflops(lim.fma(1)), per_cycle, gflops(lim.fma(0))))
    print("| streaming read: a float sum over 512 MiB | %s | %s |" % (gbps(lim.stream(1)), gbps(lim.stream(0))))
    beside = {}
    for name, fig in sf.items():
        n = fig.counters.get("threads")
        for r in fig.read_rates:
            if r and n:
                beside.setdefault(0 if n == ALL else int(n), []).append(r)

    def span(threads):
        rates = beside.get(threads)
        return "–" if not rates else "%.1f – %.1f GB/s" % (min(rates) / 1e9, max(rates) / 1e9)

    print("| streaming read between the decode steps, the faster way, lowest – highest over the runs (their floors) | %s | %s |"
          % (span(1), span(0)))
    c1, w1 = lim.compute(1)
    c0, w0 = lim.compute(0)
    print("| **compute limit**: the higher of our GEMM and OpenBLAS on 1024³ | **%s** (%s) | **%s** (%s) |"
          % (gflops(c1), w1 or "–", gflops(c0), w0 or "–"))
    print()


def main():
    workdir = sys.argv[1]
    sf, context = stepformer_figures(workdir)
    pt = peer_figures(workdir)
    lim = Limits(sf, pt)
    with open(os.path.join(workdir, "machine.txt")) as f:
        machine = f.read().strip().splitlines()
    n_rounds = len(rounds(workdir))

    # (figure, stepformer benchmark, peer key, threads (1 or 0 = all), kind, goal)
    # kind: "compute" (fraction of the compute limit) or "decode" (floor = bytes ÷ streaming rate).
    # goal: ("fraction", x) | ("floor", x) | ("speedup", one-thread stepformer key, x) | None
    rows = [
        ("small forward (d 128, 4 heads, 2+2 layers, d_ff 512, 32 tokens), recording on",
         "forward/small_recorded", "forward_small/threads:1", 1, "compute", ("fraction", 0.75)),
        ("base forward (d 512, 8 heads, 6+6 layers, d_ff 2048, 64 tokens), recording on",
         "forward/base_recorded", "forward_base/threads:1", 1, "compute", ("fraction", 0.90)),
        ("base forward, all cores",
         "forward/base_recorded_all_cores", "forward_base/threads:0", 0, "compute",
         ("speedup", "forward/base_recorded", 1.8)),
        ("GPT-2 small forward, 128 tokens",
         "forward_128/threads:1", "gpt2_forward_128/threads:1", 1, "compute", ("fraction", 0.90)),
        ("GPT-2 small forward, 128 tokens, all cores",
         "forward_128/threads:0", "gpt2_forward_128/threads:0", 0, "compute",
         ("speedup", "forward_128/threads:1", 1.8)),
        ("GPT-2 small forward, 1,024 tokens",
         "forward_1024/threads:1", "gpt2_forward_1024/threads:1", 1, "compute", ("fraction", 0.90)),
        ("GPT-2 small forward, 1,024 tokens, all cores",
         "forward_1024/threads:0", "gpt2_forward_1024/threads:0", 0, "compute",
         ("speedup", "forward_1024/threads:1", 1.8)),
        ("training step, copy task, d 128, 2+2 layers, batch 64, pre-LN",
         "Throughput/threads:1/pre:1", "train_step/threads:1/pre", 1, "compute", ("fraction", 0.80)),
        ("training step, same, 2 threads",
         "Throughput/threads:2/pre:1", "train_step/threads:2/pre", 2, "compute", ("fraction", 0.80)),
        ("cached decode step at t = 64, base",
         "step_cached/64", "decode_cached/64", 1, "decode", ("floor", 1.15)),
        ("GPT-2 small cached decode step at t = 129",
         "decode_step/threads:1", "gpt2_decode_step/threads:1", 1, "decode", ("floor", 1.15)),
        ("GPT-2 small cached decode step at t = 129, all cores",
         "decode_step/threads:0", "gpt2_decode_step/threads:0", 0, "decode", ("floor", 1.15)),
    ]
    for key, name in (("smollm2_135m", "SmolLM2-135M shape"), ("qwen25_05b", "Qwen2.5-0.5B shape")):
        rows += [
            ("%s forward, 128 tokens" % name, "llama_forward/%s/threads:1" % key,
             "llama_forward/%s/threads:1" % key, 1, "compute", ("fraction", 0.90)),
            ("%s forward, 128 tokens, all cores" % name, "llama_forward/%s/threads:0" % key,
             "llama_forward/%s/threads:0" % key, 0, "compute",
             ("speedup", "llama_forward/%s/threads:1" % key, 1.8)),
            ("%s cached decode step at t = 129 (GQA)" % name, "llama_decode/%s/threads:1" % key,
             "llama_decode/%s/threads:1" % key, 1, "decode", ("floor", 1.15)),
            ("%s cached decode step at t = 129 (GQA), all cores" % name, "llama_decode/%s/threads:0" % key,
             "llama_decode/%s/threads:0" % key, 0, "decode", ("floor", 1.15)),
            # The same folder widened to float32 on load: what keeping the BF16 matrices saves.
            ("%s forward, 128 tokens, weights widened to float32" % name, "llama_forward_f32/%s/threads:1" % key,
             "llama_forward/%s/threads:1" % key, 1, "compute", None),
            ("%s cached decode step at t = 129, weights widened to float32" % name,
             "llama_decode_f32/%s/threads:1" % key, "llama_decode/%s/threads:1" % key, 1, "decode", None),
            ("%s cached decode step at t = 129, weights widened to float32, all cores" % name,
             "llama_decode_f32/%s/threads:0" % key, "llama_decode/%s/threads:0" % key, 0, "decode", None),
        ]

    print("# Benchmarks: stepformer against this host's limits, beside PyTorch")
    print()
    print("Written by `scripts/bench.sh` (do not edit by hand). Each figure is a stepformer Google")
    print("Benchmark (`tests/bench/`) and its PyTorch twin (`tests/bench/peers/`), run in %d interleaved" % n_rounds)
    print("rounds (stepformer, PyTorch, stepformer, PyTorch, …); times are the **minimum / median** wall")
    print("time over the runs of all rounds. Random weights, batch 1 (training: 64), float32 (the BF16")
    print("hub folders' weight matrices are kept BF16 and widened in registers: `base/half.h`). The work")
    print("is counted from the shapes (matrix products: 2·m·n·k FLOPs, `stepper/cost.h`; a cached step")
    print("reads every weight matrix it multiplies by and its K/V rows: bytes). The rate is work ÷ the")
    print("minimum time; **of limit** is that rate as a fraction of this host's limit measured in the same")
    print("run (below): for compute figures the higher of our GEMM's and OpenBLAS's rate on a 1024³")
    print("product at the same thread count; for decode steps the step's bytes ÷ the streaming read rate")
    print("(the step's floor) divided by its time, the read rate measured between the steps of each run")
    print("(64 MiB after each step) at the same thread count: a shared host's memory bandwidth moves by")
    print("half within seconds, and the best run against its own floor counts. The read rate is the")
    print("faster of two ways of reading each thread's part, in alternate passes: one sequential stream")
    print("(a plain sum), and four quarters side by side, as the 16-bit product reads its rows")
    print("(`base/half.cpp`); on some hosts one core reads a fifth faster the second way. PyTorch ÷")
    print("stepformer compares minimum times (above 1: stepformer is faster). Every one-thread figure,")
    print("stepformer's and PyTorch's, and the one-thread limits run on one core (`BENCH_CPU`, named in the")
    print("threads line below): a shared host's cores differ from moment to moment, and a figure is a")
    print("fraction of the limit measured on its own core.")
    print()
    print("**Reading it across hosts.** Compare the *of limit* column between machines, not the PyTorch")
    print("ratio. The ratio mixes our code with the host and with the OpenBLAS kernel that host gets (Debian")
    print("12 ships OpenBLAS 0.3.21, which picks its kernels by CPU model): on a full-width AVX-512 core")
    print("newer than that release (two 512-bit FMA pipes, 64 single-precision FLOPs per cycle), such as Zen")
    print("5 (AMD family 26), OpenBLAS falls back to its AVX2 (Haswell) kernels while our kernel runs its")
    print("AVX-512 path, so PyTorch falls about 2× behind, and on Emerald Rapids (Intel family 6, model")
    print("207) to its SSE3 (Prescott) kernels, about 4.5× behind; on a core it knows, such as Ice Lake server (its")
    print("SkylakeX kernels), both run 512-bit code and OpenBLAS can lead on a large square product; on Zen")
    print("4, which executes a 512-bit FMA as two 256-bit halves (32 FLOPs per cycle), both reach about the")
    print("same rate; on an AVX2-only core both run 256-bit code. The fraction of the host's own limit — the")
    print("best large product either library reaches on that host, at the same thread count, and its")
    print("streaming read rate for decoding — says how much of the machine stepformer uses, whatever the")
    print("vector width and whichever library leads, and is the figure the goals are stated in. The FMA peak")
    print("row shows the width the build uses and what the cores deliver at it (a register-resident loop: the")
    print("ceiling no product reaches).")
    print()
    for line in machine:
        print("- " + line)
    print()
    limits_table(lim, sf, context)

    print("### Figures")
    print()
    print("| figure | threads | work | stepformer min / median | rate | of limit | PyTorch min / median "
          "| PyTorch ÷ stepformer | goal |")
    print("|---|---|---|---|---|---|---|---|---|")
    for figure, sk, pk, threads, kind, goal in rows:
        s, p = sf.get(sk), pt.get(pk)
        n_threads = ALL if threads == 0 else threads
        limit_threads = 0 if n_threads == ALL else n_threads
        if s is None and p is None:
            continue
        work, rate_text, frac, frac_text = "–", "–", None, "–"
        floor_ms = None
        if s is not None and kind == "compute":
            work = fmt_work(flops=s.counters.get("flops"))
            r = rate(s, "flops")
            limit = lim.compute(limit_threads)[0] if limit_threads in (0, 1) else None
            rate_text = gflops(r)
            if r and limit:
                frac = r / limit
                frac_text = "%.0f %%" % (100 * frac)
        elif s is not None and kind == "decode":
            nbytes = s.counters.get("bytes")
            work = fmt_work(nbytes=nbytes)
            if s.counters.get("weight_bits", 32) != 32:
                work += " (weights %d-bit)" % s.counters["weight_bits"]
            if s.counters.get("mha_bytes") and s.counters["mha_bytes"] != nbytes:
                kv, mha = s.counters["kv_bytes"], s.counters["mha_bytes"]
                work += ", K/V %.1f of them (a multi-head cache: %.1f MB, %.1f MB in all)" % (
                    kv / 1e6, (mha - nbytes + kv) / 1e6, mha / 1e6)
            r = rate(s, "bytes")
            bw = lim.stream(limit_threads)
            rate_text = gbps(r)
            runs = s.floor_runs(nbytes) if nbytes else []
            if runs:
                x, floor_ms, read, t = min(runs)
                frac = 1 / x
                frac_text = "%.0f %% (the best run: %s, its floor %s at %s read beside it)" % (
                    100 * frac, fmt_ms(t), fmt_ms(floor_ms), gbps(read))
            elif nbytes and bw:
                floor_ms = nbytes / bw * 1e3
                x = s.min / floor_ms
                frac = 1 / x
                frac_text = "%.0f %% (floor %s)" % (100 * frac, fmt_ms(floor_ms))
        ratio = "%.2f×" % (p.min / s.min) if s and p and s.times and p.times else "–"
        goal_text = ""
        if goal:
            if goal[0] == "fraction":
                goal_text = "≥ %.0f %% of the limit" % (100 * goal[1])
                if frac is not None:
                    goal_text += " ✓" if frac >= goal[1] else " ✗"
            elif goal[0] == "floor":
                goal_text = "≤ %.2f × its floor" % goal[1]
                if floor_ms:
                    x = 1 / frac
                    goal_text = "%.2f × floor; goal ≤ %.2f× %s" % (x, goal[1], "✓" if x <= goal[1] else "✗")
            elif goal[0] == "speedup":
                one = sf.get(goal[1])
                goal_text = "≥ %.1f × one core" % goal[2]
                if one and one.times and s and s.times:
                    x = one.min / s.min
                    goal_text = "%.2f × one core; goal ≥ %.1f× %s" % (x, goal[2], "✓" if x >= goal[2] else "✗")
        print("| %s | %d | %s | %s | %s | %s | %s | %s | %s |"
              % (figure, n_threads, work, fmt_pair(s), rate_text, frac_text, fmt_pair(p), ratio, goal_text))
    print()
    load_table(sf, pt)
    print("Goals (✓ met, ✗ not met in this run): forward passes ≥ 90 % of the compute limit (small ≥ 75 %),")
    print("training ≥ 80 %, a cached decoding step ≤ 1.15 × its floor, two cores ≥ 1.8 × one core on the")
    print("forward passes. Decode rows of grouped-query models count the K/V rows actually read (h_kv heads)")
    print("and give the bytes a multi-head cache of the same model would read beside them.")


def load_table(sf, pt):
    rows = [(k, name) for k, name in (("smollm2_135m", "SmolLM2-135M shape"), ("qwen25_05b", "Qwen2.5-0.5B shape"))
            if "llama_load/%s" % k in sf]
    if not rows:
        return
    print("### Opening a BF16 hub folder (a fresh process per load)")
    print()
    print("| model | BF16 file | float32 weights | weights as held | stepformer load min / median | peak RSS "
          "| RSS after load | PyTorch load min / median | PyTorch peak RSS | goal: no second resident copy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key, name in rows:
        s, p = sf["llama_load/%s" % key], pt.get("torch_load/%s" % key)
        c = s.counters
        held = c.get("held_MB", 0)  # missing: the goal shows ✗, not the float32 size
        extra = c.get("peak_rss_MB", 0) - held
        ok = extra <= 0.25 * c.get("file_MB", 0)
        print("| %s | %.0f MB | %.0f MB | %.0f MB | %s | %.0f MB | %.0f MB | %s | %s | peak − weights held = "
              "%.0f MB, ≤ ¼ of the file %s |"
              % (name, c.get("file_MB", 0), c.get("f32_MB", 0), held, fmt_pair(s), c.get("peak_rss_MB", 0),
                 c.get("rss_after_MB", 0), fmt_pair(p),
                 "%.0f MB" % p.counters["peak_rss_MB"] if p and "peak_rss_MB" in p.counters else "–",
                 extra, "✓" if ok else "✗"))
    print()
    print("The folder is opened for inference, as the explorer opens it. The BF16 file is mapped and")
    print("read tensor by tensor: the weight matrices (projections, the tied embedding) are copied as")
    print("stored and stay BF16, the norms and biases are widened to float32; the pages already read")
    print("are handed back as the loader goes (`io/mapped_file.h`), and each matrix is then rearranged")
    print("into the products' panels in place (`arrange_in_panels`, `base/half.h`), so the peak holds the")
    print("weights as held and about one tensor of the file. PyTorch's load widens everything")
    print("(`torch_llama.py --load`: the header parsed, each tensor viewed in the mapped file and")
    print("converted with `.float()`); its RSS includes the interpreter and the torch library. Each peak")
    print("is the loading process's own high-water mark (VmHWM).")
    print()


if __name__ == "__main__":
    main()

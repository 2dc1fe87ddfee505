"""PyTorch twin of tests/bench/host_limits_bench.cpp: OpenBLAS's matrix product through torch.mm.

    /usr/bin/python3 tests/bench/peers/torch_host_limits.py [--threads 1 0] [--repeats N] [--json PATH]

C = A·B, float32, for the same shapes as the stepformer benchmark: the 1024³ square product,
GPT-2 small's fc1 over 128 tokens ((128, 768)·(768, 3072)) and the base model's fc1 over 64
tokens ((64, 512)·(512, 2048)), with torch.mm writing into a preallocated output (out=), at each
thread count asked for (0 = every core). Debian's PyTorch runs its products on the system BLAS
(OpenBLAS with libopenblas0-openmp). Prints the minimum and median wall time per product.
"""

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_json import record  # noqa: E402
from bench_cpu import use_threads  # noqa: E402

SHAPES = {"square_1024": (1024, 1024, 1024), "gpt2_fc1_128": (128, 3072, 768),
          "base_fc1_64": (64, 2048, 512)}  # (m, n, k)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 0], help="0 = every core")
    ap.add_argument("--repeats", type=int, default=10, help="timed runs per figure")
    ap.add_argument("--json", default="", help="merge the figures into this JSON file")
    args = ap.parse_args()
    gen = torch.Generator().manual_seed(0)
    for threads in args.threads:
        n_threads = use_threads(torch, threads)
        for name, (m, n, k) in SHAPES.items():
            a, b = torch.rand(m, k, generator=gen), torch.rand(k, n, generator=gen)
            c = torch.empty(m, n)
            # ≈ 0.1 s of products per timed run, at least one
            torch.mm(a, b, out=c)
            t0 = time.perf_counter()
            torch.mm(a, b, out=c)
            inner = max(1, int(0.1 / max(time.perf_counter() - t0, 1e-6)))
            times = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                for _ in range(inner):
                    torch.mm(a, b, out=c)
                times.append((time.perf_counter() - t0) * 1e3 / inner)
            flops = 2 * m * n * k
            print("threads %d  %-13s min %8.3f ms  median %8.3f ms  %6.1f GFLOP/s"
                  % (n_threads, name, min(times), statistics.median(times), flops / min(times) / 1e6))
            record(args.json, "torch_mm/%s/threads:%d" % (name, threads), times, n_threads)


if __name__ == "__main__":
    main()

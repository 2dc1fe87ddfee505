"""Shared by the decoder peers (torch_gpt2.py, torch_llama.py), the twins of
tests/bench/decoder_timing.h: the timing loop, a forward pass and a cached decoding step timed
the same way, and the line each figure prints beside the JSON record scripts/bench_table.py reads."""

import statistics
import time

import torch

from results_json import record


def timed(fn, repeats):
    """fn run `repeats` times: each run's wall time in milliseconds (time.perf_counter)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def time_forward_and_step(forward, new_cache, ids, repeats, steps):
    """forward(ids, cache=None) gives the logits (n, V) of ids, appending to the cache when one is
    given; new_cache() an empty cache with a `length`. Returns the times of `repeats` forward
    passes over ids (after one warm-up) and of `steps` cached steps after ids as a prompt (after
    one untimed step), each rolled back so that every step is position len(ids) + 1."""
    forward(ids)  # warm-up
    fwd = timed(lambda: forward(ids), repeats)
    cache = new_cache()
    last = forward(ids, cache)[-1]
    nxt = torch.tensor([int(torch.argmax(last))])

    def step():
        int(torch.argmax(forward(nxt, cache)[-1]))
        cache.length -= 1  # roll back: every step is the same position

    step()
    return fwd, timed(step, steps)


def report(json_path, key, label, times, threads):
    """Prints a figure's minimum and median (label: its name as the script shows it) and records
    its times under key; nothing for a figure not timed."""
    if not times:
        return
    print("threads %d  %s min %9.3f ms  median %9.3f ms  (runs %d)"
          % (threads, label, min(times), statistics.median(times), len(times)))
    record(json_path, key, times, threads)

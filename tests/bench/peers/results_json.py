"""Shared by the PyTorch peers: `--json PATH` merges each figure's timings into one JSON file
that scripts/bench_table.py reads ({key: {"times_ms", "min_ms", "median_ms", "runs", "threads"}}).
A key recorded again in the same file (another round into the same file) keeps every run."""

import json
import os
import statistics


def record(path, key, times_ms, threads, **extra):
    """extra: further figures of the key (peak_rss_MB); a larger peak_rss_MB is kept."""
    if not path:
        return
    data = {}
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    times = data.get(key, {}).get("times_ms", []) + list(times_ms)
    old = dict(data.get(key, {}))
    data[key] = dict(times_ms=times, min_ms=min(times), median_ms=statistics.median(times),
                     runs=len(times), threads=threads)
    for k, v in extra.items():
        data[key][k] = max(v, old[k]) if k == "peak_rss_MB" and k in old else v
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, path)

"""Shared by the PyTorch peers: `--json PATH` merges each figure's timings into one JSON file
that scripts/bench_table.py reads ({key: {"min_ms", "median_ms", "runs", "threads"}})."""

import json
import os
import statistics


def record(path, key, times_ms, threads):
    if not path:
        return
    data = {}
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    data[key] = dict(min_ms=min(times_ms), median_ms=statistics.median(times_ms),
                     runs=len(times_ms), threads=threads)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, path)

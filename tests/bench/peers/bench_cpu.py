"""Shared by the PyTorch peers: the core their one-thread figures run on, as the stepformer side's
(tests/bench/bench_cpu.h). scripts/bench.sh names it in STEPFORMER_BENCH_CPU; unset, nothing is
pinned."""

import os

_STARTED = os.sched_getaffinity(0)


def use_threads(torch, threads):
    """torch.set_num_threads(threads, or every core for 0), the calling thread pinned to
    STEPFORMER_BENCH_CPU for one thread and on every core the process started with otherwise.
    Returns the thread count."""
    n = threads if threads > 0 else os.cpu_count()
    cpu = os.environ.get("STEPFORMER_BENCH_CPU", "")
    if cpu:
        if not cpu.isdigit() or int(cpu) not in _STARTED:
            raise SystemExit("STEPFORMER_BENCH_CPU: expected one of the process's cores %s; found '%s'"
                             % (sorted(_STARTED), cpu))
        os.sched_setaffinity(0, {int(cpu)} if n == 1 else _STARTED)
    torch.set_num_threads(n)
    return n

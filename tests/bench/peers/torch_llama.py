"""PyTorch twin of tests/bench/llama_bench.cpp: SmolLM2-135M- and Qwen2.5-0.5B-shaped decoders.

    /usr/bin/python3 tests/bench/peers/torch_llama.py [--threads 1 0] [--repeats N] [--steps N]
                                                      [--load DIR] [--json PATH] [MODEL ...]

Written from Hugging Face's LlamaForCausalLM / Qwen2ForCausalLM semantics in plain torch, eager,
no autograd, float32, batch 1, random weights of the same shapes (the work, not the values,
matters): RMSNorm (x · rsqrt(mean(x²) + ε) · w), q/k/v projections (Qwen2: with biases), rotary
embedding in the rotate_half layout (cos/sin of position · θ^(-2i/d_k)), grouped-query attention
through repeat_kv, causal softmax(q kᵀ/√d_k) v, o_proj, SwiGLU MLP down(silu(gate(x)) ⊙ up(x)),
final norm, the output projection tied to the embedding. Figures, at every thread count asked
for (0 = every core):
  forward 128   the decoder over 128 tokens, logits for every position;
  decode step   one cached step after a 128-token prompt (K/V cache of h_kv heads preallocated,
                appended in place, rolled back after each step), the tied projection and argmax.
--load DIR (the folders llama_bench writes, DIR/MODEL/model.safetensors): opening the BF16 file
in a fresh Python process per run — the header parsed, every tensor viewed in the mapped file
(torch.frombuffer) and widened with .float() — its wall time (after `import torch`) and the
process's peak RSS (its own VmHWM: interpreter and torch included).
"""

import argparse
import math
import os
import statistics
import subprocess
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decoder_timing import report, time_forward_and_step  # noqa: E402
from results_json import record  # noqa: E402
from bench_cpu import use_threads  # noqa: E402

PROMPT = 128
MODELS = {
    # hidden, layers, heads, kv heads, intermediate, vocab, rms eps, rope theta, qkv bias
    "smollm2_135m": dict(d=576, layers=30, heads=9, kv=3, ff=1536, vocab=49152, eps=1e-5,
                         theta=1e5, qkv_bias=False),
    "qwen25_05b": dict(d=896, layers=24, heads=14, kv=2, ff=4864, vocab=151936, eps=1e-6,
                       theta=1e6, qkv_bias=True),
}

LOAD_CHILD = r"""
import json, mmap, sys, time
import torch
path = sys.argv[1]
t0 = time.perf_counter()
with open(path, "rb") as f:
    mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
n = int.from_bytes(mm[:8], "little")
header = json.loads(mm[8:8 + n])
start = 8 + n
dtypes = {"BF16": (torch.bfloat16, 2), "F16": (torch.float16, 2), "F32": (torch.float32, 4)}
weights = {}
import warnings
warnings.simplefilter("ignore")  # frombuffer on a read-only mapping
for name, e in header.items():
    if name == "__metadata__":
        continue
    a, b = e["data_offsets"]
    dt, size = dtypes[e["dtype"]]
    t = torch.frombuffer(mm, dtype=dt, count=(b - a) // size, offset=start + a)
    weights[name] = t.reshape(e["shape"]).float()
secs = time.perf_counter() - t0
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print("%.6f %.1f" % (secs, hwm * 1024 / 1e6))
"""


def load_runs(folder, key, runs, json_path):
    path = os.path.join(folder, key, "model.safetensors")
    if not os.path.exists(path):
        print("%s: no %s (llama_bench writes it); load not timed" % (key, path))
        return
    times, peak = [], 0.0
    for _ in range(runs):
        p = subprocess.Popen([sys.executable, "-c", LOAD_CHILD, path], stdout=subprocess.PIPE)
        out = p.stdout.read()
        if p.wait() != 0:
            sys.exit("torch_llama.py: the load of %s failed" % path)
        secs, hwm = (float(v) for v in out.decode().split())
        times.append(secs * 1e3)
        peak = max(peak, hwm)
    print("%-13s load     min %9.1f ms  median %9.1f ms  peak RSS %.0f MB  (runs %d)"
          % (key, min(times), statistics.median(times), peak, len(times)))
    record(json_path, "torch_load/%s" % key, times, 1, peak_rss_MB=peak)


def make_params(m, gen):
    d, h, kv, ff = m["d"], m["heads"], m["kv"], m["ff"]
    dk = d // h

    def normal(*shape):
        return torch.randn(*shape, generator=gen) * 0.02

    def bias(n):
        return torch.zeros(n) if m["qkv_bias"] else None

    p = dict(embed=normal(m["vocab"], d), norm=torch.ones(d), layers=[])
    for _ in range(m["layers"]):
        p["layers"].append(dict(
            ln1=torch.ones(d), ln2=torch.ones(d),
            q=normal(h * dk, d), k=normal(kv * dk, d), v=normal(kv * dk, d), o=normal(d, h * dk),
            qb=bias(h * dk), kb=bias(kv * dk), vb=bias(kv * dk),
            gate=normal(ff, d), up=normal(ff, d), down=normal(d, ff)))
    return p


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(x, n_rep):
    """(kv, t, dk) -> (kv · n_rep, t, dk), each K/V head repeated for its group of query heads."""
    if n_rep == 1:
        return x
    kv, t, dk = x.shape
    return x[:, None, :, :].expand(kv, n_rep, t, dk).reshape(kv * n_rep, t, dk)


class Cache:
    def __init__(self, m, capacity):
        dk = m["d"] // m["heads"]
        self.k = [torch.zeros(m["kv"], capacity, dk) for _ in range(m["layers"])]
        self.v = [torch.zeros(m["kv"], capacity, dk) for _ in range(m["layers"])]
        self.length = 0


def forward(m, p, rope, ids, cache=None):
    """ids (n,) at positions cache.length ..; returns logits (n, V)."""
    n = ids.shape[0]
    d, h, kv = m["d"], m["heads"], m["kv"]
    dk = d // h
    pos0 = cache.length if cache else 0
    cos, sin = rope[0][pos0:pos0 + n], rope[1][pos0:pos0 + n]  # (n, dk)
    x = p["embed"][ids]
    for i, l in enumerate(p["layers"]):
        a = rms_norm(x, l["ln1"], m["eps"])
        q = F.linear(a, l["q"], l["qb"]).view(n, h, dk).transpose(0, 1)
        k = F.linear(a, l["k"], l["kb"]).view(n, kv, dk).transpose(0, 1)
        v = F.linear(a, l["v"], l["vb"]).view(n, kv, dk).transpose(0, 1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if cache:
            cache.k[i][:, pos0:pos0 + n] = k
            cache.v[i][:, pos0:pos0 + n] = v
            k, v = cache.k[i][:, :pos0 + n], cache.v[i][:, :pos0 + n]
        k, v = repeat_kv(k, h // kv), repeat_kv(v, h // kv)
        s = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(dk)  # (h, n, t)
        if n > 1:
            t = k.shape[1]
            mask = torch.ones(n, t, dtype=torch.bool).tril(diagonal=t - n)
            s = s.masked_fill(~mask, float("-inf"))
        o = torch.matmul(torch.softmax(s, dim=-1), v).transpose(0, 1).reshape(n, h * dk)
        x = x + F.linear(o, l["o"])
        f = rms_norm(x, l["ln2"], m["eps"])
        x = x + F.linear(F.silu(F.linear(f, l["gate"])) * F.linear(f, l["up"]), l["down"])
    if cache:
        cache.length += n
    return F.linear(rms_norm(x, p["norm"], m["eps"]), p["embed"])


def rope_tables(m, positions):
    dk = m["d"] // m["heads"]
    inv = 1.0 / (m["theta"] ** (torch.arange(0, dk, 2, dtype=torch.float32) / dk))
    freqs = torch.outer(torch.arange(positions, dtype=torch.float32), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 0], help="0 = every core")
    ap.add_argument("--repeats", type=int, default=3, help="timed forward passes")
    ap.add_argument("--steps", type=int, default=10, help="timed decode steps")
    ap.add_argument("--load", default="", help="time opening DIR/MODEL/model.safetensors (BF16)")
    ap.add_argument("--load-runs", type=int, default=0, help="fresh processes per model (default: --repeats)")
    ap.add_argument("--json", default="", help="merge the figures into this JSON file")
    ap.add_argument("models", nargs="*", default=list(MODELS))
    args = ap.parse_args()
    for key in args.models:
        m = MODELS[key]
        if args.load:
            load_runs(args.load, key, args.load_runs or args.repeats, args.json)
        gen = torch.Generator().manual_seed(0)
        p = make_params(m, gen)
        rope = rope_tables(m, PROMPT + 8)
        ids = torch.randint(4, m["vocab"], (PROMPT,), generator=gen)
        print("torch %s, %s shape: hidden %d, %d layers, %d heads, %d K/V heads, intermediate %d, "
              "vocab %d, float32, batch 1" % (torch.__version__, key, m["d"], m["layers"], m["heads"],
                                              m["kv"], m["ff"], m["vocab"]))
        with torch.no_grad():
            for threads in args.threads:
                n = use_threads(torch, threads)
                fwd, dec = time_forward_and_step(lambda x, cache=None: forward(m, p, rope, x, cache),
                                                 lambda: Cache(m, PROMPT + 8), ids, args.repeats, args.steps)
                for name, t in (("forward", fwd), ("decode", dec)):
                    report(args.json, "llama_%s/%s/threads:%d" % (name, key, threads), "%-13s %-8s" % (key, name),
                           t, n)
        del p


if __name__ == "__main__":
    main()

"""PyTorch twin of tests/bench/gpt2_bench.cpp: GPT-2 small shape, random weights, float32, batch 1.

    /usr/bin/python3 tests/bench/peers/torch_gpt2.py [--threads 1 0] [--repeats N] [--json PATH]

d_model 768, 12 heads, 12 layers, d_ff 3072, vocabulary 50257, n_ctx 1024, pre-LN, GELU (tanh),
learned positions, lm_head tied to wte. Written as Hugging Face's GPT2LMHeadModel computes it
(Conv1D weights stored (in, out) and applied with addmm, one c_attn product for Q, K and V, a
causal softmax over Q Kᵀ/√dk), with eager ops and no autograd. Two figures, each at every
thread count asked for (0 = every core):
  forward 128: the whole model over 128 tokens, logits for every position;
  forward 1024: the same over 1,024 tokens (n_ctx), --long-repeats runs after one warm-up (0: not timed);
  decode step: one cached step after a 128-token prompt (K/V cache preallocated for n_ctx,
               appended in place), the tied output projection and argmax.
Prints the minimum and the median wall time (time.perf_counter) in milliseconds.
"""

import argparse
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decoder_timing import report, time_forward_and_step, timed  # noqa: E402
from bench_cpu import use_threads  # noqa: E402

D, HEADS, LAYERS, DFF, VOCAB, NCTX, PROMPT = 768, 12, 12, 3072, 50257, 1024, 128


def make_params(gen):
    def normal(*shape):
        return torch.randn(*shape, generator=gen) * 0.02

    p = dict(wte=normal(VOCAB, D), wpe=normal(NCTX, D), lnf_w=torch.ones(D), lnf_b=torch.zeros(D), h=[])
    for _ in range(LAYERS):
        p["h"].append(dict(
            ln1_w=torch.ones(D), ln1_b=torch.zeros(D), ln2_w=torch.ones(D), ln2_b=torch.zeros(D),
            attn_w=normal(D, 3 * D), attn_b=torch.zeros(3 * D),      # Conv1D: (in, out)
            proj_w=normal(D, D), proj_b=torch.zeros(D),
            fc_w=normal(D, DFF), fc_b=torch.zeros(DFF), fc2_w=normal(DFF, D), fc2_b=torch.zeros(D)))
    return p


class Cache:
    def __init__(self):
        self.k = [torch.zeros(HEADS, NCTX, D // HEADS) for _ in range(LAYERS)]
        self.v = [torch.zeros(HEADS, NCTX, D // HEADS) for _ in range(LAYERS)]
        self.length = 0


def forward(p, ids, cache=None):
    """ids (n,) at positions cache.length ..; returns logits (n, V)."""
    n = ids.shape[0]
    pos0 = cache.length if cache else 0
    dk = D // HEADS
    x = p["wte"][ids] + p["wpe"][pos0:pos0 + n]
    for i, l in enumerate(p["h"]):
        a = F.layer_norm(x, (D,), l["ln1_w"], l["ln1_b"], 1e-5)
        qkv = torch.addmm(l["attn_b"], a, l["attn_w"])                    # (n, 3d)
        q, k, v = (t.reshape(n, HEADS, dk).transpose(0, 1) for t in qkv.split(D, dim=1))
        if cache:
            cache.k[i][:, pos0:pos0 + n] = k
            cache.v[i][:, pos0:pos0 + n] = v
            k, v = cache.k[i][:, :pos0 + n], cache.v[i][:, :pos0 + n]
        s = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(dk)            # (h, n, t)
        if n > 1:
            t = k.shape[1]
            mask = torch.ones(n, t, dtype=torch.bool).tril(diagonal=t - n)
            s = s.masked_fill(~mask, float("-inf"))
        o = torch.matmul(torch.softmax(s, dim=-1), v).transpose(0, 1).reshape(n, D)
        x = x + torch.addmm(l["proj_b"], o, l["proj_w"])
        f = F.layer_norm(x, (D,), l["ln2_w"], l["ln2_b"], 1e-5)
        f = F.gelu(torch.addmm(l["fc_b"], f, l["fc_w"]), approximate="tanh")
        x = x + torch.addmm(l["fc2_b"], f, l["fc2_w"])
    if cache:
        cache.length += n
    x = F.layer_norm(x, (D,), p["lnf_w"], p["lnf_b"], 1e-5)
    return torch.matmul(x, p["wte"].t())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 0], help="0 = every core")
    ap.add_argument("--repeats", type=int, default=5, help="timed forward passes")
    ap.add_argument("--steps", type=int, default=30, help="timed decode steps")
    ap.add_argument("--long-repeats", type=int, default=0, help="timed 1,024-token forward passes")
    ap.add_argument("--json", default="", help="merge the figures into this JSON file")
    args = ap.parse_args()
    gen = torch.Generator().manual_seed(0)
    p = make_params(gen)
    ids = torch.randint(4, VOCAB, (PROMPT,), generator=gen)
    print("torch %s, GPT-2 small shape: d_model %d, %d heads, %d layers, d_ff %d, vocab %d, "
          "n_ctx %d, float32, batch 1" % (torch.__version__, D, HEADS, LAYERS, DFF, VOCAB, NCTX))
    with torch.no_grad():
        for threads in args.threads:
            n = use_threads(torch, threads)
            fwd, dec = time_forward_and_step(lambda x, cache=None: forward(p, x, cache), Cache, ids,
                                             args.repeats, args.steps)
            long_ids = torch.randint(4, VOCAB, (NCTX,), generator=gen)
            if args.long_repeats:
                forward(p, long_ids)  # warm-up, as time_forward_and_step's
            fwd_long = timed(lambda: forward(p, long_ids), args.long_repeats)
            for name, t in (("forward_128", fwd), ("forward_1024", fwd_long), ("decode_step", dec)):
                report(args.json, "gpt2_%s/threads:%d" % (name, threads), "%-12s" % name, t, n)


if __name__ == "__main__":
    main()

"""PyTorch peer benchmark: per-token greedy decoding time, base configuration
(d_model 512, 8 heads, 6+6 layers, d_ff 2048, pre-LN relu sinusoidal, 64 source tokens,
vocab 1000), batch 1, one thread, float32, no grad.

    /usr/bin/python3 tests/bench/peers/torch_decode.py [--runs N] [--vocab V] [--steps 8 32 ..]
                                                       [--json PATH]

"Step t" is the production of the t-th output token: the decoder input is then t tokens long
(<s> plus t-1 generated tokens).  Two strategies:
  kv-cache: a hand-written cache of each decoder layer's self-attention K/V (preallocated,
            filled one row per step) and of the cross-attention K/V (computed once from the
            encoder output); a step runs one row through the decoder + generator + argmax.
  full:     recompute the whole decoder over the t-token prefix (reference_model.decode,
            cross-attention K/V included), then generator on the last row + argmax.
The encoder runs once per sequence and is not part of a step.  Greedy decoding ignores </s>
so that every run reaches 256 steps.  The two strategies are checked to produce the same
tokens and (to float32 rounding) the same logits.
"""

import argparse
import math
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "reference"))
sys.path.insert(0, HERE)
import reference_model as rm  # noqa: E402
from torch_forward import CONFIGS, make_config  # noqa: E402
from results_json import record  # noqa: E402
from bench_cpu import use_threads  # noqa: E402

STEPS = (8, 32, 64, 128, 256)


class KVDecoder:
    """Incremental decoder for one sequence (batch 1)."""

    def __init__(self, cfg, params, memory, src_ids, max_steps):
        self.cfg, self.p = cfg, params
        d, h = cfg["d_model"], cfg["n_heads"]
        self.h, self.dk = h, d // h
        self.sqrt_d = math.sqrt(d)
        self.pe = rm.sinusoidal_positions(max_steps, d, dtype=torch.float32)
        spad = rm.special_ids(cfg["src_vocab"])["<pad>"]
        self.cross_allowed = (src_ids != spad)[None, :]
        self.self_k = [torch.empty(h, max_steps, self.dk) for _ in range(cfg["n_decoder_layers"])]
        self.self_v = [torch.empty(h, max_steps, self.dk) for _ in range(cfg["n_decoder_layers"])]
        self.cross_k, self.cross_v = [], []
        for i in range(cfg["n_decoder_layers"]):
            pre = "decoder.layers.%d.cross_attn" % i
            self.cross_k.append(rm.split_heads(rm.project(params, pre + ".k_proj", memory), h))
            self.cross_v.append(rm.split_heads(rm.project(params, pre + ".v_proj", memory), h))
        self.t = 0

    def step(self, token):
        """Feed one token (at position self.t); return the logits row for the next token."""
        cfg, p, t = self.cfg, self.p, self.t
        x = p["tgt_embed.weight"][token][None, :] * self.sqrt_d + self.pe[t][None, :]
        self_allowed = torch.ones(1, t + 1, dtype=torch.bool)
        for i in range(cfg["n_decoder_layers"]):
            pre = "decoder.layers.%d" % i

            def self_attn(y, i=i, pre=pre):
                q = rm.split_heads(rm.project(p, pre + ".self_attn.q_proj", y), self.h)
                self.self_k[i][:, t] = rm.split_heads(
                    rm.project(p, pre + ".self_attn.k_proj", y), self.h)[:, 0]
                self.self_v[i][:, t] = rm.split_heads(
                    rm.project(p, pre + ".self_attn.v_proj", y), self.h)[:, 0]
                heads, _, _ = rm.attend(q, self.self_k[i][:, :t + 1], self.self_v[i][:, :t + 1],
                                        self_allowed)
                return rm.project(p, pre + ".self_attn.o_proj", rm.merge_heads(heads))

            def cross_attn(y, i=i, pre=pre):
                q = rm.split_heads(rm.project(p, pre + ".cross_attn.q_proj", y), self.h)
                heads, _, _ = rm.attend(q, self.cross_k[i], self.cross_v[i], self.cross_allowed)
                return rm.project(p, pre + ".cross_attn.o_proj", rm.merge_heads(heads))

            x = rm.sublayer(cfg, p, pre + ".norm1", x, self_attn)
            x = rm.sublayer(cfg, p, pre + ".norm2", x, cross_attn)
            x = rm.sublayer(cfg, p, pre + ".norm3", x,
                            lambda y, pre=pre: rm.feed_forward(cfg, p, pre + ".ffn", y))
        if cfg["norm"] == "pre":
            x = rm.layer_norm(p, "decoder.norm", x)
        self.t += 1
        return rm.generate_logits(cfg, p, x)[0]


def full_step(cfg, params, memory, src_ids, prefix):
    y = rm.decode(cfg, params, prefix, memory, src_ids)
    return rm.generate_logits(cfg, params, y[-1:])[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9, help="greedy runs for the kv-cache timing")
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--src-tokens", type=int, default=64)
    ap.add_argument("--steps", type=int, nargs="*", default=list(STEPS), help="steps reported")
    ap.add_argument("--json", default="", help="merge the figures into this JSON file")
    args = ap.parse_args()
    steps = sorted(args.steps)
    use_threads(torch, 1)
    spec = CONFIGS["base"]
    max_steps = max(steps)
    cfg = make_config(spec, args.vocab, max_len=max_steps + 1)
    gen = torch.Generator().manual_seed(0)
    params = rm.init_params(cfg, generator=gen)
    src = torch.randint(4, args.vocab, (args.src_tokens,), generator=gen)
    bos = rm.special_ids(cfg["tgt_vocab"])["<s>"]
    print("torch %s, threads %d, float32, batch 1, base: d_model %d heads %d layers %d+%d "
          "d_ff %d, %d source tokens, vocab %d"
          % (torch.__version__, torch.get_num_threads(), cfg["d_model"], cfg["n_heads"],
             cfg["n_encoder_layers"], cfg["n_decoder_layers"], cfg["d_ff"], args.src_tokens,
             args.vocab))

    with torch.no_grad():
        t0 = time.perf_counter()
        memory = rm.encode(cfg, params, src)
        enc_ms = (time.perf_counter() - t0) * 1e3

        # ---- kv-cache greedy runs
        per_step = [[] for _ in range(max_steps)]
        setup_ms, total_ms = [], []
        tokens = logits_kv = None
        for run in range(args.runs + 1):  # run 0 is a warm-up
            t0 = time.perf_counter()
            dec = KVDecoder(cfg, params, memory, src, max_steps)
            t1 = time.perf_counter()
            toks, rows = [bos], []
            for s in range(max_steps):
                a = time.perf_counter()
                row = dec.step(toks[-1])
                nxt = int(torch.argmax(row))
                b = time.perf_counter()
                toks.append(nxt)
                rows.append(row)
                if run > 0:
                    per_step[s].append((b - a) * 1e3)
            if run > 0:
                setup_ms.append((t1 - t0) * 1e3)
                total_ms.append((time.perf_counter() - t0) * 1e3)
            tokens, logits_kv = toks, rows

        # ---- full recomputation at the reported steps
        full = {}
        for s in steps:
            prefix = torch.tensor(tokens[:s], dtype=torch.long)
            reps = 7 if s <= 64 else 3
            times = []
            for r in range(reps + 1):
                a = time.perf_counter()
                row = full_step(cfg, params, memory, src, prefix)
                nxt = int(torch.argmax(row))
                b = time.perf_counter()
                if r > 0:
                    times.append((b - a) * 1e3)
            assert nxt == tokens[s], ("full recomputation disagrees with kv-cache", s)
            diff = float((row - logits_kv[s - 1]).abs().max())
            assert diff < 1e-3, ("logits differ", s, diff)
            full[s] = (statistics.median(times), diff)

    print("encoder (once per sequence): %.2f ms; kv-cache setup (cross K/V): %.2f ms"
          % (enc_ms, statistics.median(setup_ms)))
    print("%6s %16s %16s %12s" % ("step", "kv-cache ms", "full-recomp ms", "max|dlogit|"))
    for s in steps:
        print("%6d %16.3f %16.3f %12.1e" % (s, statistics.median(per_step[s - 1]), full[s][0],
                                           full[s][1]))
        record(args.json, "decode_cached/%d" % s, per_step[s - 1], 1)
    print("kv-cache greedy, %d tokens total (setup included): median %.1f ms over %d runs"
          % (max_steps, statistics.median(total_ms), args.runs))


if __name__ == "__main__":
    main()

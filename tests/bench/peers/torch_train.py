"""PyTorch peer for tests/bench/train_bench.cpp: training throughput on the copy task.

    /usr/bin/python3 tests/bench/peers/torch_train.py [--threads 1 2] [--seconds 20] [--steps-to-99]
                                                      [--norms pre post] [--json PATH]

Same configuration as the C++ benchmark: d_model 128, 4 heads, 2+2 layers, d_ff 512, ReLU,
sinusoidal positions, pre-LN or post-LN (torch.nn.Transformer, norm_first), batch 64 of copy
sequences of length 10 over 7 symbols (vocabulary 11 with <pad> <s> </s> <unk>), decoder input
<s> y1..y10, targets y1..y10 </s>: 11 scored target tokens per sequence, 704 per step. No dropout,
Adam (β 0.9/0.98, ε 1e-9) at a constant 1e-3, no label smoothing, float32. Prints target tokens/s
(wall clock, after 5 warm-up steps), and with --steps-to-99 the steps until greedy decoding
reaches 99 % exact match on 200 fresh examples (checked every 10 steps, median over 5 seeds).
"""

import argparse
import math
import statistics
import time

import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_json import record  # noqa: E402
from bench_cpu import use_threads  # noqa: E402

V, PAD, BOS, EOS = 11, 0, 1, 2
SYMBOLS = list(range(4, 11))
LENGTH, BATCH = 10, 64


class Model(nn.Module):
    def __init__(self, norm_first):
        super().__init__()
        d = 128
        self.d = d
        self.src_embed = nn.Embedding(V, d)
        self.tgt_embed = nn.Embedding(V, d)
        self.transformer = nn.Transformer(d_model=d, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                                          dim_feedforward=512, dropout=0.0, batch_first=True,
                                          norm_first=norm_first)
        self.generator = nn.Linear(d, V)
        pe = torch.zeros(64, d)
        pos = torch.arange(64).unsqueeze(1).float()
        div = torch.exp(torch.arange(0, d, 2).float() * (-math.log(10000.0) / d))
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def embed(self, table, ids):
        return table(ids) * math.sqrt(self.d) + self.pe[: ids.shape[1]]

    def forward(self, src, tgt_in):
        m = tgt_in.shape[1]
        causal = torch.triu(torch.full((m, m), float("-inf")), diagonal=1)
        y = self.transformer(self.embed(self.src_embed, src), self.embed(self.tgt_embed, tgt_in), tgt_mask=causal)
        return self.generator(y)


def batch(gen, n=BATCH):
    src = torch.tensor(SYMBOLS)[torch.randint(0, len(SYMBOLS), (n, LENGTH), generator=gen)]
    tgt_in = torch.cat([torch.full((n, 1), BOS), src], dim=1)
    tgt_y = torch.cat([src, torch.full((n, 1), EOS)], dim=1)
    return src, tgt_in, tgt_y


def train_step(model, opt, gen):
    src, tgt_in, tgt_y = batch(gen)
    logits = model(src, tgt_in)
    loss = nn.functional.cross_entropy(logits.reshape(-1, V), tgt_y.reshape(-1), ignore_index=PAD)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return tgt_y.numel()


@torch.no_grad()
def exact_match(model, gen, n=200):
    src, _, tgt_y = batch(gen, n)
    out = torch.full((n, 1), BOS)
    for _ in range(LENGTH + 1):
        nxt = model(src, out)[:, -1].argmax(-1, keepdim=True)
        out = torch.cat([out, nxt], dim=1)
    return (out[:, 1:] == tgt_y).all(dim=1).float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--steps-to-99", action="store_true")
    ap.add_argument("--norms", nargs="*", default=["pre", "post"], choices=["pre", "post"])
    ap.add_argument("--json", default="", help="merge the step times into this JSON file")
    args = ap.parse_args()
    print("torch %s, copy task: d_model 128, 4 heads, 2+2 layers, d_ff 512, batch 64, length 10, vocab 11"
          % torch.__version__)
    for threads in args.threads:
        use_threads(torch, threads)
        for norm_first in [n == "pre" for n in args.norms]:
            torch.manual_seed(1)
            model = Model(norm_first)
            opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
            gen = torch.Generator().manual_seed(1)
            for _ in range(5):
                train_step(model, opt, gen)
            tokens, steps, t0, c0 = 0, 0, time.perf_counter(), time.process_time()
            step_ms = []
            while time.perf_counter() - t0 < args.seconds:
                a = time.perf_counter()
                tokens += train_step(model, opt, gen)
                step_ms.append((time.perf_counter() - a) * 1e3)
                steps += 1
            el, cpu = time.perf_counter() - t0, time.process_time() - c0
            # On a shared machine the wall clock includes waiting for a core; the process CPU time
            # does not (with one thread it is the time the step really took).
            print("threads %d %s-LN: %.0f target tokens/s wall, %.2f steps/s (%d steps); "
                  "%.1f ms CPU per step, %.0f target tokens per CPU-second"
                  % (threads, "pre" if norm_first else "post", tokens / el, steps / el, steps,
                     1e3 * cpu / steps, tokens / cpu))
            record(args.json, "train_step/threads:%d/%s" % (threads, "pre" if norm_first else "post"),
                   step_ms, threads)
    if args.steps_to_99:
        use_threads(torch, args.threads[-1])
        for norm_first in (True, False):
            reached = []
            for seed in range(1, 6):
                torch.manual_seed(seed)
                model = Model(norm_first)
                opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
                gen, egen = torch.Generator().manual_seed(seed), torch.Generator().manual_seed(1000 + seed)
                step = 0
                while step < 3000:
                    train_step(model, opt, gen)
                    step += 1
                    if step % 10 == 0 and exact_match(model, egen) >= 0.99:
                        break
                reached.append(step)
            print("%s-LN steps to 99%% exact match: median %d, all %s"
                  % ("pre" if norm_first else "post", statistics.median(reached), reached))


if __name__ == "__main__":
    main()

"""PyTorch peer benchmark: full encoder-decoder forward of the reference model (batch 1,
one thread, no grad, float32): embeddings + encoder + decoder + generator + log_softmax.

    /usr/bin/python3 tests/bench/peers/torch_forward.py [--repeats N] [--vocab V] [--threads 1 0]
                                                        [--json PATH] [small] [base]

Configurations (random weights, random non-pad tokens):
  small: d_model 128, 4 heads, 2+2 layers, d_ff 512,  32 source / 32 target tokens
  base:  d_model 512, 8 heads, 6+6 layers, d_ff 2048, 64 source / 64 target tokens
Prints the median wall time in milliseconds (time.perf_counter) over repeated runs, for each
thread count asked for (default one; 0 = every core).
"""

import argparse
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "reference"))
sys.path.insert(0, HERE)
import reference_model as rm  # noqa: E402
from results_json import record  # noqa: E402
from bench_cpu import use_threads  # noqa: E402

CONFIGS = {
    "small": dict(d_model=128, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=512,
                  tokens=32, repeats=200),
    "base": dict(d_model=512, n_heads=8, n_encoder_layers=6, n_decoder_layers=6, d_ff=2048,
                 tokens=64, repeats=30),
}


def make_config(spec, vocab_size, max_len=512):
    words = ["w%d" % i for i in range(vocab_size - 4)]
    vocab = ["<pad>", "<s>", "</s>", "<unk>"] + words
    return rm.validate_config(dict(
        arch="encoder-decoder", d_model=spec["d_model"], n_heads=spec["n_heads"],
        n_encoder_layers=spec["n_encoder_layers"], n_decoder_layers=spec["n_decoder_layers"],
        d_ff=spec["d_ff"], max_len=max_len, norm="pre", activation="relu",
        positional="sinusoidal", share_embeddings=False, src_vocab=vocab, tgt_vocab=vocab))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=0, help="override repeat count")
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--threads", type=int, nargs="*", default=[1], help="0 = every core")
    ap.add_argument("--json", default="", help="merge the figures into this JSON file")
    ap.add_argument("configs", nargs="*", default=list(CONFIGS))
    args = ap.parse_args()
    for threads in args.threads:
        use_threads(torch, threads)
        run(args, threads)


def run(args, threads):
    print("torch %s, threads %d, float32, batch 1, vocab %d, pre-LN relu sinusoidal"
          % (torch.__version__, torch.get_num_threads(), args.vocab))
    for name in args.configs:
        spec = CONFIGS[name]
        cfg = make_config(spec, args.vocab)
        gen = torch.Generator().manual_seed(0)
        params = rm.init_params(cfg, generator=gen)
        n = spec["tokens"]
        src = torch.randint(4, args.vocab, (n,), generator=gen)
        tgt = torch.randint(4, args.vocab, (n,), generator=gen)
        tgt[0] = rm.special_ids(cfg["tgt_vocab"])["<s>"]
        repeats = args.repeats or spec["repeats"]
        times = []
        with torch.no_grad():
            for _ in range(3):  # warm-up
                rm.forward(cfg, params, src, tgt)
            for _ in range(repeats):
                t0 = time.perf_counter()
                out = rm.forward(cfg, params, src, tgt)
                times.append((time.perf_counter() - t0) * 1e3)
        assert torch.isfinite(out["log_probs"]).all()
        print("%-5s d_model %4d heads %d layers %d+%d d_ff %4d tokens %d+%d: "
              "median %.3f ms  (min %.3f, runs %d)"
              % (name, cfg["d_model"], cfg["n_heads"], cfg["n_encoder_layers"],
                 cfg["n_decoder_layers"], cfg["d_ff"], n, n, statistics.median(times),
                 min(times), repeats))
        record(args.json, "forward_%s/threads:%d" % (name, threads), times, torch.get_num_threads())


if __name__ == "__main__":
    main()

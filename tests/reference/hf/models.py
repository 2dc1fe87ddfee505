"""Independent PyTorch references for three Hugging Face hub architectures.

* GPT-2   (GPT2LMHeadModel): decoder-only, pre-LN, learned positions, tanh-GELU, lm_head = wte.
* Marian  (MarianMTModel, opus-mt): encoder-decoder, post-LN, fixed sinusoidal positions in
          Marian's split layout, embeddings x sqrt(d), shared embeddings, final_logits_bias.
* BERT    (BertModel / BertForMaskedLM): encoder-only, post-LN, word + position + token-type
          embeddings followed by LayerNorm, erf-GELU, padding mask, MLM head tied to the words.

Written from the papers and the config.json semantics with explicit ops on a plain
``{hub tensor name: tensor}`` dict (no nn.Module, no transformers), so that the numbers the
C++ core must reproduce do not come from the C++ code or from one library's implementation.
Batch size 1: ids are 1-D.  Every function takes an optional ``trace`` dict that receives
per-layer attention ``.scores`` (Q K^T / sqrt(dk) before masking, (h, n_q, n_k)) and
``.weights`` (softmax, masked keys exactly 0, (h, n_q, n_k)) under the stepformer trace names
(docs/trace-names.md): ``encoder.layers.{i}.self_attn``, ``decoder.layers.{i}.self_attn``,
``decoder.layers.{i}.cross_attn``, plus ``encoder.output`` / ``decoder.output``.

The dtype of the computation is the dtype of the parameters (see ``to_dtype``): the fixture
generator runs float64 from float32 weights and also float32 to measure round-off.
"""

import math
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F


# --------------------------------------------------------------------------- shared pieces

def to_dtype(params, dtype):
    """Copy of a parameter dict with floating tensors cast to dtype (integer buffers kept)."""
    return OrderedDict((k, v.to(dtype) if v.is_floating_point() else v) for k, v in params.items())


def activation(name, x):
    """config.json activation names -> function."""
    if name == "relu":
        return torch.relu(x)
    if name in ("swish", "silu"):
        return x * torch.sigmoid(x)
    if name == "gelu":                          # exact: x * Phi(x)
        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
    if name in ("gelu_new", "gelu_pytorch_tanh"):  # GPT-2's tanh approximation
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    raise ValueError("unsupported activation %r" % name)


def layer_norm(x, w, b, eps):
    """Biased variance, eps inside the sqrt (as torch.nn.LayerNorm and TF BERT)."""
    mu = x.mean(dim=-1, keepdim=True)
    var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def masked_softmax(scores, allowed):
    """Softmax over the last axis restricted to allowed keys; disallowed weights are exactly 0.
    (HF adds finfo.min to disallowed scores, which gives the same exact zeros after exp.)"""
    allowed = allowed.expand_as(scores)
    neg = torch.full_like(scores, float("-inf"))
    m = torch.where(allowed, scores, neg).amax(dim=-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.where(allowed, torch.exp(scores - m), torch.zeros_like(scores))
    s = e.sum(dim=-1, keepdim=True)
    return e / torch.where(s > 0, s, torch.ones_like(s))


def attention(q, k, v, n_heads, allowed, trace=None, name=None):
    """q (n_q, d), k/v (n_k, d) already projected; head j uses columns [j*dk, (j+1)*dk).
    allowed (n_q, n_k) bool.  Returns the merged heads (n_q, d) before the output projection."""
    n_q, d = q.shape
    dk = d // n_heads
    qh = q.reshape(n_q, n_heads, dk).transpose(0, 1)         # (h, n_q, dk)
    kh = k.reshape(-1, n_heads, dk).transpose(0, 1)          # (h, n_k, dk)
    vh = v.reshape(-1, n_heads, dk).transpose(0, 1)
    scores = qh @ kh.transpose(1, 2) / math.sqrt(dk)         # (h, n_q, n_k)
    weights = masked_softmax(scores, allowed[None])
    if trace is not None:
        trace[name + ".scores"] = scores
        trace[name + ".weights"] = weights
    return (weights @ vh).transpose(0, 1).reshape(n_q, d)


def _put(trace, name, x):
    if trace is not None:
        trace[name] = x


def causal(n):
    return torch.ones(n, n, dtype=torch.bool).tril()


def linear(x, P, prefix):
    """nn.Linear layout: weight (out, in)."""
    return F.linear(x, P[prefix + ".weight"], P[prefix + ".bias"])


def conv1d(x, P, prefix):
    """GPT-2 Conv1D layout: weight (in, out), y = x W + b."""
    return x @ P[prefix + ".weight"] + P[prefix + ".bias"]


def strip_prefix(params, prefix):
    """Drop a leading 'prefix' from every name that has it (e.g. 'transformer.', 'bert.')."""
    return OrderedDict((k[len(prefix):] if k.startswith(prefix) else k, v)
                       for k, v in params.items())


# --------------------------------------------------------------------------- GPT-2

def gpt2_forward(cfg, P, ids, trace=None):
    """cfg: GPT-2 config.json dict.  P: hub names ('wte.weight', 'h.0.attn.c_attn.weight', ...;
    a 'transformer.' prefix is accepted).  ids (n,) long.

        x = wte[ids] + wpe[0..n)
        per block: x += c_proj(attn(ln_1(x)));  x += mlp(ln_2(x))
        logits = ln_f(x) wte^T                      (lm_head tied to wte)

    c_attn.weight is (d, 3d): columns [0,d) = Q, [d,2d) = K, [2d,3d) = V."""
    P = strip_prefix(P, "transformer.")
    d, h, eps = cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"]
    act = cfg.get("activation_function", "gelu_new")
    n = ids.shape[0]
    if n > cfg["n_positions"]:
        raise ValueError("sequence longer than n_positions")
    x = P["wte.weight"][ids] + P["wpe.weight"][:n]
    _put(trace, "decoder.embed.sum", x)
    allowed = causal(n)
    for i in range(cfg["n_layer"]):
        p = "h.%d." % i
        a = layer_norm(x, P[p + "ln_1.weight"], P[p + "ln_1.bias"], eps)
        q, k, v = conv1d(a, P, p + "attn.c_attn").split(d, dim=-1)
        a = attention(q, k, v, h, allowed, trace, "decoder.layers.%d.self_attn" % i)
        x = x + conv1d(a, P, p + "attn.c_proj")
        m = layer_norm(x, P[p + "ln_2.weight"], P[p + "ln_2.bias"], eps)
        x = x + conv1d(activation(act, conv1d(m, P, p + "mlp.c_fc")), P, p + "mlp.c_proj")
        _put(trace, "decoder.layers.%d.ffn_block.output" % i, x)
    x = layer_norm(x, P["ln_f.weight"], P["ln_f.bias"], eps)
    lm = P.get("lm_head.weight", P["wte.weight"])           # (V, d)
    logits = x @ lm.T
    if trace is not None:
        trace["decoder.output"] = x
    return OrderedDict([("decoder.output", x), ("logits", logits)])


# --------------------------------------------------------------------------- Marian

def marian_positions(n_pos, d):
    """Marian's fixed table (n_pos, d), computed in float64:
        angle[t, k] = t / 10000^(2k/d),  k = 0 .. ceil(d/2)-1
        table[t, 0:ceil(d/2)]  = sin(angle[t, :])        (all sines first)
        table[t, ceil(d/2):d]  = cos(angle[t, :floor(d/2)])  (then all cosines)
    i.e. NOT interleaved (the Vaswani / fairseq 'interleaved' form puts sin/cos in even/odd
    columns).  transformers builds it in float64 numpy then stores it as float32."""
    half = (d + 1) // 2
    t = np.arange(n_pos, dtype=np.float64)[:, None]
    k = np.arange(half, dtype=np.float64)[None, :]
    angle = t / np.power(10000.0, 2.0 * k / d)
    return torch.from_numpy(np.concatenate([np.sin(angle), np.cos(angle[:, :d // 2])], axis=1))


def marian_embed_weights(cfg, P):
    """(encoder table, decoder table, lm_head (V_tgt, d)) from whichever names the file has."""
    shared = P.get("model.shared.weight")
    enc = P.get("model.encoder.embed_tokens.weight", shared)
    dec = P.get("model.decoder.embed_tokens.weight", shared)
    if cfg.get("share_encoder_decoder_embeddings", True) and shared is not None:
        enc = dec = shared
    lm = P.get("lm_head.weight", dec) if not cfg.get("tie_word_embeddings", True) else dec
    return enc, dec, lm


def marian_forward(cfg, P, src_ids, tgt_ids, trace=None, src_mask=None):
    """cfg: Marian config.json dict; P: MarianMTModel hub names.  src_ids (n,), tgt_ids (m,)
    = decoder input (starts with decoder_start_token_id = pad id).  src_mask (n,) bool, True =
    real token (default: all True, as HF without attention_mask).

    Post-LN layers (normalize_before false):
        encoder: x = LN(x + SelfAttn(x)); x = LN(x + FFN(x))
        decoder: x = LN(x + CausalSelfAttn(x)); x = LN(x + CrossAttn(x, mem)); x = LN(x + FFN(x))
    x_0 = E[ids] * sqrt(d) (scale_embedding) + positions.  No final encoder/decoder LayerNorm,
    no embedding LayerNorm.  logits = dec_out E^T + final_logits_bias.

    The decoder self-attention is causal ONLY: HF builds no padding mask for decoder inputs
    unless decoder_attention_mask is given, so the leading <pad> (start token) is attended."""
    if cfg.get("normalize_before", False) or cfg.get("normalize_embedding", False):
        raise ValueError("only the opus-mt post-LN variant is implemented")
    d = cfg["d_model"]
    eps = 1e-5                       # nn.LayerNorm default; not in config.json
    act = cfg["activation_function"]
    enc_w, dec_w, lm_w = marian_embed_weights(cfg, P)
    dtype = enc_w.dtype
    scale = math.sqrt(d) if cfg.get("scale_embedding", False) else 1.0
    n, m = src_ids.shape[0], tgt_ids.shape[0]
    if max(n, m) > cfg["max_position_embeddings"]:
        raise ValueError("sequence longer than max_position_embeddings")
    # The table as the model holds it: float64 formula rounded to float32.  Files saved by
    # old transformers versions also store it; it must then be this same table.
    pos = marian_positions(cfg["max_position_embeddings"], d).to(torch.float32).to(dtype)
    for side in ("encoder", "decoder"):
        stored = P.get("model.%s.embed_positions.weight" % side)
        if stored is not None and (stored.to(dtype) - pos).abs().max() > 1e-6:
            raise ValueError("stored %s position table differs from the formula" % side)
    if src_mask is None:
        src_mask = torch.ones(n, dtype=torch.bool)

    def ffn(x, p, act=act):
        return linear(activation(act, linear(x, P, p + "fc1")), P, p + "fc2")

    def mha(xq, xkv, p, heads, allowed, name):
        q, k, v = (linear(xq, P, p + ".q_proj"), linear(xkv, P, p + ".k_proj"),
                   linear(xkv, P, p + ".v_proj"))
        return linear(attention(q, k, v, heads, allowed, trace, name), P, p + ".out_proj")

    def ln(x, p):
        return layer_norm(x, P[p + ".weight"], P[p + ".bias"], eps)

    # encoder
    x = enc_w[src_ids] * scale + pos[:n]
    _put(trace, "encoder.embed.sum", x)
    enc_allowed = src_mask[None, :].expand(n, n)
    for i in range(cfg["encoder_layers"]):
        p = "model.encoder.layers.%d." % i
        x = ln(x + mha(x, x, p + "self_attn", cfg["encoder_attention_heads"], enc_allowed,
                       "encoder.layers.%d.self_attn" % i), p + "self_attn_layer_norm")
        x = ln(x + ffn(x, p), p + "final_layer_norm")
        _put(trace, "encoder.layers.%d.ffn_block.output" % i, x)
    memory = x
    # decoder
    y = dec_w[tgt_ids] * scale + pos[:m]
    _put(trace, "decoder.embed.sum", y)
    self_allowed = causal(m)
    cross_allowed = src_mask[None, :].expand(m, n)
    hd = cfg["decoder_attention_heads"]
    for i in range(cfg["decoder_layers"]):
        p = "model.decoder.layers.%d." % i
        y = ln(y + mha(y, y, p + "self_attn", hd, self_allowed,
                       "decoder.layers.%d.self_attn" % i), p + "self_attn_layer_norm")
        y = ln(y + mha(y, memory, p + "encoder_attn", hd, cross_allowed,
                       "decoder.layers.%d.cross_attn" % i), p + "encoder_attn_layer_norm")
        y = ln(y + ffn(y, p), p + "final_layer_norm")
        _put(trace, "decoder.layers.%d.ffn_block.output" % i, y)
    logits = y @ lm_w.T + P["final_logits_bias"][0]
    if trace is not None:
        trace["encoder.output"] = memory
        trace["decoder.output"] = y
    return OrderedDict([("encoder.output", memory), ("decoder.output", y), ("logits", logits)])


# --------------------------------------------------------------------------- BERT

def bert_normalize_names(params):
    """Accept the spellings found on the hub: with or without the 'bert.' prefix, and the
    TF-era LayerNorm names 'gamma'/'beta' (bert-base-uncased) for 'weight'/'bias'."""
    out = OrderedDict()
    for k, v in params.items():
        if k.startswith("bert."):
            k = k[len("bert."):]
        if k.endswith("LayerNorm.gamma"):
            k = k[:-len("gamma")] + "weight"
        elif k.endswith("LayerNorm.beta"):
            k = k[:-len("beta")] + "bias"
        out[k] = v
    return out


def bert_forward(cfg, P, ids, token_type_ids=None, attention_mask=None, trace=None):
    """cfg: BERT config.json dict; P: BertModel / BertForMaskedLM hub names.  ids (n,) long,
    token_type_ids (n,) long (default 0), attention_mask (n,) bool/int (1 = real token).

        x = LN(word[ids] + position[0..n) + token_type[types])
        per layer: x = LN(x + O(SelfAttn(x)));  x = LN(x + W2 gelu(W1 x))
        pooler_output = tanh(W_p x[0] + b_p)                      (if the file has a pooler)
        MLM logits    = LN(gelu(W_t x + b_t)) word^T + cls.predictions.bias   (if it has cls.*)

    Padded keys get weight exactly 0; padded query rows are still computed."""
    P = bert_normalize_names(P)
    eps, h = cfg["layer_norm_eps"], cfg["num_attention_heads"]
    act = cfg.get("hidden_act", "gelu")
    n = ids.shape[0]
    if token_type_ids is None:
        token_type_ids = torch.zeros(n, dtype=torch.long)
    if attention_mask is None:
        attention_mask = torch.ones(n, dtype=torch.bool)
    attention_mask = attention_mask.bool()

    def ln(x, p):
        return layer_norm(x, P[p + ".weight"], P[p + ".bias"], eps)

    e = "embeddings."
    x = (P[e + "word_embeddings.weight"][ids] + P[e + "position_embeddings.weight"][:n]
         + P[e + "token_type_embeddings.weight"][token_type_ids])
    x = ln(x, e + "LayerNorm")
    _put(trace, "encoder.embed.sum", x)     # after the embedding LayerNorm
    allowed = attention_mask[None, :].expand(n, n)
    for i in range(cfg["num_hidden_layers"]):
        p = "encoder.layer.%d." % i
        q, k, v = (linear(x, P, p + "attention.self.query"), linear(x, P, p + "attention.self.key"),
                   linear(x, P, p + "attention.self.value"))
        a = attention(q, k, v, h, allowed, trace, "encoder.layers.%d.self_attn" % i)
        x = ln(x + linear(a, P, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        f = linear(activation(act, linear(x, P, p + "intermediate.dense")), P, p + "output.dense")
        x = ln(x + f, p + "output.LayerNorm")
        _put(trace, "encoder.layers.%d.ffn_block.output" % i, x)
    out = OrderedDict([("encoder.output", x)])
    if trace is not None:
        trace["encoder.output"] = x
    if "pooler.dense.weight" in P:
        out["pooler_output"] = torch.tanh(linear(x[0], P, "pooler.dense"))
    if "cls.predictions.bias" in P:
        t = activation(act, linear(x, P, "cls.predictions.transform.dense"))
        t = ln(t, "cls.predictions.transform.LayerNorm")
        dec = P.get("cls.predictions.decoder.weight", P[e + "word_embeddings.weight"])
        out["logits"] = t @ dec.T + P["cls.predictions.bias"]
    return out

"""Independent PyTorch references for four Llama-style decoder families on the hub.

* Llama   (LlamaForCausalLM: Llama 2/3.x, TinyLlama, SmolLM), Qwen2 and Mistral: pre-RMSNorm,
          rotary positions in transformers' rotate_half layout, grouped-query attention,
          SwiGLU MLP; Qwen2's q/k/v biases, Llama's attention_bias / mlp_bias / head_dim,
          Mistral's sliding window; rope_scaling "linear" and "llama3".
* GPT-NeoX (Pythia): pre-LayerNorm, fused per-head query_key_value, partial rotary
          (rotary_pct), parallel residual (use_parallel_residual), untied embed_out.

Written from the config.json semantics of transformers' modeling_llama.py, modeling_qwen2.py,
modeling_mistral.py, modeling_gpt_neox.py and modeling_rope_utils.py, with explicit ops on a
plain ``{hub tensor name: tensor}`` dict (no nn.Module, no transformers, nothing from the C++
code).  Batch size 1: ids are 1-D.  The optional ``trace`` dict receives tensors under the
stepformer trace names (docs/trace-names.md).  The computation runs in the parameters' dtype
(the fixture writer uses float64).
"""

import math
from collections import OrderedDict

import torch

from models import activation, layer_norm, masked_softmax


def _put(trace, name, x):
    if trace is not None:
        trace[name] = x


def rms_norm(x, w, eps):
    """LlamaRMSNorm: x / sqrt(mean(x^2) + eps) * w (no mean subtracted, no bias)."""
    return x * torch.rsqrt((x * x).mean(dim=-1, keepdim=True) + eps) * w


def rope_inv_freq(dim, base, scaling, dtype):
    """theta_i = base^(-2i/dim), i < dim/2, then rope_scaling (modeling_rope_utils)."""
    inv = 1.0 / base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    kind = None if scaling is None else scaling.get("rope_type", scaling.get("type"))
    if kind in (None, "default"):
        pass
    elif kind == "linear":
        inv = inv / scaling["factor"]
    elif kind == "llama3":
        factor, lo, hi = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
        old = scaling["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old / lo, old / hi
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > low_wavelen, inv / factor, inv)
        smooth = (old / wavelen - lo) / (hi - lo)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
        inv = torch.where(medium, smoothed, scaled)
    else:
        raise ValueError("rope_scaling type %r" % kind)
    return inv.to(dtype)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


def apply_rope(x, positions, inv_freq):
    """x (heads, n, dk): the first 2*len(inv_freq) dimensions of each head rotate,
    x*cos + rotate_half(x)*sin with cos/sin of cat(freqs, freqs); the rest pass."""
    rot = 2 * inv_freq.shape[0]
    freqs = positions.to(inv_freq.dtype)[:, None] * inv_freq[None, :]   # (n, rot/2)
    emb = torch.cat([freqs, freqs], dim=-1)                             # (n, rot)
    cos, sin = emb.cos()[None], emb.sin()[None]
    xr, xp = x[..., :rot], x[..., rot:]
    return torch.cat([xr * cos + rotate_half(xr) * sin, xp], dim=-1)


def allowed_mask(n, window=None):
    """Causal, and with a sliding window W: query i sees keys j with i - W < j <= i."""
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    ok = j <= i
    if window:
        ok = ok & (j > i - window)
    return ok


def gqa_attention(q, k, v, n_heads, n_kv, allowed, trace, name):
    """q (H, n, dk), k/v (KV, n, dk) already rotated.  repeat_kv: K/V head g serves query
    heads g*(H/KV) .. (g+1)*(H/KV)-1.  Returns the heads side by side (n, H*dk)."""
    dk = q.shape[-1]
    rep = n_heads // n_kv
    kr = k.repeat_interleave(rep, dim=0)
    vr = v.repeat_interleave(rep, dim=0)
    scores = q @ kr.transpose(1, 2) / math.sqrt(dk)
    weights = masked_softmax(scores, allowed[None])
    _put(trace, name + ".weights", weights)
    return (weights @ vr).transpose(0, 1).reshape(q.shape[1], n_heads * dk)


def _lin(x, P, name, bias):
    y = x @ P[name + ".weight"].T
    return y + P[name + ".bias"] if bias else y


def _heads(x, h):
    """(n, h*dk) -> (h, n, dk)"""
    return x.reshape(x.shape[0], h, -1).transpose(0, 1)


def _flat(x):
    """(h, n, dk) -> (n, h*dk)"""
    return x.transpose(0, 1).reshape(x.shape[1], -1)


def llama_forward(cfg, P, ids, trace=None):
    """cfg: a llama / qwen2 / mistral config.json dict; P: hub names ('model.embed_tokens.weight',
    'model.layers.0.self_attn.q_proj.weight', ...; 'lm_head.weight' when untied).

        x = E[ids]
        per layer: a = RMS(x); q, k, v = a W^T (+ b); q, k rotated by position;
                   x += o_proj(attn(q, k, v));  m = RMS(x);  x += down(silu(gate(m)) * up(m))
        logits = RMS(x) W_head^T                 (W_head = E when tie_word_embeddings)"""
    kind = cfg["model_type"]
    d, h = cfg["hidden_size"], cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or h
    dk = cfg.get("head_dim") or d // h
    eps = cfg["rms_norm_eps"]
    act = cfg.get("hidden_act", "silu")
    if kind == "qwen2":
        qkv_b, o_b, mlp_b = True, False, False
    elif kind == "mistral":
        qkv_b = o_b = mlp_b = False
    else:
        qkv_b = o_b = cfg.get("attention_bias", False)
        mlp_b = cfg.get("mlp_bias", False)
    window = cfg.get("sliding_window") if kind == "mistral" else None
    dtype = P["model.embed_tokens.weight"].dtype
    inv = rope_inv_freq(dk, cfg.get("rope_theta", 10000.0), cfg.get("rope_scaling"), dtype)
    n = ids.shape[0]
    pos = torch.arange(n)
    allowed = allowed_mask(n, window)
    x = P["model.embed_tokens.weight"][ids]
    _put(trace, "decoder.embed.sum", x)
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        t = "decoder.layers.%d." % i
        a = rms_norm(x, P[p + "input_layernorm.weight"], eps)
        _put(trace, t + "norm1.out", a)
        q = _heads(_lin(a, P, p + "self_attn.q_proj", qkv_b), h)
        k = _heads(_lin(a, P, p + "self_attn.k_proj", qkv_b), kv)
        v = _heads(_lin(a, P, p + "self_attn.v_proj", qkv_b), kv)
        _put(trace, t + "self_attn.q_unrotated", _flat(q))
        _put(trace, t + "self_attn.k_unrotated", _flat(k))
        q, k = apply_rope(q, pos, inv), apply_rope(k, pos, inv)
        _put(trace, t + "self_attn.q", _flat(q))
        _put(trace, t + "self_attn.k", _flat(k))
        _put(trace, t + "self_attn.v", _flat(v))
        o = _lin(gqa_attention(q, k, v, h, kv, allowed, trace, t + "self_attn"), P, p + "self_attn.o_proj", o_b)
        x = x + o
        _put(trace, t + "self_block.output", x)
        m = rms_norm(x, P[p + "post_attention_layernorm.weight"], eps)
        gate = activation(act, _lin(m, P, p + "mlp.gate_proj", mlp_b))
        up = _lin(m, P, p + "mlp.up_proj", mlp_b)
        _put(trace, t + "ffn.gate", gate)
        _put(trace, t + "ffn.up", up)
        _put(trace, t + "ffn.hidden", gate * up)
        x = x + _lin(gate * up, P, p + "mlp.down_proj", mlp_b)
        _put(trace, t + "ffn_block.output", x)
    x = rms_norm(x, P["model.norm.weight"], eps)
    head = P["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings", False) else P["lm_head.weight"]
    logits = x @ head.T
    _put(trace, "decoder.output", x)
    return OrderedDict([("decoder.output", x), ("logits", logits),
                        ("log_probs", torch.log_softmax(logits, dim=-1))])


def gpt_neox_forward(cfg, P, ids, trace=None):
    """cfg: a gpt_neox config.json dict; P: hub names ('gpt_neox.embed_in.weight', ...,
    'embed_out.weight').

        x = embed_in[ids]
        per layer: qkv = LN1(x) W^T + b viewed (n, H, 3*dk): q = [..., :dk], k, v after it;
                   the first rotary_pct of each head's q, k rotate;  a = dense(attn(q, k, v))
                   parallel:   x = mlp(LN2(x)) + a + x
                   sequential: x = x + a;  x = x + mlp(LN2(x))
        logits = final_layer_norm(x) embed_out^T"""
    d, h = cfg["hidden_size"], cfg["num_attention_heads"]
    dk = d // h
    eps = cfg["layer_norm_eps"]
    act = cfg.get("hidden_act", "gelu")
    bias = cfg.get("attention_bias", True)
    rot = int(dk * cfg["rotary_pct"])
    dtype = P["gpt_neox.embed_in.weight"].dtype
    base = cfg.get("rope_theta", cfg.get("rotary_emb_base", 10000))
    inv = rope_inv_freq(rot, base, cfg.get("rope_scaling"), dtype)
    n = ids.shape[0]
    pos = torch.arange(n)
    allowed = allowed_mask(n)
    x = P["gpt_neox.embed_in.weight"][ids]
    _put(trace, "decoder.embed.sum", x)

    def ln(y, name):
        return layer_norm(y, P[name + ".weight"], P[name + ".bias"], eps)

    for i in range(cfg["num_hidden_layers"]):
        p = "gpt_neox.layers.%d." % i
        t = "decoder.layers.%d." % i
        a_in = ln(x, p + "input_layernorm")
        qkv = _lin(a_in, P, p + "attention.query_key_value", bias).reshape(n, h, 3 * dk).transpose(0, 1)
        q, k, v = qkv[..., :dk], qkv[..., dk:2 * dk], qkv[..., 2 * dk:]
        _put(trace, t + "self_attn.q_unrotated", _flat(q))
        _put(trace, t + "self_attn.k_unrotated", _flat(k))
        q, k = apply_rope(q, pos, inv), apply_rope(k, pos, inv)
        _put(trace, t + "self_attn.q", _flat(q))
        _put(trace, t + "self_attn.k", _flat(k))
        _put(trace, t + "self_attn.v", _flat(v))
        a = _lin(gqa_attention(q, k, v, h, h, allowed, trace, t + "self_attn"), P, p + "attention.dense", bias)

        def mlp(y):
            hid = activation(act, _lin(y, P, p + "mlp.dense_h_to_4h", True))
            _put(trace, t + "ffn.hidden", hid)
            return _lin(hid, P, p + "mlp.dense_4h_to_h", True)

        if cfg.get("use_parallel_residual", True):
            x = mlp(ln(x, p + "post_attention_layernorm")) + a + x
        else:
            x = x + a
            x = x + mlp(ln(x, p + "post_attention_layernorm"))
        _put(trace, t + "ffn_block.output", x)
    x = ln(x, "gpt_neox.final_layer_norm")
    logits = x @ P["embed_out.weight"].T
    _put(trace, "decoder.output", x)
    return OrderedDict([("decoder.output", x), ("logits", logits),
                        ("log_probs", torch.log_softmax(logits, dim=-1))])

"""Write tiny random Llama, Qwen2, Mistral and Pythia (GPT-NeoX) hub checkpoints in the hub's
exact file layout, plus what the reference (decoders.py) computes on them, into
tests/fixtures/hf/:

  llama-tiny            F32; grouped-query attention (4 query heads, 2 K/V heads); head_dim 12
                        with hidden_size 32 (q/o are (48, 32) / (32, 48)); llama3 rope_scaling
                        whose three frequency bands all occur; untied lm_head; a Llama 3 style
                        byte-level tokenizer.json (Split regex + ByteLevel)
  qwen2-tiny-bf16       BF16; one K/V head for 4 query heads; q/k/v biases; tied embeddings;
                        rope_theta 1e6; a Qwen2 tokenizer.json (NFC, Split regex + ByteLevel)
  mistral-tiny-sharded  F32 in two shards with model.safetensors.index.json; sliding_window 3
                        over a 9-token input (the band matters); GQA 4/2; a Mistral/Llama 2
                        style tokenizer.json (SentencePiece BPE, byte_fallback)
  pythia-tiny           F32; LayerNorm; fused query_key_value; rotary_pct 0.25 (4 of 16
                        dimensions rotate); parallel residual; untied embed_out; the buffers
                        older files carry (attention.bias, masked_bias, rotary_emb.inv_freq);
                        GPT-NeoX's tokenizer.json (NFC, ByteLevel)

Each folder has expected.safetensors: the input ids (tgt_ids), per layer the rotated and
unrotated q/k, v, the attention weights, the gated MLP's gate/up/hidden, block outputs, the
stack output, logits and log_probs (float64 reference rounded to F32).  The BF16 fixture's
expected values are computed from its BF16 weights widened exactly to float64.

Regenerate (repository root; Debian python3-torch, python3-numpy):
    /usr/bin/python3 tests/reference/hf/make_decoder_fixtures.py
"""

import json
import os
import struct
import sys
from collections import OrderedDict

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import safetensors_io as st  # noqa: E402
import decoders as D  # noqa: E402
import tokenizers as T  # noqa: E402
from make_hf_fixtures import Init, write_config, write_json, expected_tensors, check_attention  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
OUT = os.path.join(REPO, "tests", "fixtures", "hf")
HF_META = OrderedDict([("format", "pt")])

LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")
MERGE_WORDS = ["the", "in", "er", "an", "on", "at", "en", "is", "or", "ing"]


# --------------------------------------------------------------------------- tokenizer files

def byte_level_vocab(specials):
    """The 256 byte symbols (GPT-2's bytes_to_unicode), a few merges of common pairs, then the
    specials: (vocab dict, merges list)."""
    b2u = T.bytes_to_unicode()
    syms = [b2u[b] for b in range(256)]
    vocab = OrderedDict((s, i) for i, s in enumerate(syms))
    merges = []
    for w in MERGE_WORDS:            # left-to-right merges building each word
        cur = w[0]
        for ch in w[1:]:
            merges.append((cur, ch))
            cur = cur + ch
            if cur not in vocab:
                vocab[cur] = len(vocab)
    merges = list(OrderedDict.fromkeys(merges))
    for s in specials:
        vocab[s] = len(vocab)
    return vocab, merges


def added(tokens, first_id):
    return [OrderedDict([("id", first_id + i), ("content", t), ("single_word", False), ("lstrip", False),
                         ("rstrip", False), ("normalized", False), ("special", True)])
            for i, t in enumerate(tokens)]


def byte_level_tokenizer_json(vocab, merges, specials, normalizer, split_regex, post_processor,
                              ignore_merges=False):
    n = len(vocab) - len(specials)
    byte_level = OrderedDict([("type", "ByteLevel"), ("add_prefix_space", False), ("trim_offsets", True),
                              ("use_regex", split_regex is None)])
    pre = byte_level if split_regex is None else OrderedDict([
        ("type", "Sequence"),
        ("pretokenizers", [OrderedDict([("type", "Split"), ("pattern", OrderedDict([("Regex", split_regex)])),
                                        ("behavior", "Isolated"), ("invert", False)]), byte_level])])
    model = OrderedDict([("type", "BPE"), ("dropout", None), ("unk_token", None),
                         ("continuing_subword_prefix", None), ("end_of_word_suffix", None),
                         ("fuse_unk", False), ("byte_fallback", False)])
    if ignore_merges:
        model["ignore_merges"] = True
    model["vocab"] = vocab
    model["merges"] = ["%s %s" % m for m in merges]
    return OrderedDict([("version", "1.0"), ("truncation", None), ("padding", None),
                        ("added_tokens", added(specials, n)), ("normalizer", normalizer),
                        ("pre_tokenizer", pre), ("post_processor", post_processor),
                        ("decoder", OrderedDict([("type", "ByteLevel"), ("add_prefix_space", True),
                                                 ("trim_offsets", True), ("use_regex", True)])),
                        ("model", model)])


def bos_template(bos, bos_id):
    single = [OrderedDict([("SpecialToken", OrderedDict([("id", bos), ("type_id", 0)]))]),
              OrderedDict([("Sequence", OrderedDict([("id", "A"), ("type_id", 0)]))])]
    return OrderedDict([("type", "TemplateProcessing"), ("single", single), ("pair", single),
                        ("special_tokens", OrderedDict([(bos, OrderedDict([("id", bos), ("ids", [bos_id]),
                                                                           ("tokens", [bos])]))]))])


def write_llama3_tokenizer(d):
    specials = ["<|begin_of_text|>", "<|end_of_text|>"]
    vocab, merges = byte_level_vocab(specials)
    tj = byte_level_tokenizer_json(vocab, merges, specials, None, LLAMA3_SPLIT,
                                   bos_template(specials[0], vocab[specials[0]]), ignore_merges=True)
    write_json(os.path.join(d, "tokenizer.json"), tj)
    write_json(os.path.join(d, "tokenizer_config.json"), OrderedDict([
        ("bos_token", specials[0]), ("eos_token", specials[1]), ("tokenizer_class", "PreTrainedTokenizerFast")]))
    return len(vocab)


def write_qwen2_tokenizer(d):
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    vocab, merges = byte_level_vocab(specials)
    nfc = OrderedDict([("type", "NFC")])
    tj = byte_level_tokenizer_json(vocab, merges, specials, nfc, QWEN2_SPLIT,
                                   OrderedDict([("type", "ByteLevel"), ("add_prefix_space", False),
                                                ("trim_offsets", False), ("use_regex", False)]))
    write_json(os.path.join(d, "tokenizer.json"), tj)
    write_json(os.path.join(d, "tokenizer_config.json"), OrderedDict([
        ("add_bos_token", False), ("bos_token", None), ("eos_token", "<|endoftext|>"),
        ("pad_token", "<|endoftext|>"), ("tokenizer_class", "Qwen2Tokenizer")]))
    return len(vocab)


def write_neox_tokenizer(d):
    specials = ["<|endoftext|>", "<|padding|>"]
    vocab, merges = byte_level_vocab(specials)
    tj = byte_level_tokenizer_json(vocab, merges, specials, OrderedDict([("type", "NFC")]), None,
                                   OrderedDict([("type", "ByteLevel"), ("add_prefix_space", False),
                                                ("trim_offsets", True), ("use_regex", True)]))
    write_json(os.path.join(d, "tokenizer.json"), tj)
    write_json(os.path.join(d, "tokenizer_config.json"), OrderedDict([
        ("add_bos_token", False), ("add_eos_token", False), ("bos_token", "<|endoftext|>"),
        ("eos_token", "<|endoftext|>"), ("unk_token", "<|endoftext|>"), ("tokenizer_class", "GPTNeoXTokenizer")]))
    return len(vocab)


def write_sentencepiece_bpe_tokenizer(d):
    """Llama 2 / TinyLlama / Mistral: <unk> <s> </s>, the 256 <0xNN> byte tokens, then pieces
    with U+2581 for a space; the normalizer prepends and replaces spaces, byte_fallback."""
    sp = "\u2581"
    vocab = OrderedDict([("<unk>", 0), ("<s>", 1), ("</s>", 2)])
    for b in range(256):
        vocab["<0x%02X>" % b] = len(vocab)
    pieces, merges = [], []
    for w in MERGE_WORDS:
        cur = sp
        for ch in w:
            for p in (cur, ch):
                if p not in vocab and len(p) == 1:
                    vocab[p] = len(vocab)
            merges.append((cur, ch))
            cur = cur + ch
            if cur not in vocab:
                vocab[cur] = len(vocab)
    for ch in "abcdefghijklmnopqrstuvwxyz":
        if ch not in vocab:
            vocab[ch] = len(vocab)
    merges = list(OrderedDict.fromkeys(merges))
    normalizer = OrderedDict([("type", "Sequence"), ("normalizers", [
        OrderedDict([("type", "Prepend"), ("prepend", sp)]),
        OrderedDict([("type", "Replace"), ("pattern", OrderedDict([("String", " ")])), ("content", sp)])])])
    decoder = OrderedDict([("type", "Sequence"), ("decoders", [
        OrderedDict([("type", "Replace"), ("pattern", OrderedDict([("String", sp)])), ("content", " ")]),
        OrderedDict([("type", "ByteFallback")]), OrderedDict([("type", "Fuse")]),
        OrderedDict([("type", "Strip"), ("content", " "), ("start", 1), ("stop", 0)])])])
    model = OrderedDict([("type", "BPE"), ("dropout", None), ("unk_token", "<unk>"),
                         ("continuing_subword_prefix", None), ("end_of_word_suffix", None),
                         ("fuse_unk", True), ("byte_fallback", True), ("vocab", vocab),
                         ("merges", ["%s %s" % m for m in merges])])
    specials = added(["<unk>", "<s>", "</s>"], 0)
    tj = OrderedDict([("version", "1.0"), ("truncation", None), ("padding", None), ("added_tokens", specials),
                      ("normalizer", normalizer), ("pre_tokenizer", None),
                      ("post_processor", bos_template("<s>", 1)), ("decoder", decoder), ("model", model)])
    write_json(os.path.join(d, "tokenizer.json"), tj)
    write_json(os.path.join(d, "tokenizer_config.json"), OrderedDict([
        ("add_bos_token", True), ("add_eos_token", False), ("bos_token", "<s>"), ("eos_token", "</s>"),
        ("unk_token", "<unk>"), ("legacy", False), ("tokenizer_class", "LlamaTokenizer")]))
    return len(vocab)


# --------------------------------------------------------------------------- weights

def llama_params(cfg, seed):
    g = Init(seed)
    d, h = cfg["hidden_size"], cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads", h)
    dk = cfg.get("head_dim") or d // h
    ff, V = cfg["intermediate_size"], cfg["vocab_size"]
    kind = cfg["model_type"]
    qkv_b = kind == "qwen2" or cfg.get("attention_bias", False)
    o_b = kind != "qwen2" and cfg.get("attention_bias", False)
    mlp_b = cfg.get("mlp_bias", False)
    P = OrderedDict()
    P["model.embed_tokens.weight"] = g.normal((V, d), 1.0)
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        P[p + "input_layernorm.weight"] = 1.0 + g.normal((d,), 0.1)
        P[p + "post_attention_layernorm.weight"] = 1.0 + g.normal((d,), 0.1)
        for name, rows in (("q_proj", h * dk), ("k_proj", kv * dk), ("v_proj", kv * dk)):
            P[p + "self_attn.%s.weight" % name] = g.linear(rows, d) * 1.5
            if qkv_b:
                P[p + "self_attn.%s.bias" % name] = g.bias(rows)
        P[p + "self_attn.o_proj.weight"] = g.linear(d, h * dk)
        if o_b:
            P[p + "self_attn.o_proj.bias"] = g.bias(d)
        for name, shape in (("gate_proj", (ff, d)), ("up_proj", (ff, d)), ("down_proj", (d, ff))):
            P[p + "mlp.%s.weight" % name] = g.linear(*shape)
            if mlp_b:
                P[p + "mlp.%s.bias" % name] = g.bias(shape[0])
    P["model.norm.weight"] = 1.0 + g.normal((d,), 0.1)
    if not cfg.get("tie_word_embeddings", False):
        P["lm_head.weight"] = g.linear(V, d)
    return P


def neox_params(cfg, seed):
    g = Init(seed)
    d, h, ff, V = cfg["hidden_size"], cfg["num_attention_heads"], cfg["intermediate_size"], cfg["vocab_size"]
    n_pos = cfg["max_position_embeddings"]
    dk = d // h
    P = OrderedDict()
    P["gpt_neox.embed_in.weight"] = g.normal((V, d), 1.0)
    for i in range(cfg["num_hidden_layers"]):
        p = "gpt_neox.layers.%d." % i
        for ln in ("input_layernorm", "post_attention_layernorm"):
            w, b = g.ln(d)
            P[p + ln + ".weight"], P[p + ln + ".bias"] = w, b
        P[p + "attention.query_key_value.weight"] = g.linear(3 * d, d) * 1.5
        P[p + "attention.query_key_value.bias"] = g.bias(3 * d)
        P[p + "attention.dense.weight"] = g.linear(d, d)
        P[p + "attention.dense.bias"] = g.bias(d)
        P[p + "mlp.dense_h_to_4h.weight"] = g.linear(ff, d)
        P[p + "mlp.dense_h_to_4h.bias"] = g.bias(ff)
        P[p + "mlp.dense_4h_to_h.weight"] = g.linear(d, ff)
        P[p + "mlp.dense_4h_to_h.bias"] = g.bias(d)
        # Buffers of older saves (transformers < 4.32 kept them in the state dict).
        P[p + "attention.bias"] = torch.ones(1, 1, n_pos, n_pos, dtype=torch.bool).tril()
        P[p + "attention.masked_bias"] = torch.tensor(-1e9, dtype=torch.float64)
        rot = int(dk * cfg["rotary_pct"])
        P[p + "attention.rotary_emb.inv_freq"] = 1.0 / cfg["rotary_emb_base"] ** (
            torch.arange(0, rot, 2, dtype=torch.float64) / rot)
    w, b = g.ln(d)
    P["gpt_neox.final_layer_norm.weight"], P["gpt_neox.final_layer_norm.bias"] = w, b
    P["embed_out.weight"] = g.linear(V, d)
    return P


def stored(P, dtype):
    """The tensors as the file holds them: floats in `dtype`, bool buffers unchanged."""
    return OrderedDict((k, v.to(dtype) if v.is_floating_point() else v) for k, v in sorted(P.items()))


def bf16_bytes(t):
    return t.to(torch.bfloat16).view(torch.int16).numpy().astype("<i2").tobytes()


def write_safetensors_raw(path, tensors, metadata):
    """A safetensors writer for any mix of F32, BF16 and BOOL torch tensors (insertion order)."""
    header, blobs, off = OrderedDict(), [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, t in tensors.items():
        t = t.contiguous()
        if t.dtype == torch.bfloat16:
            dt, raw = "BF16", t.view(torch.int16).numpy().astype("<i2").tobytes()
        elif t.dtype == torch.float32:
            dt, raw = "F32", t.numpy().astype("<f4").tobytes()
        elif t.dtype == torch.bool:
            dt, raw = "BOOL", t.numpy().astype("?").tobytes()
        else:
            raise ValueError("dtype %s" % t.dtype)
        header[name] = OrderedDict([("dtype", dt), ("shape", list(t.shape)), ("data_offsets", [off, off + len(raw)])])
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    os.replace(tmp, path)


def reference(fn, cfg, P, ids):
    trace = OrderedDict()
    P64 = OrderedDict((k, v.to(torch.float64) if v.is_floating_point() else v) for k, v in P.items())
    out = fn(cfg, P64, ids, trace)
    for k, v in out.items():
        trace.setdefault(k, v)
    check_attention(trace)
    # The float32 run of the same reference: how far round-off alone moves the numbers.
    P32 = OrderedDict((k, v.to(torch.float32) if v.is_floating_point() else v) for k, v in P.items())
    t32 = OrderedDict()
    fn(cfg, P32, ids, t32)
    worst = max((trace[k] - t32[k].double()).abs().max().item() for k in t32 if k.endswith(".weights"))
    return trace, worst


def write_folder(name, cfg, P_file, fn, ids, tokenizer_writer, shards=None):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    n_tok = tokenizer_writer(d)
    assert n_tok <= cfg["vocab_size"], (name, n_tok)
    write_config(os.path.join(d, "config.json"), cfg)
    if shards is None:
        write_safetensors_raw(os.path.join(d, "model.safetensors"), P_file, HF_META)
    else:
        names = list(P_file.keys())
        parts = [names[:shards], names[shards:]]
        weight_map = OrderedDict()
        total = 0
        for k, part in enumerate(parts):
            fname = "model-%05d-of-%05d.safetensors" % (k + 1, len(parts))
            write_safetensors_raw(os.path.join(d, fname), OrderedDict((n, P_file[n]) for n in part), HF_META)
            for n in part:
                weight_map[n] = fname
                total += P_file[n].numel() * P_file[n].element_size()
        write_json(os.path.join(d, "model.safetensors.index.json"), OrderedDict([
            ("metadata", OrderedDict([("total_size", total)])), ("weight_map", OrderedDict(sorted(weight_map.items())))]))
    trace, worst = reference(fn, cfg, P_file, ids)
    meta = OrderedDict([("family", cfg["model_type"]),
                        ("reference", "tests/reference/hf/decoders.py, float64 from the stored weights"),
                        ("f32_vs_f64.attention_weights", "%.3g" % worst)])
    st.write(os.path.join(d, "expected.safetensors"),
             expected_tensors(OrderedDict([("tgt_ids", ids)]), trace), metadata=meta)
    print("%s: V=%d tokenizer=%d n=%d; float32 vs float64 attention %.3g" %
          (name, cfg["vocab_size"], n_tok, len(ids), worst))


def base_llama_cfg(model_type, arch, V):
    return OrderedDict([("architectures", [arch]), ("model_type", model_type), ("hidden_size", 32),
                        ("intermediate_size", 48), ("num_attention_heads", 4), ("num_hidden_layers", 2),
                        ("num_key_value_heads", 2), ("hidden_act", "silu"), ("max_position_embeddings", 64),
                        ("rms_norm_eps", 1e-5), ("rope_theta", 10000.0), ("tie_word_embeddings", False),
                        ("vocab_size", V), ("torch_dtype", "float32"), ("transformers_version", "4.46.0")])


def make_llama():
    V = 300
    cfg = base_llama_cfg("llama", "LlamaForCausalLM", V)
    cfg.update([("head_dim", 12), ("attention_bias", False), ("mlp_bias", False), ("bos_token_id", 294),
                ("eos_token_id", 295), ("pretraining_tp", 1),
                ("rope_scaling", OrderedDict([("factor", 4.0), ("low_freq_factor", 1.0), ("high_freq_factor", 4.0),
                                              ("original_max_position_embeddings", 64), ("rope_type", "llama3")]))])
    P = stored(llama_params(cfg, 41), torch.float32)
    ids = torch.tensor([294, 10, 200, 77, 31, 3, 150, 299, 64, 12, 5])
    write_folder("llama-tiny", cfg, P, D.llama_forward, ids, write_llama3_tokenizer)


def make_qwen2():
    V = 300
    cfg = base_llama_cfg("qwen2", "Qwen2ForCausalLM", V)
    cfg.update([("num_key_value_heads", 1), ("rope_theta", 1000000.0), ("tie_word_embeddings", True),
                ("use_sliding_window", False), ("sliding_window", 32768), ("max_window_layers", 2),
                ("rms_norm_eps", 1e-6), ("torch_dtype", "bfloat16"), ("bos_token_id", 296), ("eos_token_id", 296)])
    P = stored(llama_params(cfg, 42), torch.bfloat16)
    ids = torch.tensor([297, 40, 120, 9, 250, 17, 88, 298])
    write_folder("qwen2-tiny-bf16", cfg, P, D.llama_forward, ids, write_qwen2_tokenizer)


def make_mistral():
    V = 320
    cfg = base_llama_cfg("mistral", "MistralForCausalLM", V)
    cfg.update([("sliding_window", 3), ("bos_token_id", 1), ("eos_token_id", 2)])
    P = stored(llama_params(cfg, 43), torch.float32)
    ids = torch.tensor([1, 270, 33, 290, 101, 5, 260, 47, 310])
    write_folder("mistral-tiny-sharded", cfg, P, D.llama_forward, ids, write_sentencepiece_bpe_tokenizer, shards=9)


def make_pythia():
    V = 304
    cfg = OrderedDict([("architectures", ["GPTNeoXForCausalLM"]), ("model_type", "gpt_neox"),
                       ("hidden_size", 32), ("intermediate_size", 128), ("num_attention_heads", 2),
                       ("num_hidden_layers", 2), ("hidden_act", "gelu"), ("max_position_embeddings", 32),
                       ("layer_norm_eps", 1e-5), ("rotary_pct", 0.25), ("rotary_emb_base", 10000),
                       ("use_parallel_residual", True), ("tie_word_embeddings", False), ("vocab_size", V),
                       ("bos_token_id", 0), ("eos_token_id", 0), ("torch_dtype", "float32"),
                       ("transformers_version", "4.24.0")])
    P = stored(neox_params(cfg, 44), torch.float32)
    ids = torch.tensor([100, 7, 290, 33, 150, 2, 61, 200, 12, 99])
    write_folder("pythia-tiny", cfg, P, D.gpt_neox_forward, ids, write_neox_tokenizer)


def main():
    torch.set_num_threads(1)
    make_llama()
    make_qwen2()
    make_mistral()
    make_pythia()


if __name__ == "__main__":
    main()

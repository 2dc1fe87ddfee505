"""Write the ablation fixtures of the Hugging Face families: each folder's model run on its own
expected.safetensors input with heads and MLPs zero- and mean-ablated, by the independent float64
references (models.py: GPT-2, BERT; decoders.py: Llama, Qwen2, Mistral, GPT-NeoX).

    /usr/bin/python3 tests/reference/hf/make_ablation_fixtures.py     # from the repository root

For each family this writes tests/fixtures/inspect/hf-<folder>.ablate.safetensors holding
  ids                  (n)     the input (I64): the decoder's, or BERT's encoder input
  ablate.zero.logits   (n, V)  the logits with metadata ablate.zero's targets zeroed
  ablate.mean.logits   (n, V)  the logits with metadata ablate.mean's targets mean-ablated
Targets are LAYER.HEAD (a self-attention head: its columns of the concatenated head outputs,
before the output projection) and LAYER.mlp (the MLP's output, before the residual add). Mean:
each column replaced by its mean over the positions of the run.

The references are run unchanged; the ablation wraps their attention function (which returns the
concatenated heads) and their linear layers (the MLP's output projection), by name.
"""
import json
import os
import struct
import sys
from collections import OrderedDict

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import decoders as D  # noqa: E402
import models as M  # noqa: E402
import safetensors_io  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
HF = os.path.join(ROOT, "tests", "fixtures", "hf")
OUT = os.path.join(ROOT, "tests", "fixtures", "inspect")

# folder: (forward, the attention function's module and name, the MLP output projection's name
# pattern, the layer-count key, the head-count key)
FAMILIES = OrderedDict([
    ("gpt2-tiny", ("gpt2", "h.%d.mlp.c_proj", "n_layer", "n_head")),
    ("bert-tiny", ("bert", "encoder.layer.%d.output.dense", "num_hidden_layers", "num_attention_heads")),
    ("llama-tiny", ("llama", "model.layers.%d.mlp.down_proj", "num_hidden_layers", "num_attention_heads")),
    ("qwen2-tiny-bf16", ("llama", "model.layers.%d.mlp.down_proj", "num_hidden_layers", "num_attention_heads")),
    ("mistral-tiny-sharded", ("llama", "model.layers.%d.mlp.down_proj", "num_hidden_layers",
                              "num_attention_heads")),
    ("pythia-tiny", ("neox", "gpt_neox.layers.%d.mlp.dense_4h_to_h", "num_hidden_layers", "num_attention_heads")),
])


def read_bf16_aware(path):
    """safetensors_io.read_torch, with BF16 tensors widened exactly to float32."""
    import numpy as np
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    if not any(isinstance(v, dict) and v.get("dtype") == "BF16" for v in header.values()):
        return safetensors_io.read_torch(path)[0]
    out = OrderedDict()
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        raw = data[8 + n + a:8 + n + b]
        assert info["dtype"] in ("BF16", "F32"), info["dtype"]
        if info["dtype"] == "BF16":
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            arr = bits.view(np.float32)
        else:
            arr = np.frombuffer(raw, dtype="<f4")
        out[name] = torch.from_numpy(arr.copy()).reshape(info["shape"])
    return out


def load_params(folder):
    index = os.path.join(folder, "model.safetensors.index.json")
    files = sorted(set(json.load(open(index))["weight_map"].values())) if os.path.exists(index) else \
        ["model.safetensors"]
    P = OrderedDict()
    for f in files:
        P.update(read_bf16_aware(os.path.join(folder, f)))
    return OrderedDict((k, v.to(torch.float64) if v.is_floating_point() else v) for k, v in P.items())


def edit(x, cols, mode):
    x = x.clone()
    if mode == "zero":
        x[:, cols] = 0
    else:
        x[:, cols] = x[:, cols].mean(0, keepdim=True)
    return x


def run(kind, cfg, P, ids, heads, mlps, mode, mlp_name, n_heads):
    """heads: {layer: [head]}, mlps: {layer}."""
    def attn_layer(name):
        return int(name.split(".")[2])  # "{side}.layers.L.self_attn"

    def on_heads(name, out):
        layer = attn_layer(name)
        dk = out.shape[1] // n_heads
        for h in heads.get(layer, []):
            out = edit(out, slice(h * dk, (h + 1) * dk), mode)
        return out

    mlp_names = {mlp_name % l for l in mlps}
    saved = (M.attention, M.linear, M.conv1d, D.gqa_attention, D._lin)
    try:
        def attention(q, k, v, n_heads_, allowed, trace=None, name=None):
            return on_heads(name, saved[0](q, k, v, n_heads_, allowed, trace, name))

        def linear(x, P_, prefix):
            y = saved[1](x, P_, prefix)
            return edit(y, slice(None), mode) if prefix in mlp_names else y

        def conv1d(x, P_, prefix):
            y = saved[2](x, P_, prefix)
            return edit(y, slice(None), mode) if prefix in mlp_names else y

        def gqa(q, k, v, n_heads_, n_kv, allowed, trace, name):
            return on_heads(name, saved[3](q, k, v, n_heads_, n_kv, allowed, trace, name))

        def lin(x, P_, name, bias):
            y = saved[4](x, P_, name, bias)
            return edit(y, slice(None), mode) if name in mlp_names else y

        M.attention, M.linear, M.conv1d, D.gqa_attention, D._lin = attention, linear, conv1d, gqa, lin
        if kind == "gpt2":
            return M.gpt2_forward(cfg, P, ids)["logits"]
        if kind == "bert":
            return M.bert_forward(cfg, P, ids)["logits"]
        if kind == "llama":
            return D.llama_forward(cfg, P, ids)["logits"]
        return D.gpt_neox_forward(cfg, P, ids)["logits"]
    finally:
        M.attention, M.linear, M.conv1d, D.gqa_attention, D._lin = saved


def parse(spec):
    heads, mlps = {}, set()
    for item in spec.split(","):
        layer, rest = item.split(".")
        if rest == "mlp":
            mlps.add(int(layer))
        else:
            heads.setdefault(int(layer), []).append(int(rest))
    return heads, mlps


def make(name):
    kind, mlp_name, layers_key, heads_key = FAMILIES[name]
    folder = os.path.join(HF, name)
    cfg = json.load(open(os.path.join(folder, "config.json")))
    P = load_params(folder)
    expected, _ = safetensors_io.read_torch(os.path.join(folder, "expected.safetensors"))
    ids = (expected["src_ids"] if kind == "bert" else expected["tgt_ids"]).long()
    layers, n_heads = cfg[layers_key], cfg[heads_key]
    last = layers - 1
    clean = run(kind, cfg, P, ids, {}, set(), "zero", mlp_name, n_heads)
    ref = expected["logits"].to(torch.float64)
    assert (clean - ref).abs().max() < 1e-4, "the wrapped reference must reproduce expected.safetensors"
    specs = OrderedDict([("zero", "0.1,%d.mlp" % last), ("mean", "%d.0,0.mlp" % last)])
    out = OrderedDict([("ids", ids)])
    for mode, spec in specs.items():
        heads, mlps = parse(spec)
        logits = run(kind, cfg, P, ids, heads, mlps, mode, mlp_name, n_heads)
        assert (logits - clean).abs().max() > 1e-3, "the ablation must change the logits"
        out["ablate.%s.logits" % mode] = logits
    meta = OrderedDict([("stepformer.family", name), ("ablate.zero", specs["zero"]), ("ablate.mean", specs["mean"]),
                        ("stepformer.reference", "tests/reference/hf/make_ablation_fixtures.py, float64, as F32")])
    path = os.path.join(OUT, "hf-%s.ablate.safetensors" % name)
    safetensors_io.write(path, out, meta, {n: ("I64" if n == "ids" else "F32") for n in out})
    print("%-22s n %2d  V %5d  %s" % (name, ids.shape[0], clean.shape[1], path))


def main():
    torch.set_num_threads(1)
    for name in sys.argv[1:] or FAMILIES:
        make(name)


if __name__ == "__main__":
    main()

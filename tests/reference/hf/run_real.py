"""The independent reference run on a user's Hugging Face folder, for the real-model check
(tests/hf_real_test.cpp, `STEPFORMER_HF_DIR=/path/to/gpt2 ctest -L real`).

    python3 tests/reference/hf/run_real.py DIR PROMPT OUT.safetensors [TARGET]

Reads DIR/config.json, DIR/model.safetensors (F32, F16 or BF16; a memory map, so a 500 MB file
is fine) and the folder's tokenizer files with the reference tokenizers of tokenizers.py, runs
the reference forward pass of models.py in float64, and writes OUT with
    ids     (n) I64   the prompt's ids (BERT: [CLS] ... [SEP]; Marian: source ids + </s>)
    tgt_ids (m) I64   Marian only: decoder_start_token_id + the TARGET's pieces
    logits  (rows, V) F32 every position's logits (BERT: the MLM head's)
Nothing here reads stepformer's code or output."""

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
import models as M  # noqa: E402
import tokenizers as T  # noqa: E402


def read_weights(path):
    """name -> float64 torch tensor for every floating tensor (integer buffers kept as they are)."""
    header = st.read_header(path)
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    P = OrderedDict()
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        raw = np.asarray(data[b:end])
        if e["dtype"] == "BF16":
            arr = (raw.view("<u2").astype(np.uint32) << 16).view(np.float32)
        elif e["dtype"] in st.DTYPES:
            arr = raw.view(st.DTYPES[e["dtype"]])
        else:
            continue
        t = torch.from_numpy(arr.reshape(e["shape"]).copy())
        P[name] = t.to(torch.float64) if t.is_floating_point() else t
    return P


def main():
    folder, prompt, out = sys.argv[1], sys.argv[2], sys.argv[3]
    target = sys.argv[4] if len(sys.argv) > 4 else ""
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    P = read_weights(os.path.join(folder, "model.safetensors"))
    kind = cfg["model_type"]
    tensors = OrderedDict()
    with torch.no_grad():
        if kind == "gpt2":
            tok = T.GPT2Tokenizer.from_files(os.path.join(folder, "vocab.json"), os.path.join(folder, "merges.txt"))
            ids = tok.encode(prompt)
            logits = M.gpt2_forward(cfg, P, torch.tensor(ids, dtype=torch.long))["logits"]
        elif kind == "bert":
            lower = True
            tc = os.path.join(folder, "tokenizer_config.json")
            if os.path.exists(tc):
                with open(tc, encoding="utf-8") as f:
                    lower = json.load(f).get("do_lower_case", True)
            tok = T.BertTokenizer.from_file(os.path.join(folder, "vocab.txt"), lower)
            ids = tok.encode(prompt)
            if isinstance(ids, tuple):
                ids = ids[0]
            logits = M.bert_forward(cfg, P, torch.tensor(ids, dtype=torch.long))["logits"]
        elif kind == "marian":
            tok = T.MarianTokenizer(os.path.join(folder, "source.spm"), os.path.join(folder, "target.spm"),
                                    os.path.join(folder, "vocab.json"))
            ids = tok.encode(prompt)
            start = cfg.get("decoder_start_token_id", cfg["pad_token_id"])
            tgt = [start] + tok.encode(target, target=True, add_eos=False)
            tensors["tgt_ids"] = np.array(tgt, dtype=np.int64)
            logits = M.marian_forward(cfg, P, torch.tensor(ids, dtype=torch.long),
                                      torch.tensor(tgt, dtype=torch.long))["logits"]
        else:
            sys.exit("run_real.py: model_type %r is not one of gpt2, marian, bert" % kind)
    tensors["ids"] = np.array(ids, dtype=np.int64)
    tensors["logits"] = logits.to(torch.float32).numpy()
    st.write(out, tensors, metadata={"model_type": kind, "prompt": prompt})


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Writes tests/fixtures/tokenizers/llama-sp*: a tiny SentencePiece BPE model with byte fallback
(Llama 2's trainer settings), the tokenizer.json transformers' LlamaConverter makes of it, and the
ids SentencePiece itself (Debian's python3-sentencepiece) gives for a set of texts.

    /usr/bin/python3 tests/reference/tokenizers/make_sentencepiece_bpe.py [--check]

--check regenerates into a temporary folder and compares byte for byte with the committed files.

Folders:
  llama-sp/         tokenizer.model + tokenizer_config.json (LlamaTokenizer, add_bos_token true)
                    + cases.json; what a folder with only tokenizer.model holds
  llama-sp-json/    tokenizer.json as LlamaConverter writes it with legacy = true (normalizer
                    Prepend("▁") + Replace(" ", "▁"), no pre-tokenizer, BPE byte_fallback, fuse_unk,
                    decoder Replace + ByteFallback + Fuse + Strip), tokenizer_config.json, cases.json
  llama-sp-first/   the legacy = false conversion (no normalizer; Metaspace prepend_scheme "first",
                    split false), tokenizer_config.json with add_eos_token true, cases.json

cases.json: [{"text", "ids"}] — the ids of Hugging Face's tokenizer(text) computed from
SentencePiece's own encoder: the text cut around the special tokens written in it (<s>, </s>,
<unk>, kept whole as LlamaTokenizer does), each part encoded by sp.encode (legacy: every part with
SentencePiece's dummy "▁" prefix; legacy = false: only a part at the start of the text that does
not already start with a space — tokenizers' Metaspace prepends "▁" only to a text that does not
start with one, so a leading space is not doubled — the others encoded as sp.encode("<unk>" + part)
with the "<unk>" pieces removed, as transformers' slow LlamaTokenizer does), then <s> first
(add_bos_token) and </s> last (add_eos_token).
"""
import argparse
import filecmp
import json
import os
import shutil
import sys
import tempfile

import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "reference", "hf"))
from corpus import PAIRS, TRICKY  # noqa: E402

SPECIALS = ["<unk>", "<s>", "</s>"]

# Texts beyond the shared tricky strings: characters the tiny model lacks (byte fallback for
# CJK, emoji, a lone combining mark), special tokens written in the text, runs of spaces.
EXTRA = [
    "a<s>b",
    "Hello <s> world</s>",
    "<unk> and <s><s>",
    "  two leading spaces",
    "end with spaces   ",
    "z\u0308 \u00e9\u0301",
    "\u20ac 5 \u00a3",
    "\u0416\u0443\u0440\u043d\u0430\u043b",
    "\U0001F600x\U0001F600",
    "tab\there",
]


def train(folder):
    # Relative names: the model records its input and prefix, which must not depend on the folder.
    cwd = os.getcwd()
    os.chdir(folder)
    corpus = "corpus.txt"
    with open(corpus, "w", encoding="utf-8") as f:
        for en, de in PAIRS:
            f.write(en + "\n" + de + "\n")
    prefix = "tokenizer"
    # Llama 2's trainer settings (its tokenizer.model's trainer_spec), scaled down.
    spm.SentencePieceTrainer.train(
        input=corpus, model_prefix=prefix, model_type="bpe", vocab_size=700, character_coverage=0.9995,
        byte_fallback=True, split_digits=True, allow_whitespace_only_pieces=True, add_dummy_prefix=True,
        remove_extra_whitespaces=False, normalization_rule_name="identity", unk_id=0, bos_id=1, eos_id=2,
        pad_id=-1, num_threads=1, shuffle_input_sentence=False, minloglevel=2)
    os.remove(corpus)
    os.remove(prefix + ".vocab")
    os.chdir(cwd)
    return os.path.join(folder, prefix + ".model")


def split_specials(text):
    """Leftmost, longest special first: [(part, is_special)]."""
    out, start, i = [], 0, 0
    while i < len(text):
        hit = next((s for s in sorted(SPECIALS, key=len, reverse=True) if text.startswith(s, i)), None)
        if hit is None:
            i += 1
            continue
        if i > start:
            out.append((text[start:i], False))
        out.append((hit, True))
        i += len(hit)
        start = i
    if start < len(text):
        out.append((text[start:], False))
    return out


def reference_ids(sp, text, legacy, add_bos, add_eos):
    ids = [sp.bos_id()] if add_bos else []
    for k, (part, special) in enumerate(split_specials(text)):
        if special:
            ids.append(sp.piece_to_id(part))
        elif legacy or (k == 0 and not part.startswith(" ")):
            ids += sp.encode(part)
        else:
            unk = sp.encode("<unk>")
            full = sp.encode("<unk>" + part)
            assert full[:len(unk)] == unk
            ids += full[len(unk):]
    if add_eos:
        ids.append(sp.eos_id())
    return ids


def merges_of(sp):
    """transformers' generate_merges(vocab, vocab_scores): every split of a piece into two pieces,
    ranked by the piece's score (highest first), then by the lengths of the two halves."""
    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    scores = {sp.id_to_piece(i): (0.0 if i < 3 else sp.get_score(i)) for i in range(sp.get_piece_size())}
    merges = []
    for piece, score in scores.items():
        local = [(piece[:k], piece[k:], score) for k in range(1, len(piece))
                 if piece[:k] in vocab and piece[k:] in vocab]
        merges += sorted(local, key=lambda m: (vocab[m[0]], vocab[m[1]]))
    merges.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=True)
    return [[a, b] for a, b, _ in merges]


def tokenizer_json(sp, legacy):
    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    added = [{"id": vocab[s], "content": s, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for s in SPECIALS]
    if legacy:
        normalizer = {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}
        pre_tokenizer = None
    else:
        normalizer = None
        pre_tokenizer = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": merges_of(sp)},
    }


def config(add_eos, legacy):
    return {"tokenizer_class": "LlamaTokenizer", "add_bos_token": True, "add_eos_token": add_eos,
            "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": None, "legacy": legacy,
            "model_max_length": 2048}


def write_json(path, obj, one_per_line=False):
    with open(path, "w", encoding="utf-8") as f:
        if one_per_line:
            f.write("[\n" + ",\n".join(json.dumps(o, ensure_ascii=False) for o in obj) + "\n]\n")
        else:
            json.dump(obj, f, ensure_ascii=False, indent=1)
            f.write("\n")


def generate(out):
    with tempfile.TemporaryDirectory() as tmp:
        model = train(tmp)
        sp = spm.SentencePieceProcessor(model_file=model)
        texts = TRICKY + EXTRA
        for name, legacy, add_eos, with_json, with_model in [("llama-sp", True, False, False, True),
                                                             ("llama-sp-json", True, False, True, False),
                                                             ("llama-sp-first", False, True, True, False)]:
            folder = os.path.join(out, name)
            os.makedirs(folder, exist_ok=True)
            if with_model:
                shutil.copy(model, os.path.join(folder, "tokenizer.model"))
            if with_json:
                write_json(os.path.join(folder, "tokenizer.json"), tokenizer_json(sp, legacy))
            write_json(os.path.join(folder, "tokenizer_config.json"), config(add_eos, legacy))
            cases = [{"text": t, "ids": reference_ids(sp, t, legacy, True, add_eos)} for t in texts]
            write_json(os.path.join(folder, "cases.json"), cases, one_per_line=True)
        # The byte fallback must be exercised: some case holds '<0xNN>' pieces.
        assert any(sp.id_to_piece(i).startswith("<0x") for c in cases for i in c["ids"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    target = os.path.join(ROOT, "tests", "fixtures", "tokenizers")
    if not args.check:
        generate(target)
        return
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp)
        cmp = filecmp.dircmp(tmp, target)
        bad = []
        for name in os.listdir(tmp):
            for f in os.listdir(os.path.join(tmp, name)):
                if not filecmp.cmp(os.path.join(tmp, name, f), os.path.join(target, name, f), shallow=False):
                    bad.append(name + "/" + f)
        del cmp
        if bad:
            sys.exit("differs from the committed fixtures: " + ", ".join(bad))
        print("fixtures match")


if __name__ == "__main__":
    main()

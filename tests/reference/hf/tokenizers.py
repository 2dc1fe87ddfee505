"""Independent reference tokenizers for Hugging Face hub checkpoints (GPT-2, BERT, Marian).

Written from the published algorithms, not from the transformers / tokenizers code:

* ``GPT2Tokenizer``   byte-level BPE (OpenAI GPT-2) from ``vocab.json`` + ``merges.txt``.
* ``BertTokenizer``   BERT BasicTokenizer + greedy longest-match-first WordPiece (``vocab.txt``).
* ``MarianTokenizer`` SentencePiece (``source.spm`` / ``target.spm``) -> piece strings -> ids
                      through ``vocab.json``; ``</s>`` appended.

Only the Python standard library is needed, plus the ``sentencepiece`` package (Debian
python3-sentencepiece) for Marian.

Known divergences between implementations that the fixtures deliberately avoid:
* ``\\s`` in the GPT-2 pattern.  OpenAI's encoder (Python ``regex``) and HF ``tokenizers`` use
  the Unicode White_Space property (``WHITE_SPACE`` below).  JavaScript's ``\\s`` (used by the
  npm gpt-3-encoder) lacks U+0085 and adds U+FEFF.  Python's ``re``/``str.isspace`` also adds
  U+001C..U+001F.  We follow White_Space.
* Unicode versions: ``\\p{L}`` / ``\\p{N}`` come from ``unicodedata`` (Unicode 14 in Python
  3.11); characters assigned later are classified differently by newer engines.
"""

import json
import unicodedata

# --------------------------------------------------------------------------- GPT-2

# Unicode White_Space property (PropList.txt): what \s means in Python `regex`, Rust, Oniguruma.
WHITE_SPACE = frozenset(
    [chr(c) for c in range(0x09, 0x0E)] + [" ", "\u0085", "\u00a0", "\u1680"]
    + [chr(c) for c in range(0x2000, 0x200B)]
    + ["\u2028", "\u2029", "\u202f", "\u205f", "\u3000"])

GPT2_CONTRACTIONS = ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d")  # case-sensitive, ASCII '


def _is_letter(ch):   # \p{L}
    return unicodedata.category(ch).startswith("L")


def _is_number(ch):   # \p{N}
    return unicodedata.category(ch).startswith("N")


def _is_other(ch):    # [^\s\p{L}\p{N}]
    return ch not in WHITE_SPACE and not _is_letter(ch) and not _is_number(ch)


def gpt2_pretokenize(text):
    """Split text exactly like the GPT-2 pattern

        's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+

    applied with leftmost-first alternation (a regex engine tries the alternatives in order at
    each position and takes the first that matches; each class run is greedy)."""
    out = []
    i, n = 0, len(text)

    def run(j, pred):  # end of the maximal run of pred starting at j
        while j < n and pred(text[j]):
            j += 1
        return j

    while i < n:
        c = next((c for c in GPT2_CONTRACTIONS if text.startswith(c, i)), None)
        if c is not None:
            out.append(c)
            i += len(c)
            continue
        matched = False
        for pred in (_is_letter, _is_number, _is_other):  # ' ?X+' for the three classes
            start = i + 1 if text[i] == " " and i + 1 < n and pred(text[i + 1]) else i
            end = run(start, pred)
            if end > start:
                out.append(text[i:end])
                i = end
                matched = True
                break
        if matched:
            continue
        # text[i] is whitespace here (every character is a letter, number, other or space).
        end = run(i, lambda ch: ch in WHITE_SPACE)
        if end < n and end - i >= 2:
            end -= 1  # \s+(?!\S): leave the last space to prefix the next word
        # (end == n: \s+(?!\S) takes the whole run; a single space before \S: \s+ takes it)
        out.append(text[i:end])
        i = end
    return out


def bytes_to_unicode():
    """GPT-2's reversible byte -> printable character table (dict int -> str).

    The 188 bytes that are printable Latin-1 map to themselves; the other 68 (control
    characters, space, DEL, NBSP, soft hyphen ...) map, in byte order, to U+0100, U+0101, ...
    so that no token contains whitespace or control characters (space -> 'Ġ' U+0120)."""
    keep = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1))
            + list(range(ord("\u00ae"), ord("\u00ff") + 1)))
    table = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def read_merges(path):
    """merges.txt -> list of (left, right).  First line '#version: ...' is a header; blank
    lines (the file ends with a newline) are ignored."""
    merges = []
    with open(path, encoding="utf-8") as f:
        for k, line in enumerate(f.read().split("\n")):
            if k == 0 and line.startswith("#version"):
                continue
            if not line.strip():
                continue
            left, right = line.split()
            merges.append((left, right))
    return merges


class GPT2Tokenizer:
    EOT = "<|endoftext|>"

    def __init__(self, vocab, merges):
        self.encoder = dict(vocab)                     # token string -> id
        self.decoder = {v: k for k, v in self.encoder.items()}
        self.ranks = {pair: r for r, pair in enumerate(merges)}
        self.byte_encoder = bytes_to_unicode()
        self.byte_decoder = {v: k for k, v in self.byte_encoder.items()}
        self.special = [t for t in (self.EOT,) if t in self.encoder]
        self._cache = {}

    @classmethod
    def from_files(cls, vocab_json, merges_txt):
        with open(vocab_json, encoding="utf-8") as f:
            vocab = json.load(f)
        return cls(vocab, read_merges(merges_txt))

    def bpe(self, word):
        """Byte-level word (str of mapped bytes) -> list of BPE tokens.  Repeatedly merge the
        adjacent pair with the lowest merge rank, all its non-overlapping occurrences left to
        right, until no adjacent pair is a merge."""
        if word in self._cache:
            return self._cache[word]
        parts = list(word)
        while len(parts) > 1:
            best = min(((self.ranks.get(p, None), p) for p in zip(parts, parts[1:])
                        if p in self.ranks), default=None)
            if best is None:
                break
            a, b = best[1]
            merged, i = [], 0
            while i < len(parts):
                if i + 1 < len(parts) and parts[i] == a and parts[i + 1] == b:
                    merged.append(a + b)
                    i += 2
                else:
                    merged.append(parts[i])
                    i += 1
            parts = merged
        self._cache[word] = parts
        return parts

    def tokenize(self, text, allow_special=True):
        """-> list of token strings.  With allow_special, a literal '<|endoftext|>' in the text
        is that single token (what HF GPT2Tokenizer does by default)."""
        segments = [(text, False)]
        if allow_special:
            for sp in self.special:
                new = []
                for seg, is_sp in segments:
                    if is_sp:
                        new.append((seg, True))
                        continue
                    pieces = seg.split(sp)
                    for k, p in enumerate(pieces):
                        if k:
                            new.append((sp, True))
                        if p:
                            new.append((p, False))
                segments = new
        tokens = []
        for seg, is_sp in segments:
            if is_sp:
                tokens.append(seg)
                continue
            for word in gpt2_pretokenize(seg):
                mapped = "".join(self.byte_encoder[b] for b in word.encode("utf-8"))
                tokens.extend(self.bpe(mapped))
        return tokens

    def encode(self, text, allow_special=True):
        return [self.encoder[t] for t in self.tokenize(text, allow_special)]

    def decode(self, ids):
        s = "".join(self.decoder[i] for i in ids)
        return bytes(self.byte_decoder[c] for c in s).decode("utf-8", errors="replace")


# --------------------------------------------------------------------------- BERT

def _bert_is_whitespace(ch):
    return ch in (" ", "\t", "\n", "\r") or unicodedata.category(ch) == "Zs"


def _bert_is_control(ch):
    if ch in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(ch).startswith("C")


def _bert_is_punctuation(ch):
    cp = ord(ch)
    # All non-alphanumeric ASCII counts as punctuation ("$", "^", "`", ...), plus category P*.
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _bert_is_cjk(ch):
    cp = ord(ch)
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def _split_ws(text):
    # The original uses str.split(): besides the " " that cleaning produced, it also splits on
    # characters cleaning keeps, e.g. U+2028 (category Zl).  Keep that behaviour.
    return text.split()


class BertTokenizer:
    SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

    def __init__(self, vocab_tokens, do_lower_case=True, max_chars_per_word=100):
        self.vocab = {t: i for i, t in enumerate(vocab_tokens)}
        self.inv = list(vocab_tokens)
        self.do_lower_case = do_lower_case
        self.max_chars = max_chars_per_word

    @classmethod
    def from_file(cls, vocab_txt, do_lower_case=True):
        with open(vocab_txt, encoding="utf-8") as f:
            tokens = [line.rstrip("\n") for line in f]
        if tokens and tokens[-1] == "":
            tokens.pop()
        return cls(tokens, do_lower_case)

    # BasicTokenizer
    def basic_tokenize(self, text):
        cleaned = []
        for ch in text:
            if ord(ch) == 0 or ord(ch) == 0xFFFD or _bert_is_control(ch):
                continue                                  # drops \x00, U+FFFD, Cc/Cf/... (ZWJ)
            cleaned.append(" " if _bert_is_whitespace(ch) else ch)
        spaced = "".join(" %s " % ch if _bert_is_cjk(ch) else ch for ch in cleaned)
        words = []
        for tok in _split_ws(spaced):
            if self.do_lower_case:
                tok = tok.lower()
                tok = "".join(c for c in unicodedata.normalize("NFD", tok)
                              if unicodedata.category(c) != "Mn")   # strip accents
            cur = ""
            for ch in tok:                                # split off every punctuation char
                if _bert_is_punctuation(ch):
                    if cur:
                        words.append(cur)
                        cur = ""
                    words.append(ch)
                else:
                    cur += ch
            if cur:
                words.append(cur)
        return words

    def wordpiece(self, word):
        if len(word) > self.max_chars:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            found = None
            while end > start:
                sub = word[start:end] if start == 0 else "##" + word[start:end]
                if sub in self.vocab:
                    found = sub
                    break
                end -= 1
            if found is None:
                return ["[UNK]"]      # the whole word, not just the failing part
            pieces.append(found)
            start = end
        return pieces

    def tokenize(self, text):
        """Text -> word pieces (no [CLS]/[SEP]).  Literal special tokens in the text ("[MASK]")
        are kept whole, as HF tokenizers do for their special tokens."""
        out = []
        for seg, is_sp in _split_specials(text, [t for t in self.SPECIALS if t in self.vocab]):
            if is_sp:
                out.append(seg)
            else:
                for w in self.basic_tokenize(seg):
                    out.extend(self.wordpiece(w))
        return out

    def encode(self, text, pair=None):
        """-> (ids, token_type_ids): [CLS] A [SEP] (B [SEP])."""
        a = ["[CLS]"] + self.tokenize(text) + ["[SEP]"]
        types = [0] * len(a)
        if pair is not None:
            b = self.tokenize(pair) + ["[SEP]"]
            a += b
            types += [1] * len(b)
        return [self.vocab[t] for t in a], types


def _split_specials(text, specials):
    """Split text into [(segment, is_special)] around literal occurrences of special tokens
    (leftmost, longest first)."""
    out, i, start = [], 0, 0
    specials = sorted(specials, key=len, reverse=True)
    while i < len(text):
        sp = next((s for s in specials if text.startswith(s, i)), None)
        if sp is None:
            i += 1
            continue
        if i > start:
            out.append((text[start:i], False))
        out.append((sp, True))
        i += len(sp)
        start = i
    if start < len(text):
        out.append((text[start:], False))
    return out


# --------------------------------------------------------------------------- Marian

class MarianTokenizer:
    """opus-mt tokenization: SentencePiece splits the text into piece strings (source.spm for
    source text, target.spm for target text); each piece is looked up in vocab.json, which is
    shared by both sides and numbered independently of the .spm files; pieces missing from
    vocab.json (SentencePiece passes unknown characters through as their own surface text)
    become <unk>; </s> is appended.  No Moses punctuation normalisation (transformers only
    applies it when sacremoses is installed, and not in __call__)."""

    def __init__(self, source_spm, target_spm, vocab_json):
        import sentencepiece as spm
        self.src = spm.SentencePieceProcessor(model_file=source_spm)
        self.tgt = spm.SentencePieceProcessor(model_file=target_spm)
        with open(vocab_json, encoding="utf-8") as f:
            self.vocab = json.load(f)
        self.unk_id = self.vocab["<unk>"]
        self.eos_id = self.vocab["</s>"]
        self.pad_id = self.vocab["<pad>"]

    def pieces(self, text, target=False):
        sp = self.tgt if target else self.src
        return sp.encode(text, out_type=str)

    def encode(self, text, target=False, add_eos=True):
        ids = [self.vocab.get(p, self.unk_id) for p in self.pieces(text, target)]
        return ids + [self.eos_id] if add_eos else ids

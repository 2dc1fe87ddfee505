"""Write the inspection fixtures: logit lens, direct logit attribution, attention rollout and
head-detector scores of the golden fixture models, from an independent float64 PyTorch walk.

    /usr/bin/python3 tests/reference/make_inspect_fixtures.py        # from the repository root

For each tests/fixtures/<case>.safetensors (with its .expected.safetensors inputs) this writes
tests/fixtures/inspect/<case>.inspect.safetensors holding
  lens.logits          (points, m, V)  the decoder's stream after the embedding and after every
                                       sublayer, through the final norm (pre-LN) and the generator
  dla.parts            (P)             direct logit attribution of logit(token) − logit(other) at
                                       the last position, parts in the order: embedding, then per
                                       layer each self-attention head, the self-attention bias,
                                       [each cross-attention head, the cross bias,] the MLP; then
                                       the norm biases and the unembedding bias
  dla.total            (1)             the model's own logit difference
  dla.query            (3)             position, token, other (I64)
  rollout.decoder      (L, m, m)       attention rollout of the decoder's self-attention
  rollout.encoder      (L, n, n)       the same for the encoder (encoder-decoder cases)
  detect.decoder       (4, L, h)       previous-token, duplicate-token, induction and first-token
                                       scores of every decoder self-attention head on the case's
                                       own target ids (mul measure)
  run.tgt_ids          (m)             the decoder input of the ablation and patching runs: the
                                       case's target ids without their trailing <pad>s (I64)
  ablate.zero.logits   (m, V)          the decoder's logits with the targets of metadata
  ablate.mean.logits   (m, V)          ablate.zero / ablate.mean ablated (LAYER.HEAD self-attention
                                       head, LAYER.xHEAD cross-attention head, LAYER.mlp the MLP),
                                       zero: the activation set to 0; mean: each column set to its
                                       mean over the run's positions. Heads are ablated in the
                                       concatenated head outputs, before the output projection.
  ablate.kl            (2)             KL(clean ‖ ablated) at the last position, zero then mean
  patch.clean_ids      (n)             the prompt of the clean run (the source for encoder-decoder
  patch.corrupt_ids    (n)             models, else the decoder input), and the corrupted one (I64)
  patch.query          (2)             answer, wrong (I64): the clean run's top token and the
                                       corrupted run's (or the clean run's second)
  patch.ld             (2)             logit(answer) − logit(wrong) of the clean and corrupted runs
  patch.<what>         (L, m) | (L, h) the recovered logit difference (ld(patched) − ld(corrupt)) /
                                       (ld(clean) − ld(corrupt)) of the corrupted run with one
                                       activation of the clean run patched in: resid (the stream
                                       entering layer l at position p), attn, cross, mlp (sublayer
                                       outputs at position p), heads, cross-heads (head h at every
                                       position)
The walk re-implements each sublayer from tests/reference/reference_model.py's primitives and
keeps every head's output; LayerNorm statistics are frozen at the run's values for attribution.
"""
import os
import sys
from collections import OrderedDict

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference_model as rm  # noqa: E402
import safetensors_io  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
CASES = ["deconly_pre_gelu", "deconly_post_relu_learned", "encdec_post_relu_sin", "encdec_pre_gelu_shared",
         "encdec_pre_3layer_odd"]


def heads_of(params, prefix, xq, xkv, allowed, n_heads):
    """Per-head contributions (h, Lq, d) of one attention sublayer, its bias (d), and weights."""
    q = rm.split_heads(rm.project(params, prefix + ".q_proj", xq), n_heads)
    k = rm.split_heads(rm.project(params, prefix + ".k_proj", xkv), n_heads)
    v = rm.split_heads(rm.project(params, prefix + ".v_proj", xkv), n_heads)
    heads, _, weights = rm.attend(q, k, v, allowed)  # heads (h, Lq, dk)
    wo = params[prefix + ".o_proj.weight"]  # (d, d)
    dk = wo.shape[1] // n_heads
    parts = torch.stack([heads[h] @ wo[:, h * dk:(h + 1) * dk].T for h in range(n_heads)])
    return parts, params[prefix + ".o_proj.bias"], weights


def ln_stats(x):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return mean, var


def frozen_ln(parts, x_in, params, prefix):
    """The linear half of LN(x_in) applied to each part (frozen statistics) and its β."""
    _, var = ln_stats(x_in)
    rstd = 1.0 / torch.sqrt(var + rm.LN_EPS)
    w, b = params[prefix + ".weight"], params[prefix + ".bias"]
    out = [(p - p.mean(-1, keepdim=True)) * rstd * w for p in parts]
    return out, b


def walk(cfg, params, src_ids, tgt_ids):
    """The decoder walk: stream points, parts (in dla order, each (m, d)) and self-attention weights."""
    h = cfg["n_heads"]
    pre = cfg["norm"] == "pre"
    tpad = rm.special_ids(cfg["tgt_vocab"])["<pad>"]
    memory, enc_weights = None, []
    if rm.is_encdec(cfg):
        trace = {}
        memory = rm.encode(cfg, params, src_ids, trace)
        enc_weights = [trace["encoder.layers.%d.self_attn.weights" % i] for i in range(cfg["n_encoder_layers"])]
        spad = rm.special_ids(cfg["src_vocab"])["<pad>"]
    x = rm.embed(cfg, params, tgt_ids, "tgt_embed.weight")
    m = x.shape[0]
    self_allowed = rm.decoder_self_allowed(tgt_ids, tpad)
    points = [x]
    parts = [x]          # what each part wrote, carried through the norms after it
    norm_bias = torch.zeros_like(x)
    dec_weights = []

    def block(x, norm_prefix, fn):
        nonlocal parts, norm_bias
        if pre:
            new, extra = fn(rm.layer_norm(params, norm_prefix, x))
            parts += new
            return x + sum(new) + extra
        new, extra = fn(x)
        parts += new
        s = x + sum(new) + extra
        mapped, beta = frozen_ln(parts + [norm_bias], s, params, norm_prefix)
        parts, norm_bias = mapped[:-1], mapped[-1] + beta
        return rm.layer_norm(params, norm_prefix, s)

    def attention(prefix, xkv_of, allowed, weights_out):
        def fn(y):
            per_head, bias, w = heads_of(params, prefix, y, xkv_of(y), allowed, h)
            weights_out.append(w)
            return [per_head[i] for i in range(h)] + [bias.expand(m, -1)], 0.0
        return fn

    for i in range(cfg["n_decoder_layers"]):
        p = "decoder.layers.%d" % i
        x = block(x, p + ".norm1", attention(p + ".self_attn", lambda y: y, self_allowed, dec_weights))
        points.append(x)
        if rm.is_encdec(cfg):
            cross_allowed = rm.key_padding_allowed(src_ids, spad, m)
            x = block(x, p + ".norm2", attention(p + ".cross_attn", lambda y: memory, cross_allowed, []))
            points.append(x)
        ffn_norm = p + (".norm3" if rm.is_encdec(cfg) else ".norm2")
        x = block(x, ffn_norm, lambda y: ([rm.feed_forward(cfg, params, p + ".ffn", y)], 0.0))
        points.append(x)
    if pre:
        parts_n, beta = frozen_ln(parts + [norm_bias], x, params, "decoder.norm")
        parts, norm_bias = parts_n[:-1], parts_n[-1] + beta
    return points, parts + [norm_bias], dec_weights, enc_weights


def readout(cfg, params, stream):
    if cfg["norm"] == "pre":
        stream = rm.layer_norm(params, "decoder.norm", stream)
    return rm.generate_logits(cfg, params, stream)


def rollout(weights):
    out, r = [], None
    for w in weights:
        a = 0.5 * w.mean(0) + 0.5 * torch.eye(w.shape[-1], dtype=w.dtype)
        a = a / a.sum(-1, keepdim=True)
        r = a if r is None else a @ r
        out.append(r)
    return torch.stack(out)


def patterns(ids):
    n = len(ids)
    prev = torch.zeros(n, n, dtype=torch.float64)
    dup = torch.zeros(n, n, dtype=torch.float64)
    ind = torch.zeros(n, n, dtype=torch.float64)
    first = torch.zeros(n, n, dtype=torch.float64)
    for i in range(n):
        first[i, 0] = 1
        if i > 0:
            prev[i, i - 1] = 1
        for j in range(i):
            if ids[j] == ids[i]:
                dup[i, j] = 1
                if j + 1 <= i:
                    ind[i, j + 1] = 1
    return [prev, dup, ind, first]


class HookedRun:
    """The teacher-forced forward of reference_model.py, re-walked with edits at the sites the
    C++ Intervention offers: 'stream' (entering layer l), 'attn'/'cross' (sublayer outputs after
    W_o), 'attn.heads'/'cross.heads' (the concatenated head outputs before W_o), 'mlp'. Every
    site's value is recorded in self.acts[(site, layer)]."""

    def __init__(self, cfg, params, src_ids, tgt_ids, edits=None):
        self.cfg, self.params, self.edits, self.acts = cfg, params, edits or {}, {}
        h = cfg["n_heads"]
        tpad = rm.special_ids(cfg["tgt_vocab"])["<pad>"]
        memory = None
        if rm.is_encdec(cfg):
            memory = rm.encode(cfg, params, src_ids)
            spad = rm.special_ids(cfg["src_vocab"])["<pad>"]
        x = rm.embed(cfg, params, tgt_ids, "tgt_embed.weight")
        m = x.shape[0]
        self_allowed = rm.decoder_self_allowed(tgt_ids, tpad)
        for i in range(cfg["n_decoder_layers"]):
            p = "decoder.layers.%d" % i
            x = self.site("stream", i, x)
            x = rm.sublayer(cfg, params, p + ".norm1", x,
                            lambda y: self.mha(p + ".self_attn", y, y, self_allowed, h, "attn", i))
            if rm.is_encdec(cfg):
                cross_allowed = rm.key_padding_allowed(src_ids, spad, m)
                x = rm.sublayer(cfg, params, p + ".norm2", x,
                                lambda y: self.mha(p + ".cross_attn", y, memory, cross_allowed, h, "cross", i))
            ffn_norm = p + (".norm3" if rm.is_encdec(cfg) else ".norm2")
            x = rm.sublayer(cfg, params, ffn_norm, x,
                            lambda y: self.site("mlp", i, rm.feed_forward(cfg, params, p + ".ffn", y)))
        if cfg["norm"] == "pre":
            x = rm.layer_norm(params, "decoder.norm", x)
        self.logits = rm.generate_logits(cfg, params, x)

    def site(self, name, layer, x):
        edit = self.edits.get((name, layer))
        if edit is not None:
            x = edit(x.clone())
        self.acts[(name, layer)] = x
        return x

    def mha(self, prefix, xq, xkv, allowed, n_heads, name, layer):
        q = rm.split_heads(rm.project(self.params, prefix + ".q_proj", xq), n_heads)
        k = rm.split_heads(rm.project(self.params, prefix + ".k_proj", xkv), n_heads)
        v = rm.split_heads(rm.project(self.params, prefix + ".v_proj", xkv), n_heads)
        heads, _, _ = rm.attend(q, k, v, allowed)
        concat = self.site(name + ".heads", layer, rm.merge_heads(heads))
        return self.site(name, layer, rm.project(self.params, prefix + ".o_proj", concat))


def parse_targets(spec):
    """'0.1,1.x0,0.mlp' -> [(site, layer, head or None)]."""
    out = []
    for item in spec.split(","):
        layer, rest = item.split(".")
        if rest == "mlp":
            out.append(("mlp", int(layer), None))
        elif rest.startswith("x"):
            out.append(("cross.heads", int(layer), int(rest[1:])))
        else:
            out.append(("attn.heads", int(layer), int(rest)))
    return out


def ablation_edits(spec, mode, dk):
    edits = {}
    for site, layer, head in parse_targets(spec):
        cols = slice(None) if head is None else slice(head * dk, (head + 1) * dk)

        def edit(x, cols=cols, prev=edits.get((site, layer))):
            if prev is not None:
                x = prev(x)
            if mode == "zero":
                x[:, cols] = 0
            else:
                x[:, cols] = x[:, cols].mean(0, keepdim=True)
            return x
        edits[(site, layer)] = edit
    return edits


def kl(clean_logits, other_logits):
    lp, lq = torch.log_softmax(clean_logits, -1), torch.log_softmax(other_logits, -1)
    return float((lp.exp() * (lp - lq)).sum())


def patch_grid(cfg, params, clean_src, corrupt_src, clean_tgt, corrupt_tgt, answer, wrong, what):
    clean = HookedRun(cfg, params, clean_src, clean_tgt)
    corrupt = HookedRun(cfg, params, corrupt_src, corrupt_tgt)
    pos = clean_tgt.shape[0] - 1

    def ld(run):
        return float(run.logits[pos, answer] - run.logits[pos, wrong])
    c_ld, k_ld = ld(clean), ld(corrupt)
    layers, h = cfg["n_decoder_layers"], cfg["n_heads"]
    dk = cfg["d_model"] // h
    heads = what in ("heads", "cross-heads")
    site = {"resid": "stream", "attn": "attn", "cross": "cross", "mlp": "mlp", "heads": "attn.heads",
            "cross-heads": "cross.heads"}[what]
    cols = h if heads else corrupt_tgt.shape[0]
    grid = torch.zeros(layers, cols, dtype=torch.float64)
    for l in range(layers):
        value = clean.acts[(site, l)]
        for i in range(cols):
            def edit(x, i=i, value=value):
                if heads:
                    x[:, i * dk:(i + 1) * dk] = value[:, i * dk:(i + 1) * dk]
                else:
                    x[i] = value[i]
                return x
            run = HookedRun(cfg, params, corrupt_src, corrupt_tgt, {(site, l): edit})
            grid[l, i] = (ld(run) - k_ld) / (c_ld - k_ld)
    return grid, c_ld, k_ld


def add_ablation_and_patching(cfg, params, src_ids, tgt_ids, out, meta):
    """The ablate.* and patch.* fixtures of one case (see the module docstring)."""
    tpad = rm.special_ids(cfg["tgt_vocab"])["<pad>"]
    n = tgt_ids.shape[0]
    while n > 1 and int(tgt_ids[n - 1]) == tpad:
        n -= 1
    tgt = tgt_ids[:n].clone()
    encdec = rm.is_encdec(cfg)
    layers, h = cfg["n_decoder_layers"], cfg["n_heads"]
    dk = cfg["d_model"] // h
    last = layers - 1
    clean = HookedRun(cfg, params, src_ids, tgt)
    assert torch.allclose(clean.logits, rm.forward(cfg, params, src_ids, tgt)["logits"], atol=1e-10)
    specs = {"zero": "0.1,%d.0,0.mlp" % last + (",0.x0" if encdec else ""),
             "mean": "0.0,%d.mlp" % last + (",%d.x1" % last if encdec else "")}
    kls = []
    for mode in ("zero", "mean"):
        run = HookedRun(cfg, params, src_ids, tgt, ablation_edits(specs[mode], mode, dk))
        out["ablate.%s.logits" % mode] = run.logits
        meta["ablate.%s" % mode] = specs[mode]
        kls.append(kl(clean.logits[n - 1], run.logits[n - 1]))
    out["ablate.kl"] = torch.tensor(kls, dtype=torch.float64)
    out["run.tgt_ids"] = tgt

    # The corruption: one token of the prompt replaced, the one that moves the answer most.
    vocab = cfg["src_vocab"] if encdec else cfg["tgt_vocab"]
    specials = set(rm.special_ids(vocab).values())
    prompt = src_ids if encdec else tgt
    where = 0 if encdec else 1
    order = torch.argsort(clean.logits[n - 1], descending=True, stable=True)
    answer = int(order[0])
    best = None
    for tok in range(len(vocab)):
        if tok in specials or tok == int(prompt[where]):
            continue
        corrupt = prompt.clone()
        corrupt[where] = tok
        run = HookedRun(cfg, params, corrupt if encdec else src_ids, tgt if encdec else corrupt)
        top = int(torch.argmax(run.logits[n - 1]))
        wrong = top if top != answer else int(order[1])
        span = float(clean.logits[n - 1, answer] - clean.logits[n - 1, wrong]) - \
            float(run.logits[n - 1, answer] - run.logits[n - 1, wrong])
        if best is None or abs(span) > abs(best[0]):
            best = (span, corrupt, wrong)
    _, corrupt, wrong = best
    out["patch.clean_ids"] = prompt
    out["patch.corrupt_ids"] = corrupt
    out["patch.query"] = torch.tensor([answer, wrong], dtype=torch.int64)
    kinds = ["resid", "attn", "mlp", "heads"] + (["cross", "cross-heads"] if encdec else [])
    for what in kinds:
        grid, c_ld, k_ld = patch_grid(cfg, params, src_ids, corrupt if encdec else src_ids, tgt if encdec else prompt,
                                      tgt if encdec else corrupt, answer, wrong, what)
        out["patch." + what] = grid
    out["patch.ld"] = torch.tensor([c_ld, k_ld], dtype=torch.float64)


def make(case):
    cfg, params32 = rm.load_model(os.path.join(FIXTURES, case + ".safetensors"))
    expected, _ = safetensors_io.read_torch(os.path.join(FIXTURES, case + ".expected.safetensors"))
    params = {k: v.to(torch.float64) for k, v in params32.items()}
    src_ids = expected["src_ids"].long() if "src_ids" in expected else None
    tgt_ids = expected["tgt_ids"].long()
    points, parts, dec_w, enc_w = walk(cfg, params, src_ids, tgt_ids)
    lens = torch.stack([readout(cfg, params, x) for x in points])
    logits = rm.forward(cfg, params, src_ids, tgt_ids)["logits"]
    assert torch.allclose(lens[-1], logits, atol=1e-10), "the last lens point must equal the logits"
    pos = tgt_ids.shape[0] - 1
    order = torch.argsort(logits[pos], descending=True, stable=True)
    token, other = int(order[0]), int(order[1])
    wu = rm.generator_weight(cfg, params)
    direction = wu[token] - wu[other]
    values = [float(p[pos] @ direction) for p in parts]
    bias = params["generator.bias"]
    values.append(float(bias[token] - bias[other]))
    total = float(logits[pos, token] - logits[pos, other])
    assert abs(sum(values) - total) < 1e-9, (sum(values), total)
    out = OrderedDict()
    out["lens.logits"] = lens
    out["dla.parts"] = torch.tensor(values, dtype=torch.float64)
    out["dla.total"] = torch.tensor([total], dtype=torch.float64)
    out["dla.query"] = torch.tensor([pos, token, other], dtype=torch.int64)
    out["rollout.decoder"] = rollout(dec_w)
    if enc_w:
        out["rollout.encoder"] = rollout(enc_w)
    ids = [int(t) for t in tgt_ids]
    pats = patterns(ids)
    scores = torch.zeros(4, len(dec_w), cfg["n_heads"], dtype=torch.float64)
    for l, w in enumerate(dec_w):
        for hh in range(cfg["n_heads"]):
            a = w[hh]
            for k, pat in enumerate(pats):
                scores[k, l, hh] = (a * pat).sum() / a.sum()
    out["detect.decoder"] = scores
    meta = OrderedDict([("stepformer.case", case),
                        ("stepformer.reference", "tests/reference/make_inspect_fixtures.py, float64, stored as F32")])
    add_ablation_and_patching(cfg, params, src_ids, tgt_ids, out, meta)
    ints = {"dla.query", "run.tgt_ids", "patch.clean_ids", "patch.corrupt_ids", "patch.query"}
    dtypes = {n: ("I64" if n in ints else "F32") for n in out}
    os.makedirs(os.path.join(FIXTURES, "inspect"), exist_ok=True)
    path = os.path.join(FIXTURES, "inspect", case + ".inspect.safetensors")
    safetensors_io.write(path, out, meta, dtypes)
    print("%-28s points %2d  parts %3d  total %+.6f  %s" % (case, lens.shape[0], len(values), total, path))


def main():
    torch.set_num_threads(1)
    for case in sys.argv[1:] or CASES:
        make(case)


if __name__ == "__main__":
    main()

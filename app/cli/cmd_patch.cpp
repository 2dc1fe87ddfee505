// `stepformer patch`: activation patching (core/analysis/patching.h) — the corrupted prompt run
// again with one activation of the clean run put back, for every layer and position (or head),
// and the recovered logit difference written as CSV.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "analysis/patching.h"
#include "args.h"
#include "commands.h"
#include "io/atomic_file.h"
#include "io/checkpoint.h"
#include "paths.h"

namespace sf::cli {

namespace {

// A CSV field: quoted when it holds a comma, a quote or a line break (quotes doubled).
std::string csv(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

}  // namespace

static int cmd_patch(int argc, char** argv) {
  Args a(argc, argv, 2, {}, {"--model", "--clean", "--corrupt", "--answer", "--wrong", "--what", "--tgt", "--out"});
  for (const char* o : {"--model", "--clean", "--corrupt", "--answer", "--wrong", "--what", "--out"})
    if (a.ok()) a.require(o);
  if (!a.ok()) {
    std::cerr << "stepformer patch: " << a.error() << "\n";
    return 2;
  }
  auto what = parse_patch_what(a.str("--what"));
  if (!what) {
    std::cerr << "stepformer patch: " << what.error() << "\n";
    return 1;
  }
  if (const int code = check_output("patch", "--out", a.str("--out"), {{"--model", a.str("--model")}})) return code;
  auto m = load_model(find_model(a.str("--model")));
  if (!m) {
    std::cerr << "stepformer patch: " << m.error() << "\n";
    return 1;
  }
  const Config& c = m->config;
  const auto fail = [](const std::string& msg) {
    std::cerr << "stepformer patch: " << msg << "\n";
    return 1;
  };
  if (a.has("--tgt") && !(c.has_encoder() && c.has_decoder()))
    return fail("--tgt: expected it only for an encoder-decoder model (the decoder input), found a " +
                std::string(to_string(c.arch)) + " model");
  PatchInputs p;
  for (auto [opt, in] : {std::pair<const char*, PreparedInput*>{"--clean", &p.clean}, {"--corrupt", &p.corrupt}}) {
    auto r = prepare_input(*m, a.str(opt), a.str("--tgt"));
    if (!r) return fail(std::string(opt) + ": " + r.error());
    for (const std::string& w : r->warnings) std::cerr << "warning: " << opt << ": " << w << "\n";
    *in = std::move(*r);
  }
  const Vocab& v = output_vocab(c);
  auto answer = token_from_text(v, "--answer", a.str("--answer"));
  if (!answer) return fail(answer.error());
  auto wrong = token_from_text(v, "--wrong", a.str("--wrong"));
  if (!wrong) return fail(wrong.error());
  p.answer = *answer;
  p.wrong = *wrong;
  const bool tty = isatty(2);
  auto r = activation_patching(*m, p, *what, [&](int done, int total) {
    if (tty) std::fprintf(stderr, "\rpatched runs %d/%d", done, total);
    if (tty && done == total) std::fprintf(stderr, "\n");
  });
  if (!r) return fail(r.error());

  const std::vector<int>& ids = c.has_decoder() ? p.corrupt.tgt_ids : p.corrupt.src_ids;
  std::ostringstream out;
  out.precision(9);
  if (per_head(*what)) {
    out << "layer,head,recovered\n";
    for (int l = 0; l < r->rows(); ++l)
      for (int h = 0; h < r->cols(); ++h) out << l << "," << h << "," << r->recovered[size_t(l)][size_t(h)] << "\n";
  } else {
    out << "layer,position,token,recovered\n";
    for (int l = 0; l < r->rows(); ++l)
      for (int i = 0; i < r->cols(); ++i)
        out << l << "," << i << "," << csv(v.token(ids[size_t(i)])) << "," << r->recovered[size_t(l)][size_t(i)]
            << "\n";
  }
  if (auto ok = write_file_atomic(a.str("--out"), out.str()); !ok) return fail(ok.error());
  int bl = 0, bi = 0;
  for (int l = 0; l < r->rows(); ++l)
    for (int i = 0; i < r->cols(); ++i)
      if (r->recovered[size_t(l)][size_t(i)] > r->recovered[size_t(bl)][size_t(bi)]) bl = l, bi = i;
  std::printf("logit(%s) - logit(%s) at position %d: clean %.6g, corrupted %.6g\n", v.token(p.answer).c_str(),
              v.token(p.wrong).c_str(), r->position, r->clean_ld, r->corrupt_ld);
  std::printf("most recovered: layer %d %s %d: %.4f\n", bl, per_head(*what) ? "head" : "position", bi,
              r->recovered[size_t(bl)][size_t(bi)]);
  std::printf("wrote %d x %d %s cells to %s\n", r->rows(), r->cols(), to_string(*what), a.str("--out").c_str());
  return 0;
}

STEPFORMER_COMMAND(
    reg_patch, "patch",
    "stepformer patch --model M --clean \"...\" --corrupt \"...\" --answer TOK --wrong TOK\n"
    "    --what resid|attn|cross|mlp|heads|cross-heads [--tgt \"...\"] --out P.csv\n"
    "    activation patching: the corrupted run with one activation of the clean run put back, per\n"
    "    layer and position (or head); writes the recovered logit difference (0 = corrupted, 1 = clean)",
    "options:\n"
    "  --model M          the model: a .safetensors file or a Hugging Face folder (required)\n"
    "  --clean \"...\"      the clean prompt (an encoder-decoder model's source) (required)\n"
    "  --corrupt \"...\"    the corrupted prompt, of the same number of tokens (required)\n"
    "  --answer TOK       the token the clean prompt should predict: a vocabulary entry, or a text the\n"
    "                     tokenizer reads as one token (required)\n"
    "  --wrong TOK        the token to compare it with (required); the metric is\n"
    "                     logit(answer) - logit(wrong) at the last position (an encoder-only model: at\n"
    "                     its first [MASK]), normalised to 0 = corrupted, 1 = clean\n"
    "  --what W           what is patched (required): resid (the stream entering layer l at position p),\n"
    "                     attn, cross, mlp (a sublayer's output at position p), heads, cross-heads (one\n"
    "                     head at every position) — of the decoder, or an encoder-only model's encoder\n"
    "  --tgt \"...\"        an encoder-decoder model's decoder input after <s> (the same for both runs)\n"
    "  --out P.csv        where to write the grid, one row per cell after a header row:\n"
    "                     layer,position,token,recovered (heads: layer,head,recovered) (required)\n"
    "example:\n"
    "  stepformer patch --model assets/models/copy-preln.safetensors --clean \"1 2 3\" --corrupt \"1 5 3\"\n"
    "    --answer 1 --wrong 5 --what resid --out /tmp/p.csv\n",
    cmd_patch);

}  // namespace sf::cli

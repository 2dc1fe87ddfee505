#include "model/model.h"

#include "model/positional_encoding.h"

namespace sf {

Model Model::make(Config c, Weights w) {
  Model m{std::move(c), std::move(w), Mat()};
  if (m.config.positional == Positional::Sinusoidal) m.sinusoid = sinusoidal_pe(m.config.max_len, m.config.d_model);
  return m;
}

Result<bool> check_ids(const Model& m, const std::vector<int>& ids, bool source) {
  const char* side = source ? "source" : "target";
  const Vocab& v = source ? m.config.src_vocab : m.config.tgt_vocab;
  if (ids.empty()) return Error{std::string(side) + ": expected at least one token, found an empty input"};
  if (static_cast<int>(ids.size()) > m.config.max_len)
    return Error{std::string(side) + ": " + std::to_string(ids.size()) + " tokens, but the model's max_len is " +
                 std::to_string(m.config.max_len)};
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= v.size())
      return Error{std::string(side) + ": token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                   " is outside the vocabulary of " + std::to_string(v.size())};
  return true;
}

std::vector<int> with_bos(const Vocab& v, const std::vector<int>& ids) {
  std::vector<int> out{v.bos()};
  out.insert(out.end(), ids.begin(), ids.end());
  return out;
}

}  // namespace sf

#include "cli/masked.h"

#include <cstdio>

#include "stepper/decoding.h"
#include "stepper/run.h"

namespace sf::cli {

void print_masked_predictions(const Model& m, const std::vector<int>& ids, const Mat& logits) {
  const Vocab& v = m.config.src_vocab;
  if (!m.config.mlm_head || logits.size() == 0) {
    std::printf(
        "encoder-only model without a masked-LM head: nothing to predict (`stepformer trace` writes its "
        "hidden states, encoder.output)\n");
    return;
  }
  const int mask = mask_token(v);
  const std::vector<MaskedPrediction> preds = masked_predictions(ids, logits, mask, 5);
  if (preds.empty()) {
    std::printf("no %s in the input: write %s where a token should be predicted, e.g. \"the cat %s on the mat\"\n",
                mask >= 0 ? v.token(mask).c_str() : "[MASK]", mask >= 0 ? v.token(mask).c_str() : "[MASK]",
                mask >= 0 ? v.token(mask).c_str() : "[MASK]");
    return;
  }
  std::printf("masked-token predictions (MLM head, top 5 of %d):\n", v.size());
  for (const MaskedPrediction& p : preds) {
    std::printf("  position %-3d %-8s →", p.position, v.token(p.input_id).c_str());
    for (size_t i = 0; i < p.top.size(); ++i)
      std::printf("%s %s %.3f", i ? " |" : "", v.token(p.top[i].id).c_str(), p.top[i].prob);
    std::printf("\n");
  }
}

}  // namespace sf::cli

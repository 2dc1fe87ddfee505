// bpe_merges.h — applying ranked BPE merges to one word's symbols, as OpenAI's encoder.py and
// Hugging Face's tokenizers (models/bpe/word.rs, merge_all) do.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace sf {

class BpeMerges {
 public:
  // (left id, right id, merged id) in rank order (rank = index); a repeated pair keeps its first rank.
  explicit BpeMerges(const std::vector<std::array<int, 3>>& merges);

  // Repeatedly merges the adjacent pair of lowest rank — leftmost first, every occurrence — until
  // no adjacent pair is a merge. (n) symbol ids in, the merged ids out.
  std::vector<int> apply(std::vector<int> parts) const;
  size_t size() const { return merges_.size(); }

 private:
  struct Merge {
    int rank, merged;
  };
  std::unordered_map<uint64_t, Merge> merges_;  // (left id << 32 | right id) -> rank, merged id
};

}  // namespace sf

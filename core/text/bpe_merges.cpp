#include "text/bpe_merges.h"

#include <functional>
#include <queue>

namespace sf {

BpeMerges::BpeMerges(const std::vector<std::array<int, 3>>& merges) {
  merges_.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const uint64_t key =
        static_cast<uint64_t>(static_cast<uint32_t>(merges[r][0])) << 32 | static_cast<uint32_t>(merges[r][1]);
    merges_.emplace(key, Merge{static_cast<int>(r), merges[r][2]});  // a repeated pair keeps its first rank
  }
}

// Repeatedly merges the adjacent pair of lowest rank — all its non-overlapping occurrences, left
// to right — until no adjacent pair is a merge (OpenAI's encoder; the order matters when a merge
// of a later rank feeds one of an earlier rank). O(n log n): candidate pairs in a heap ordered by
// (rank, position), symbols in a linked list. One pass pops every candidate of the lowest rank
// before the pairs its merges create are pushed — those cannot have that rank (a merged symbol is
// longer than either part), so each pass sees exactly the pairs the word had when it began.
std::vector<int> BpeMerges::apply(std::vector<int> parts) const {
  const int n = static_cast<int>(parts.size());
  if (n < 2) return parts;
  std::vector<int> next(static_cast<size_t>(n)), prev(static_cast<size_t>(n));  // -1: none
  for (int i = 0; i < n; ++i) {
    next[static_cast<size_t>(i)] = i + 1 < n ? i + 1 : -1;
    prev[static_cast<size_t>(i)] = i - 1;
  }
  struct Candidate {
    int rank, pos, left, right;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  auto consider = [&](int pos) {
    if (pos < 0 || next[static_cast<size_t>(pos)] < 0) return;
    const int l = parts[static_cast<size_t>(pos)], r = parts[static_cast<size_t>(next[static_cast<size_t>(pos)])];
    auto it = merges_.find(static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32 | static_cast<uint32_t>(r));
    if (it != merges_.end()) heap.push({it->second.rank, pos, l, r});
  };
  for (int i = 0; i + 1 < n; ++i) consider(i);
  std::vector<char> alive(static_cast<size_t>(n), 1);
  std::vector<int> merged_at;
  while (!heap.empty()) {
    const int rank = heap.top().rank;
    merged_at.clear();
    while (!heap.empty() && heap.top().rank == rank) {
      const Candidate c = heap.top();
      heap.pop();
      const auto p = static_cast<size_t>(c.pos);
      const int q = next[p];
      // Stale when a symbol of the pair was merged away since the candidate was pushed.
      if (!alive[p] || parts[p] != c.left || q < 0 || parts[static_cast<size_t>(q)] != c.right) continue;
      parts[p] = merges_.at(static_cast<uint64_t>(static_cast<uint32_t>(c.left)) << 32 | static_cast<uint32_t>(c.right))
                     .merged;
      alive[static_cast<size_t>(q)] = 0;
      next[p] = next[static_cast<size_t>(q)];
      if (next[p] >= 0) prev[static_cast<size_t>(next[p])] = c.pos;
      merged_at.push_back(c.pos);
    }
    for (int pos : merged_at) {
      consider(prev[static_cast<size_t>(pos)]);
      consider(pos);
    }
  }
  std::vector<int> out;
  for (int i = 0; i >= 0; i = next[static_cast<size_t>(i)]) out.push_back(parts[static_cast<size_t>(i)]);
  return out;
}

}  // namespace sf

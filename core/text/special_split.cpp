#include "text/special_split.h"

#include <algorithm>

namespace sf {

std::vector<TextSegment> split_specials(const Vocab& v, const std::string& text, const std::vector<int>& specials) {
  std::vector<int> order(specials);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return v.token(a).size() > v.token(b).size(); });
  std::vector<TextSegment> out;
  size_t start = 0;
  for (size_t i = 0; i < text.size();) {
    int hit = -1;
    for (int id : order)
      if (text.compare(i, v.token(id).size(), v.token(id)) == 0) {
        hit = id;
        break;
      }
    if (hit < 0) {
      ++i;
      continue;
    }
    if (i > start) out.push_back({start, i - start, -1});
    out.push_back({i, v.token(hit).size(), hit});
    i += v.token(hit).size();
    start = i;
  }
  if (start < text.size()) out.push_back({start, text.size() - start, -1});
  return out;
}

}  // namespace sf

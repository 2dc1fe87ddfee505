#include "text/regex_split.h"

#include <algorithm>

#include <unicode/regex.h>
#include <unicode/unistr.h>
#include <unicode/utext.h>

namespace sf {

struct SplitRegex::Compiled {
  std::unique_ptr<icu::RegexPattern> pattern;
};

namespace {

// \s -> \p{White_Space}, \S -> \P{White_Space}; every other escape copied as it is.
std::string white_space_as_property(const std::string& p) {
  std::string out;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != '\\' || i + 1 == p.size()) {
      out += p[i];
      continue;
    }
    const char e = p[++i];
    if (e == 's')
      out += "\\p{White_Space}";
    else if (e == 'S')
      out += "\\P{White_Space}";
    else
      out += {'\\', e};
  }
  return out;
}

}  // namespace

Result<SplitRegex> SplitRegex::compile(const std::string& pattern, bool literal, const std::string& what) {
  UErrorCode status = U_ZERO_ERROR;
  UParseError where{};
  const icu::UnicodeString source = icu::UnicodeString::fromUTF8(literal ? pattern : white_space_as_property(pattern));
  std::unique_ptr<icu::RegexPattern> re(
      icu::RegexPattern::compile(source, literal ? UREGEX_LITERAL : 0, where, status));
  if (U_FAILURE(status) || !re)
    return Error{what + ": expected a regular expression, found '" + pattern + "', which does not compile (" +
                 u_errorName(status) + (literal ? "" : " near offset " + std::to_string(where.offset)) + ")"};
  SplitRegex r;
  r.re_ = std::make_shared<const Compiled>(Compiled{std::move(re)});
  return r;
}

Matches SplitRegex::find(const std::string& text) const {
  if (text.empty()) return {{0, 0, false}};
  UErrorCode status = U_ZERO_ERROR;
  UText* ut = utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status);
  std::unique_ptr<icu::RegexMatcher> m(re_->pattern->matcher(status));
  Matches out;
  if (U_FAILURE(status) || !m) {
    utext_close(ut);
    return {{0, text.size(), false}};
  }
  m->reset(ut);
  size_t prev = 0;
  while (m->find(status) && U_SUCCESS(status)) {
    const auto b = static_cast<size_t>(m->start64(status)), e = static_cast<size_t>(m->end64(status));
    if (prev != b) out.push_back({prev, b, false});
    out.push_back({b, e, true});
    prev = e;
  }
  if (prev != text.size()) out.push_back({prev, text.size(), false});
  m.reset();
  utext_close(ut);
  return out;
}

std::vector<std::pair<size_t, size_t>> split_by(const Matches& m, SplitBehavior behavior) {
  std::vector<std::pair<size_t, size_t>> out;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::Isolated:
      for (const Span& s : m) out.emplace_back(s.begin, s.end);
      break;
    case SplitBehavior::Removed:
      for (const Span& s : m)
        if (!s.match) out.emplace_back(s.begin, s.end);
      break;
    case SplitBehavior::Contiguous:
      for (const Span& s : m) {
        if (s.match == previous_match && !out.empty())
          out.back().second = s.end;
        else
          out.emplace_back(s.begin, s.end);
        previous_match = s.match;
      }
      break;
    case SplitBehavior::MergedWithPrevious:
      for (const Span& s : m) {
        if (s.match && !previous_match && !out.empty())
          out.back().second = s.end;
        else
          out.emplace_back(s.begin, s.end);
        previous_match = s.match;
      }
      break;
    case SplitBehavior::MergedWithNext:
      for (auto it = m.rbegin(); it != m.rend(); ++it) {
        if (it->match && !previous_match && !out.empty())
          out.back().first = it->begin;
        else
          out.emplace_back(it->begin, it->end);
        previous_match = it->match;
      }
      std::reverse(out.begin(), out.end());
      break;
  }
  return out;
}

}  // namespace sf

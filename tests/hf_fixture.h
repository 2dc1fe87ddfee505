// hf_fixture.h — a tiny hub fixture (tests/fixtures/hf/NAME) opened with a stand-in word vocabulary
// of its vocab_size (t4, t5, …), for tests that need the weights but not the tokenizer; `widen`:
// every weight widened to float32 (load_hf_model's option), else 16-bit matrices stay 16-bit.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "io/hf_model.h"
#include "test_util.h"

namespace sf::test {

inline Model open_hf_stand_in(const std::string& name, bool widen = false) {
  auto files = find_hf_files(name.find('/') == std::string::npos ? fixture("hf/" + name) : name);
  EXPECT_TRUE(files.ok()) << files.error();
  auto h = read_hf_config(*files);
  EXPECT_TRUE(h.ok()) << h.error();
  std::vector<std::string> t{"<pad>", "<s>", "</s>", "<unk>"};
  while (static_cast<int>(t.size()) < h->vocab_size) t.push_back("t" + std::to_string(t.size()));
  HfVocabs v;
  v.tgt = v.src = *Vocab::make(t, Tokenizer::Word, "stand-in");
  auto m = load_hf_model(*files, *h, v, widen);
  EXPECT_TRUE(m.ok()) << m.error();
  return m.ok() ? std::move(*m) : Model{};
}

}  // namespace sf::test

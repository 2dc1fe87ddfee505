// packed_only_test.cpp — a model whose projections are held packed only, as pack_for_inference
// holds one over its second-copy bound (GPT-2 and up): the packing reads back as the very rows it
// came from, so every view of the weights, the reference path and a cached step see what the rows
// give, and drop_packed hands the rows back.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/threads.h"
#include "model/linear.h"
#include "model/packed_gemm.h"
#include "reference/linear.h"
#include "stepper/session.h"
#include "test_util.h"

namespace sf {
namespace {

const char* const kPackedCases[] = {"encdec_post_relu_sin", "encdec_pre_gelu_shared", "deconly_pre_gelu",
                                    "deconly_post_relu_learned"};

TEST(PackedOnly, UnpackingGivesBackTheSameFloats) {
  // Below one panel, odd sizes, several panels with a partial last one.
  for (const auto& [out, in] : std::vector<std::pair<int, int>>{{5, 3}, {47, 130}, {241, 77}, {1000, 700}}) {
    const Mat w = Mat::Random(out, in);
    const PackedWeight p = pack_weight(w);
    EXPECT_TRUE(unpacked(p) == w) << out << "x" << in;
    Mat last3(3, in);
    unpack_bt_rows(p.wt, out - 3, 3, last3.data());
    EXPECT_TRUE(last3 == w.bottomRows(3)) << out << "x" << in;
  }
}

TEST(PackedOnly, OneRowOnThePackingIsItsRowOfTheBatch) {
  const Mat w = Mat::Random(777, 300);  // a partial last panel
  const Mat x = Mat::Random(9, 300);
  const RowVec b = RowVec::Random(777);
  const PackedWeight p = pack_weight(w);
  Mat all;
  packed_product(x, p, all, &b);
  EXPECT_LE((all - ((x * w.transpose()).rowwise() + b)).cwiseAbs().maxCoeff(), 1e-4f);
  for (int i = 0; i < x.rows(); ++i) {
    Mat one;
    packed_product(x.row(i), p, one, &b);
    EXPECT_TRUE(one == all.row(i)) << "row " << i << ": each output's sum runs in the same order";
  }
}

TEST(PackedOnly, MatrixVectorProductOnThePanelsIsTheKernelsSum) {
  const Mat w = Mat::Random(777, 300);
  const Mat x = Mat::Random(1, 300);
  const PackedWeight p = pack_weight(w);
  Mat want;
  packed_product(x, p, want);  // the kernel on one row: each sum from zero, i = 0, 1, …
  std::vector<float> whole(777), split(777);
  matvec_packed(x.data(), p.wt, 0, 777, whole.data());
  EXPECT_EQ(whole, std::vector<float>(want.data(), want.data() + want.size()));
  // Ranges that start and end inside panels, as threads split the rows.
  for (Eigen::Index cut : {Eigen::Index{16}, Eigen::Index{40}, packed_panel_width(), Eigen::Index{770}}) {
    matvec_packed(x.data(), p.wt, 0, cut, split.data());
    matvec_packed(x.data(), p.wt, cut, 777, split.data());
    EXPECT_EQ(split, whole) << "cut at " << cut;
  }
  // Through a packed-only Linear, split between cores or not: the same bits.
  Linear l;
  l.packed = std::make_shared<const PackedWeight>(p);
  l.bias = RowVec::Random(777);
  Mat one;
  linear_forward(x, l, one);
  EXPECT_LE((one - (x * w.transpose() + l.bias)).cwiseAbs().maxCoeff(), 1e-4f);
  for (int n : {2, 3}) {
    const ScopedThreads t(n);
    Mat got;
    linear_forward(x, l, got);
    EXPECT_TRUE(got == one) << n << " threads";
  }
}

// The fixture as load_model holds it (rows and a packed copy), and held packed only.
std::pair<std::shared_ptr<const Model>, std::shared_ptr<const Model>> both(const std::string& cs) {
  Model packed = test::load_fixture_model(cs);
  drop_packed(packed.weights);
  pack_for_inference(packed.weights, 0);
  return {test::shared_fixture_model(cs), std::make_shared<const Model>(std::move(packed))};
}

TEST(PackedOnly, ParametersReadBackAsTheirRows) {
  for (const char* cs : kPackedCases) {
    const auto [rows, packed] = both(cs);
    const Weights& w = packed->weights;
    const Linear& q = w.decoder[0].self_attn.q_proj;
    ASSERT_TRUE(q.packed_only()) << cs;
    EXPECT_EQ(q.packed->wt.n, rows->weights.decoder[0].self_attn.q_proj.weight.rows()) << cs;
    // The output projection keeps its rows (the embedding reads them); over a bound of 0, no copy.
    EXPECT_FALSE(w.generator.packed) << cs;
    const std::vector<ParamRef> want = param_table(rows->weights, rows->config),
                                have = param_table(packed->weights, packed->config);
    ASSERT_EQ(have.size(), want.size()) << cs;
    int packed_refs = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(have[i].name, want[i].name) << cs;
      EXPECT_EQ(have[i].rows, want[i].rows) << cs << ": " << want[i].name;
      EXPECT_EQ(have[i].cols, want[i].cols) << cs << ": " << want[i].name;
      EXPECT_EQ(have[i].values(), want[i].values()) << cs << ": " << want[i].name;
      packed_refs += have[i].packed != nullptr;
    }
    EXPECT_GE(packed_refs, 4 * rows->config.n_decoder_layers) << cs;
    EXPECT_EQ(held_bytes(w, packed->config), held_bytes(rows->weights, rows->config)) << cs;
    EXPECT_TRUE(float_weight(w.decoder[0].self_attn.o_proj) == rows->weights.decoder[0].self_attn.o_proj.weight);

    // The reference path reads the same floats.
    const Mat x = Mat::Random(3, packed->config.d_model);
    EXPECT_TRUE(ref::linear(x, q) == ref::linear(x, rows->weights.decoder[0].self_attn.q_proj)) << cs;

    // A session's tensor view of a weight.
    auto s = Session::create(packed, test::prompt_of(packed->config, 3));
    ASSERT_TRUE(s.ok()) << cs << ": " << s.error();
    const std::string k_name = "decoder.layers.0.self_attn.k_proj.weight";
    const auto t = s->tensor(k_name);
    ASSERT_TRUE(t) << cs;
    const Mat& k = rows->weights.decoder[0].self_attn.k_proj.weight;
    EXPECT_EQ(t->shape, (std::vector<int64_t>{k.rows(), k.cols()})) << cs;
    EXPECT_EQ(t->f32, std::vector<float>(k.data(), k.data() + k.size())) << cs;

    // Back to rows, for training: the rows it was loaded with.
    Model back = *packed;
    drop_packed(back.weights);
    EXPECT_FALSE(back.weights.decoder[0].self_attn.q_proj.packed) << cs;
    EXPECT_TRUE(back.weights.decoder[0].self_attn.q_proj.weight == rows->weights.decoder[0].self_attn.q_proj.weight)
        << cs;
    EXPECT_TRUE(back.weights.decoder.back().ffn.fc2.weight == rows->weights.decoder.back().ffn.fc2.weight) << cs;
  }
}

TEST(PackedOnly, CachedDecodingGivesWhatTheRowsGive) {
  for (const char* cs : kPackedCases) {
    const auto [rows, packed] = both(cs);
    auto a = Session::create(rows, test::prompt_of(rows->config, 3));
    auto b = Session::create(packed, test::prompt_of(packed->config, 3));
    ASSERT_TRUE(a.ok() && b.ok()) << cs;
    a->run_to_end();
    b->run_to_end();
    ASSERT_EQ(a->steps().size(), b->steps().size()) << cs;
    ASSERT_GE(a->steps().size(), 2u) << cs << ": at least one cached step";
    for (size_t t = 0; t < a->steps().size(); ++t) {
      const StepRecord& sa = *a->steps()[t];
      const StepRecord& sb = *b->steps()[t];
      EXPECT_EQ(sa.chosen, sb.chosen) << cs << ", step " << t;
      const Mat& la = sa.trace->logits;
      const Mat& lb = sb.trace->logits;
      ASSERT_EQ(la.rows(), lb.rows()) << cs << ", step " << t;
      ASSERT_EQ(la.cols(), lb.cols()) << cs << ", step " << t;
      // One row on the packing (the kernel's order of each sum) against one on the rows (the
      // matrix-vector product's): the same sums to float rounding.
      EXPECT_LE((la - lb).cwiseAbs().maxCoeff(), 1e-5f) << cs << ", step " << t;
    }
  }
}

}  // namespace
}  // namespace sf

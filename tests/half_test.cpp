// half_test.cpp — weights kept 16-bit (base/half.h): the conversions against the formats'
// definitions (core/reference/half_linear.h) for every value, the matrix-vector kernel — the
// build's SIMD form and the portable form, which every machine runs — against the reference
// product within the float32 error of a sum in another order, the same bits whatever the split of
// rows, the panel-widening GEMM against the float32 GEMM, linear_forward's dispatch, and the
// BF16 and F16 hub checkpoints run on their 16-bit matrices against the same files widened.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "base/gemm.h"
#include "base/half.h"
#include "base/threads.h"
#include "hf_fixture.h"
#include "model/decoder.h"
#include "model/linear.h"
#include "reference/decoder_family.h"
#include "reference/half_linear.h"
#include "reference/linear.h"
#include "row_ranges.h"
#include "test_util.h"

namespace sf {
namespace {

constexpr WeightStorage kBoth[] = {WeightStorage::BF16, WeightStorage::F16};

bool finite_bits(uint16_t h, WeightStorage s) {
  const uint16_t exp = s == WeightStorage::BF16 ? 0x7f80u : 0x7c00u;
  return (h & exp) != exp;
}

// Random finite values of magnitude about 2^-12 … 2^4 (and some subnormal F16s), either sign.
HalfMat random_half(Eigen::Index rows, Eigen::Index cols, WeightStorage s, unsigned seed) {
  HalfMat w = HalfMat::make(rows, cols, s);
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < w.size(); ++i) {
    uint16_t h;
    do {
      const uint32_t r = rng();
      if (s == WeightStorage::BF16) {
        const uint32_t e = 115 + r % 16;  // 2^-12 … 2^3
        h = static_cast<uint16_t>(((r >> 16) & 0x8000u) | (e << 7) | ((r >> 4) & 0x7fu));
      } else {
        const uint32_t e = r % 19;  // 0 (subnormal) … 2^3
        h = static_cast<uint16_t>(((r >> 16) & 0x8000u) | (e << 10) | ((r >> 5) & 0x3ffu));
      }
    } while (!finite_bits(h, s));
    w.data()[i] = h;
  }
  return w;
}

TEST(Half, EveryFiniteValueWidensExactlyAsItsFormatDefines) {
  for (WeightStorage s : kBoth) {
    std::vector<uint16_t> all;
    for (uint32_t h = 0; h < 65536; ++h)
      if (finite_bits(static_cast<uint16_t>(h), s)) all.push_back(static_cast<uint16_t>(h));
    std::vector<float> simd(all.size()), plain(all.size());
    widen(all.data(), static_cast<int64_t>(all.size()), s, simd.data());
    portable::widen(all.data(), static_cast<int64_t>(all.size()), s, plain.data());
    for (size_t i = 0; i < all.size(); ++i) {
      const float want = ref::half_value(all[i], s);
      ASSERT_EQ(half_to_float(all[i], s), want) << to_string(s) << " " << all[i];
      ASSERT_EQ(simd[i], want) << to_string(s) << " " << all[i] << " (" << half_kernel_name(s) << ")";
      ASSERT_EQ(plain[i], want) << to_string(s) << " " << all[i];
    }
  }
  // Two values by hand: BF16 0x3fc0 = 1.5, F16 0x3e00 = 1.5; F16 0x0001 = 2^-24.
  EXPECT_EQ(ref::half_value(0x3fc0, WeightStorage::BF16), 1.5f);
  EXPECT_EQ(ref::half_value(0x3e00, WeightStorage::F16), 1.5f);
  EXPECT_EQ(ref::half_value(0x0001, WeightStorage::F16), std::ldexp(1.0f, -24));
  EXPECT_EQ(ref::half_value(0xc000, WeightStorage::F16), -2.0f);
}

TEST(Half, MatVecEqualsTheReferenceProductUpToSummationOrder) {
  // Columns: shorter than one register, one register, odd tails, several registers and a tail;
  // rows: fewer than a group of four, groups and a remainder.
  const std::pair<int, int> shapes[] = {{1, 1}, {3, 7}, {5, 16}, {9, 17}, {4, 100}, {13, 257}, {33, 896}};
  unsigned seed = 1;
  for (WeightStorage s : kBoth)
    for (auto [rows, cols] : shapes) {
      const HalfMat w = random_half(rows, cols, s, seed++);
      const Mat x = Mat::Random(1, cols);
      const Mat want = ref::half_linear(x, w, RowVec::Zero(rows));  // (1, rows)
      const Mat wf = ref::widen(w);
      std::vector<float> fast(static_cast<size_t>(rows)), plain(static_cast<size_t>(rows));
      matvec_half(x.data(), w, 0, rows, fast.data());
      portable::matvec_half(x.data(), w, 0, rows, plain.data());
      for (int r = 0; r < rows; ++r) {
        const double tol = 2 * test::float_sum_bound(x.data(), wf, r);
        EXPECT_LE(std::fabs(fast[static_cast<size_t>(r)] - want(0, r)), tol)
            << to_string(s) << " " << rows << "x" << cols << " row " << r << " (" << half_kernel_name(s) << ")";
        EXPECT_LE(std::fabs(plain[static_cast<size_t>(r)] - want(0, r)), tol)
            << to_string(s) << " portable " << rows << "x" << cols << " row " << r;
      }
    }
}

TEST(Half, AnyRangeOfRowsGivesTheSameBits) {
  for (WeightStorage s : kBoth) {
    const HalfMat w = random_half(kRangeRows, 211, s, 7);
    const Mat x = Mat::Random(1, 211);
    expect_same_bits_in_parts([&](int r0, int r1, float* y) { matvec_half(x.data(), w, r0, r1, y); },
                              std::string(to_string(s)) + " " + half_kernel_name(s));
    expect_same_bits_in_parts([&](int r0, int r1, float* y) { portable::matvec_half(x.data(), w, r0, r1, y); },
                              std::string(to_string(s)) + " portable");
  }
}

TEST(Half, LongAndShortRangesGiveTheSameBits) {
  // A range of 4 MB and more is read as four streams, a shorter one as two (base/half.cpp): the
  // whole 4.5 MB matrix at once and in ranges of 100 rows give every row the same bits.
  constexpr int rows = 2200, cols = 1024;
  for (WeightStorage s : kBoth) {
    const HalfMat w = random_half(rows, cols, s, 11);
    const Mat x = Mat::Random(1, cols);
    std::vector<float> whole(rows), parts(rows);
    matvec_half(x.data(), w, 0, rows, whole.data());
    for (int r0 = 0; r0 < rows; r0 += 100) matvec_half(x.data(), w, r0, std::min(rows, r0 + 100), parts.data());
    EXPECT_EQ(whole, parts) << to_string(s) << " (" << half_kernel_name(s) << ")";
  }
}

TEST(Half, GemmWidensPanelsToTheBitsOfTheFloat32Product) {
  const int before = threads();
  unsigned seed = 100;
  for (int T : {1, 2}) {
    set_threads(T);
    for (WeightStorage s : kBoth)
      for (int m : {2, 7, 30})
        for (auto [n, k] : {std::pair<int, int>{33, 17}, {40, 300}, {70, 520}}) {
          const HalfMat w = random_half(n, k, s, seed++);
          const Mat wf = ref::widen(w), a = Mat::Random(m, k);
          const RowVec bias = RowVec::Random(n);
          Mat got(m, n), want(m, n);
          gemm(m, mat_ref(a), w, got.data(), n, GemmOut::Overwrite, bias.data());
          gemm(m, n, k, mat_ref(a), mat_ref_t(wf), want.data(), n, GemmOut::Overwrite, bias.data());
          ASSERT_TRUE(got == want) << to_string(s) << " " << m << "x" << n << "x" << k << ", " << T << " threads";
          // Held in panels (as a loaded hub folder's weights are): widened a depth block at a time.
          Mat in_panels(m, n);
          gemm(m, mat_ref(a), to_panels(w), in_panels.data(), n, GemmOut::Overwrite, bias.data());
          ASSERT_TRUE(in_panels == want) << to_string(s) << " in panels " << m << "x" << n << "x" << k << ", " << T
                                         << " threads";
        }
  }
  set_threads(before);
}

TEST(Half, PanelsHoldTheSameValues) {
  const Eigen::Index P = packed_panel_width();
  for (WeightStorage s : kBoth)
    for (auto [n, k] : {std::pair<int, int>{1, 5}, {33, 17}, {64, 40}, {70, 9}}) {
      const HalfMat w = random_half(n, k, s, 3);
      const HalfMat p = to_panels(w);
      ASSERT_TRUE(p.in_panels());
      EXPECT_EQ(p.storage, s);
      for (int r = 0; r < n; ++r)
        for (int c = 0; c < k; ++c) ASSERT_EQ(p.at(r, c), w.row(r)[c]) << r << ", " << c;
      // Panel p holds W's rows p·P … as k steps of P values, the last panel padded with zeros.
      if (n > 1 && k > 1) {
        EXPECT_EQ(p.values[static_cast<size_t>(P + 1)], w.row(1)[1]);
      }
      if (n % P != 0) {
        EXPECT_EQ(p.values[static_cast<size_t>(((n / P) * k + k - 1) * P + P - 1)], 0);
      }
      EXPECT_TRUE(p.widened() == w.widened()) << to_string(s) << " " << n << "x" << k;
      Mat rows(2, k);
      p.widen_rows(n - 2 < 0 ? 0 : std::max(0, n - 2), std::min(2, n), rows.data());
      for (int c = 0; c < k; ++c) EXPECT_EQ(rows(0, c), half_to_float(w.row(std::max(0, n - 2))[c], s));
    }
}

TEST(Half, ArrangingInPanelsWorksInPlaceOnlyOnValuesItAloneHolds) {
  const Eigen::Index P = packed_panel_width();
  for (WeightStorage s : kBoth) {
    // Sole owner, whole panels: in place, the same values as a copy in panels.
    HalfMat w = random_half(3 * static_cast<int>(P), 37, s, 5);
    const HalfMat want = to_panels(w);
    const uint16_t* before = w.values.get();
    arrange_in_panels(w);
    ASSERT_TRUE(w.in_panels());
    EXPECT_EQ(w.values.get(), before);
    EXPECT_EQ(std::memcmp(w.values.get(), want.values.get(), static_cast<size_t>(w.size()) * 2), 0);
    arrange_in_panels(w);  // in panels already: unchanged
    EXPECT_EQ(w.panel, P);
    EXPECT_EQ(std::memcmp(w.values.get(), want.values.get(), static_cast<size_t>(w.size()) * 2), 0);

    // Shared with a copy: the copy keeps its rows.
    HalfMat shared = random_half(2 * static_cast<int>(P), 11, s, 6);
    const HalfMat other = shared;
    const Mat rows_before = other.widened();
    arrange_in_panels(shared);
    ASSERT_TRUE(shared.in_panels());
    EXPECT_NE(shared.values.get(), other.values.get());
    EXPECT_FALSE(other.in_panels());
    EXPECT_TRUE(other.widened() == rows_before);
    EXPECT_TRUE(shared.widened() == rows_before);

    // A last panel left partial: a padded copy.
    HalfMat partial = random_half(static_cast<int>(P) + 3, 9, s, 7);
    const Mat partial_rows = partial.widened();
    arrange_in_panels(partial);
    ASSERT_TRUE(partial.in_panels());
    EXPECT_TRUE(partial.widened() == partial_rows);
  }
}

TEST(Half, ACachedStepOnPanelsGivesTheForwardsBits) {
  // In panels, each output's sum is one FMA chain in the kernel's order: a row of a forward (no
  // bias) and the one-row product give the same bits, SIMD and portable alike, for any range.
  unsigned seed = 200;
  for (WeightStorage s : kBoth)
    for (auto [n, k] : {std::pair<int, int>{33, 17}, {kRangeRows, 211}, {100, 300}, {70, 520}}) {
      const HalfMat w = random_half(n, k, s, seed++);
      const HalfMat p = to_panels(w);
      const Mat a = Mat::Random(3, k);
      Mat forward(3, n), from_rows(3, n);
      gemm(3, mat_ref(a), p, forward.data(), n, GemmOut::Overwrite);
      gemm(3, mat_ref(a), w, from_rows.data(), n, GemmOut::Overwrite);
      ASSERT_TRUE(forward == from_rows) << to_string(s) << " " << n << "x" << k;
      for (int i = 0; i < 3; ++i) {
        std::vector<float> fast(static_cast<size_t>(n)), plain(static_cast<size_t>(n));
        matvec_half(a.row(i).data(), p, 0, n, fast.data());
        portable::matvec_half(a.row(i).data(), p, 0, n, plain.data());
        for (int r = 0; r < n; ++r) {
          ASSERT_EQ(fast[static_cast<size_t>(r)], forward(i, r))
              << to_string(s) << " " << n << "x" << k << " output " << r << " (" << half_kernel_name(s) << ")";
          ASSERT_EQ(plain[static_cast<size_t>(r)], forward(i, r)) << to_string(s) << " portable, output " << r;
        }
      }
      if (n == kRangeRows) {
        const Mat x = a.row(0);
        expect_same_bits_in_parts([&](int r0, int r1, float* y) { matvec_half(x.data(), p, r0, r1, y); },
                                  std::string(to_string(s)) + " panels " + half_kernel_name(s));
      }
    }
}

TEST(Half, LongAndShortRangesOfPanelsGiveTheSameBits) {
  constexpr int rows = 2200, cols = 1024;  // 4.5 MB: read as four streams on every host
  for (WeightStorage s : kBoth) {
    const HalfMat w = to_panels(random_half(rows, cols, s, 12));
    const Mat x = Mat::Random(1, cols);
    std::vector<float> whole(rows), parts(rows);
    matvec_half(x.data(), w, 0, rows, whole.data());
    for (int r0 = 0; r0 < rows; r0 += 100) matvec_half(x.data(), w, r0, std::min(rows, r0 + 100), parts.data());
    EXPECT_EQ(whole, parts) << to_string(s) << " (" << half_kernel_name(s) << ")";
  }
}

TEST(Half, LinearForwardReadsTheStorageItHolds) {
  const int before = threads();
  for (WeightStorage s : kBoth) {
    for (bool panels : {false, true}) {
      Linear l;  // (600, 512): large enough for a one-row product to be split between threads
      l.half = random_half(600, 512, s, 11);
      if (panels) l.half = to_panels(l.half);
      l.bias = RowVec::Random(600);
      ASSERT_EQ(l.storage(), s);
      Linear f32;
      f32.weight = ref::widen(l.half);
      f32.bias = l.bias;
      for (int rows : {1, 20}) {
        const Mat x = Mat::Random(rows, 512);
        const Mat want = ref::linear(x, l);
        ASSERT_EQ(want.cols(), 600);
        Mat one, two, plain;
        set_threads(1);
        linear_forward(x, l, one);
        set_threads(2);
        linear_forward(x, l, two);
        EXPECT_TRUE(one == two) << to_string(s) << ", " << rows << " rows: the split changes no bit";
        for (int i = 0; i < rows; ++i)
          for (int r = 0; r < 600; ++r)
            ASSERT_LE(std::fabs(one(i, r) - want(i, r)),
                      2 * test::float_sum_bound(x.row(i).data(), f32.weight, r) + 1e-6 * (1 + std::fabs(want(i, r))))
                << to_string(s) << " row " << i << " output " << r;
        if (rows > 1) {  // several rows: the float32 kernel on the same values, the same bits
          linear_forward(x, f32, plain);
          EXPECT_TRUE(one == plain) << to_string(s);
        }
      }
    }
  }
  set_threads(before);
}

// Largest |a − b| relative to 1 + |b|.
double rel_diff(const Mat& a, const Mat& b) { return ((a - b).array().abs() / (1.0f + b.array().abs())).maxCoeff(); }

TEST(Half, ABf16CheckpointKeepsItsMatricesAndMatchesItsWidenedSelf) {
  const Model kept = test::open_hf_stand_in("qwen2-tiny-bf16");
  const Model wide = test::open_hf_stand_in("qwen2-tiny-bf16", /*widen=*/true);
  EXPECT_EQ(kept.source.matrices, WeightStorage::BF16);
  EXPECT_EQ(kept.weights.matrix_storage(), WeightStorage::BF16);
  EXPECT_EQ(wide.weights.matrix_storage(), WeightStorage::F32);
  EXPECT_EQ(kept.weights.decoder[0].ffn.gate.storage(), WeightStorage::BF16);
  EXPECT_EQ(kept.weights.tgt_embed.size(), 0);
  EXPECT_TRUE(kept.weights.tgt_embed_half.widened() == wide.weights.tgt_embed);  // the values, exactly
  EXPECT_TRUE(kept.weights.decoder[1].self_attn.k_proj.half.widened() ==
              wide.weights.decoder[1].self_attn.k_proj.weight);
  EXPECT_EQ(count_params(kept.weights, kept.config), count_params(wide.weights, wide.config));
  EXPECT_LT(held_bytes(kept.weights, kept.config), held_bytes(wide.weights, wide.config) * 6 / 10);
  EXPECT_EQ(kept.source.held(), "matrices kept BF16, norms and biases converted to F32");
  // The forward over a prompt, and the reference path on the 16-bit weights.
  const std::vector<int> ids{1, 17, 42, 99, 5, 250, 7};
  const Mat a = decode(kept, ids, 1, {}, nullptr, nullptr), b = decode(wide, ids, 1, {}, nullptr, nullptr);
  EXPECT_LE(rel_diff(a, b), 1e-5);
  EXPECT_LE(rel_diff(a, ref::family_decoder(kept, ids).logits), 1e-5);
  // Packed for inference: every matrix in panels, the same values, the forward's bits unchanged.
  Model packed = test::open_hf_stand_in("qwen2-tiny-bf16");
  pack_for_inference(packed.weights);
  EXPECT_TRUE(packed.weights.decoder[1].ffn.fc2.half.in_panels());
  EXPECT_TRUE(packed.weights.decoder[0].self_attn.q_proj.half.in_panels());
  EXPECT_TRUE(packed.weights.tgt_embed_half.in_panels());
  EXPECT_TRUE(packed.weights.tgt_embed_half.widened() == wide.weights.tgt_embed);
  EXPECT_TRUE(decode(packed, ids, 1, {}, nullptr, nullptr) == a);
}

// IEEE binary16 of a float, rounded to nearest even (the test's own F16 writer).
uint16_t to_f16(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((b >> 16) & 0x8000u);
  const float a = std::fabs(f);
  if (a < std::ldexp(1.0f, -14)) return sign | static_cast<uint16_t>(std::nearbyint(a * std::ldexp(1.0f, 24)));
  int e;
  const float m = std::frexp(a, &e);  // a = m · 2^e, m in [0.5, 1)
  uint32_t mant = static_cast<uint32_t>(std::nearbyint((m * 2 - 1) * 1024));
  if (mant == 1024) {
    mant = 0;
    ++e;
  }
  return sign | static_cast<uint16_t>(((e - 1 + 15) << 10) | mant);
}

TEST(Half, AnF16CheckpointRunsOnItsF16MatricesAsItsWidenedSelf) {
  // qwen2-tiny-bf16 rewritten with every tensor F16.
  const std::string from = test::fixture("hf/qwen2-tiny-bf16"), dir = test::temp_path("qwen2-tiny-f16");
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(from + "/config.json", dir + "/config.json");
  std::ifstream in(from + "/model.safetensors", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto header = parse_safetensors_header(bytes.data(), bytes.size(), "qwen2-tiny-bf16");
  ASSERT_TRUE(header.ok()) << header.error();
  nlohmann::json j = nlohmann::json::object();
  std::string data;
  for (const TensorEntry& e : header->entries) {
    ASSERT_EQ(e.dtype, "BF16") << e.name;
    const uint64_t begin = data.size();
    for (int64_t i = 0; i < e.numel(); ++i) {
      uint16_t h;
      std::memcpy(&h, bytes.data() + header->data_start + e.begin + 2 * i, 2);
      const uint16_t f = to_f16(half_to_float(h, WeightStorage::BF16));
      data.append(reinterpret_cast<const char*>(&f), 2);
    }
    j[e.name] = {{"dtype", "F16"}, {"shape", e.shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string head = j.dump();
  while (head.size() % 8) head += ' ';
  std::ofstream out(dir + "/model.safetensors", std::ios::binary);
  const uint64_t len = head.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out << head << data;
  out.close();

  const Model kept = test::open_hf_stand_in(dir);
  const Model wide = test::open_hf_stand_in(dir, /*widen=*/true);
  ASSERT_EQ(kept.weights.matrix_storage(), WeightStorage::F16);
  EXPECT_EQ(kept.source.stored_dtype, "F16");
  EXPECT_TRUE(kept.weights.decoder[0].self_attn.q_proj.half.widened() ==
              wide.weights.decoder[0].self_attn.q_proj.weight);
  const std::vector<int> ids{3, 8, 120, 64, 2};
  EXPECT_LE(rel_diff(decode(kept, ids, 1, {}, nullptr, nullptr), decode(wide, ids, 1, {}, nullptr, nullptr)), 1e-5);
  EXPECT_LE(rel_diff(decode(kept, ids, 1, {}, nullptr, nullptr), ref::family_decoder(kept, ids).logits), 1e-5);
}

}  // namespace
}  // namespace sf

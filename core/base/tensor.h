// tensor.h — the one matrix type of the core.
//
// Row-major float, tokens are rows: an (n, d) activation block has token t in row t, and an
// (n_q, n_k) attention map copies straight into a texture. Shapes are written in comments as
// (rows, cols) with the names n (tokens), d (d_model), h (heads), dk (d/h), dff, V (vocabulary).
#pragma once

// GCC 12's AVX-512 intrinsics pass _mm512_undefined_ps() (`__m512 __Y = __Y;`) as the unused
// merge source of their builtins, and -Wmaybe-uninitialized reports it wherever our kernels or
// Eigen's packet maths inline one (GCC bug 105593). The warning is off for the text of the
// intrinsics header alone: it is included here, before Eigen includes it.
#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512F__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

#include <Eigen/Core>
#include <cstring>

namespace sf {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVec = Eigen::Matrix<float, 1, Eigen::Dynamic>;  // biases, LayerNorm gains: (d)
using ColVec = Eigen::Matrix<float, Eigen::Dynamic, 1>;  // per-token statistics: (n)

// a and b have one shape and the same floats bit for bit, so that a copy of either stands for the
// other exactly (+0 and −0 differ). One memcmp: recordings compare matrices of a million floats,
// which an element-wise comparison reads at a fraction of the memory's rate.
inline bool same_bits(const Mat& a, const Mat& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         (a.size() == 0 || std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<size_t>(a.size())) == 0);
}

}  // namespace sf

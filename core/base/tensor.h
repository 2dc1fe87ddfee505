// tensor.h — the one matrix type of the core.
//
// Row-major float, tokens are rows: an (n, d) activation block has token t in row t, and an
// (n_q, n_k) attention map copies straight into a texture. Shapes are written in comments as
// (rows, cols) with the names n (tokens), d (d_model), h (heads), dk (d/h), dff, V (vocabulary).
#pragma once

#include <Eigen/Core>

namespace sf {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVec = Eigen::Matrix<float, 1, Eigen::Dynamic>;  // biases, LayerNorm gains: (d)
using ColVec = Eigen::Matrix<float, Eigen::Dynamic, 1>;  // per-token statistics: (n)

}  // namespace sf

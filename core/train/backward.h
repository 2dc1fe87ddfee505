// backward.h — the backward pass of the whole model, reading the Trace the forward kept.
//
// Gradient rule (as in llm.c): parameter grads accumulate (+=), activation grads are written (=).
// One exception, asked for with matrices = Overwrite: every Matrix tensor of param_table (the
// projections' and feed-forwards' weights, an untied generator's) gets its gradient from exactly
// one product per backward, which then writes it (=) over whatever the gradient held. The trainer
// asks for it so that its update need not clear those gradients for the next step: they are nearly
// all of a model's gradients, and clearing them, then reading the zeros back into the products,
// would cost a few per cent of a step.
// A gradient is a Weights of the same shape as the model's (allocate(g, config)), so param_table
// names every gradient exactly like its parameter. With shared embeddings the source embedding,
// target embedding and generator are one matrix (tgt_embed) and their three grads add up there.
//
// The forward must have run with a full trace (encode + decode with non-null traces, no KV cache,
// any batch size B). Each sublayer's backward lives next to its forward (attention.cpp,
// layer_norm.cpp, feed_forward.cpp, embedding.cpp, residual.h, linear.h).
#pragma once

#include "base/gemm.h"
#include "model/model.h"
#include "model/trace.h"

namespace sf {

// dlogits (B·m, V): d loss / d logits. Adds every parameter's gradient into g (allocated for
// m.config). use_positional must match the run's RunOptions (a run without positions leaves the
// learned position table without gradient).
void model_backward(const Model& m, const Trace& t, const Mat& dlogits, Weights& g, bool use_positional = true,
                    GemmOut matrices = GemmOut::Accumulate);

// Backward of the decoder alone; dmemory (B·n, d) receives d loss / d memory (=) for enc-dec models.
void decoder_backward(const Model& m, const DecoderTrace& t, const Mat* memory, const Mat& dlogits, Weights& g,
                      Mat* dmemory, bool use_positional = true, GemmOut matrices = GemmOut::Accumulate);
// Backward of the encoder from d loss / d memory (B·n, d), which it takes over as the residual
// stream's grad.
void encoder_backward(const Model& m, const EncoderTrace& t, Mat dmemory, Weights& g, bool use_positional = true,
                      GemmOut matrices = GemmOut::Accumulate);

}  // namespace sf

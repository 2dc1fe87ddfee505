#include "analysis/residual_points.h"

namespace sf {

namespace {

// The stream leaving a block, when the recording kept it.
bool push(std::vector<ResidualPoint>& out, int layer, Block b, const ResidualTrace& r) {
  if (r.output.size() == 0) return false;
  out.push_back({layer, b, &r.output});
  return true;
}

}  // namespace

std::string point_label(const ResidualPoint& p) {
  if (p.block == Block::None) return "embedding";
  const std::string l = "L" + std::to_string(p.layer) + " ";
  switch (p.block) {
    case Block::SelfAttention:
      return l + "attn";
    case Block::CrossAttention:
      return l + "cross";
    case Block::FeedForward:
      return l + "MLP";
    case Block::None:
      break;
  }
  return l;
}

std::vector<ResidualPoint> decoder_points(const Config& c, const DecoderTrace& t) {
  std::vector<ResidualPoint> out;
  if (t.embed.sum.size() == 0) return {};
  out.push_back({-1, Block::None, &t.embed.sum});
  for (int l = 0; l < static_cast<int>(t.layers.size()); ++l) {
    const DecoderLayerTrace& lt = t.layers[static_cast<size_t>(l)];
    if (!push(out, l, Block::SelfAttention, lt.self_block)) return {};
    if (c.has_cross_attention() && !push(out, l, Block::CrossAttention, lt.cross_block)) return {};
    if (c.has_ffn() && !push(out, l, Block::FeedForward, lt.ffn_block)) return {};
  }
  return out;
}

std::vector<ResidualPoint> encoder_points(const Config&, const EncoderTrace& t) {
  std::vector<ResidualPoint> out;
  if (t.embed.sum.size() == 0) return {};
  out.push_back({-1, Block::None, &t.embed.sum});
  for (int l = 0; l < static_cast<int>(t.layers.size()); ++l) {
    const EncoderLayerTrace& lt = t.layers[static_cast<size_t>(l)];
    if (!push(out, l, Block::SelfAttention, lt.self_block)) return {};
    if (!push(out, l, Block::FeedForward, lt.ffn_block)) return {};
  }
  return out;
}

}  // namespace sf

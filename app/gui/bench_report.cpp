#include "bench_report.h"

#include <cstdio>

#include "stepper/run.h"

namespace sf::gui {

namespace {

std::string layers(const Config& c) {
  switch (c.arch) {
    case Arch::EncoderDecoder:
      return std::to_string(c.n_encoder_layers) + "+" + std::to_string(c.n_decoder_layers) + " layers";
    case Arch::DecoderOnly:
      return std::to_string(c.n_decoder_layers) + " layers";
    case Arch::EncoderOnly:
      return std::to_string(c.n_encoder_layers) + " layers";
  }
  return "";
}

std::string tokens(const Snapshot& s) {
  if (!s.session) return "no input";
  const PreparedInput& in = s.session->input();
  const Config& c = s.model->config;
  const size_t src = in.src_ids.size(), tgt = decoder_prefix(*s.model, in).size() + s.session->tokens().size();
  switch (c.arch) {
    case Arch::EncoderDecoder:
      return std::to_string(src) + " source and " + std::to_string(tgt) + " decoder tokens";
    case Arch::DecoderOnly:
      return std::to_string(tgt) + " tokens";
    case Arch::EncoderOnly:
      return std::to_string(src) + " tokens";
  }
  return "";
}

}  // namespace

std::string describe_bench(const Snapshot& s, const DrawnHeatmaps& drawn, int frames) {
  std::string out;
  if (s.model) {
    const Config& c = s.model->config;
    out = s.model_name + " (" + to_string(c.arch) + ", " + layers(c) + ", " + std::to_string(c.n_heads) +
          " heads, d_model " + std::to_string(c.d_model) + ") on " + tokens(s);
  } else {
    out = "no model";
  }
  if (frames <= 0 || drawn.maps == 0) return out + "; no heatmap drawn";
  // Per frame: the counts over the measured frames, divided (a map drawn on some frames only shows
  // as a fraction).
  const auto per_frame = [&](int64_t n) {
    char b[32];
    if (n % frames == 0)
      std::snprintf(b, sizeof b, "%lld", static_cast<long long>(n / frames));
    else
      std::snprintf(b, sizeof b, "%.1f", static_cast<double>(n) / frames);
    return std::string(b);
  };
  out += "; " + per_frame(drawn.maps) + " heatmaps per frame:";
  bool first = true;
  for (const auto& [shape, n] : drawn.shapes) {
    out += std::string(first ? " " : ", ") + per_frame(n) + " of " + std::to_string(shape.first) + "x" +
           std::to_string(shape.second);
    first = false;
  }
  return out;
}

}  // namespace sf::gui

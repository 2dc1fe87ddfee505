#include "worker.h"

#include <algorithm>

#include "io/checkpoint.h"
#include "paths.h"

namespace sf::gui {

// [SECTION] engine operations

void Engine::push(Message::Level l, const std::string& m) {
  log.push_back({l, m, ticket, ++message_seq});
  if (log.size() > 200) log.erase(log.begin(), log.begin() + 50);
}

namespace {

// An encoder-only model with a masked-LM head predicts at [MASK]: the example masks its middle word.
std::string with_mask(const Model& m, const std::string& text) {
  const Config& c = m.config;
  const int mask = mask_token(c.src_vocab);
  if (c.has_decoder() || !c.mlm_head || mask < 0 || text.find(c.src_vocab.token(mask)) != std::string::npos)
    return text;
  std::vector<std::string> words;
  for (size_t i = 0, j; i < text.size(); i = j + 1) {
    j = text.find(' ', i);
    if (j == std::string::npos) j = text.size();
    if (j > i) words.push_back(text.substr(i, j - i));
  }
  if (words.size() < 2) return text;
  words[words.size() / 2] = c.src_vocab.token(mask);
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string plain_example(const Model& m, const std::string& path) {
  if (!path.empty()) {
    if (auto f = read_safetensors(path); f.ok()) {
      auto it = f->metadata.find("stepformer.example");
      if (it != f->metadata.end() && !it->second.empty()) return it->second;
    }
  }
  const Config& c = m.config;
  const Vocab& v = c.has_encoder() ? c.src_vocab : c.tgt_vocab;
  const int room = std::max(1, std::min(8, c.max_len - 2));  // leave room for <s> and </s>
  const bool chars = v.tokenizer() == Tokenizer::Character;
  // Digit tasks (copy, reverse, sort, add): the digits of π read well and repeat a token.
  const std::string pi = "31415926";
  bool digits = true;
  for (char d : pi) digits &= v.id(std::string(1, d)) >= 0;
  if (digits) {
    std::string out;
    for (int i = 0; i < room; ++i) out += (i && !chars ? " " : "") + std::string(1, pi[static_cast<size_t>(i)]);
    return out;
  }
  std::vector<std::string> words;
  for (const std::string& t : v.tokens())
    if (t.size() && t[0] != '<' && t[0] != '[' && static_cast<int>(words.size()) < room) words.push_back(t);
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) out += (i && !chars ? " " : "") + words[i];
  return out;
}

}  // namespace

std::string example_input(const Model& m, const std::string& path) { return with_mask(m, plain_example(m, path)); }

bool Engine::load_model(const std::string& path) {
  auto m = sf::load_model(path);
  if (!m) {
    error("cannot load model: " + m.error() + (model ? " — keeping " + model_name : ""));
    return false;
  }
  auto ptr = std::make_shared<const Model>(std::move(*m));
  model_path = path;
  use_model(ptr, base_name(path));
  return true;
}

void Engine::use_model(std::shared_ptr<const Model> m, const std::string& name) {
  model = std::move(m);
  model_name = name;
  session.reset();
  info("loaded " + name + " (" + std::to_string(count_params(model->weights, model->config)) + " parameters)");
  // Keep the typed input if this model understands it; else use the model's example.
  std::string new_src = src, new_tgt = tgt;
  bool fits = !new_src.empty() && prepare_input(*model, new_src, new_tgt).ok();
  if (fits) {
    const Config& c = model->config;
    fits = (c.has_encoder() ? c.src_vocab : c.tgt_vocab).tokenize(new_src).unknown.empty();
  }
  if (fits && with_mask(*model, new_src) != new_src) fits = false;  // a masked-LM model wants a [MASK]
  if (!fits) {
    new_src = example_input(*model, model_path);
    new_tgt = "";
  }
  DecodeSettings s = settings;
  if (s.strategy == Strategy::Forced && tgt.empty()) s.strategy = Strategy::Greedy;
  if (!validate(s, *model)) s = DecodeSettings{};
  settings = s;
  set_input(new_src, new_tgt);
}

bool Engine::set_input(const std::string& s, const std::string& t) {
  src = s;
  tgt = t;
  if (!model) {
    error("no model loaded: open a .safetensors file first");
    return false;
  }
  auto r = Session::create(model, s, t, settings, use_cache);
  if (!r) {
    input_error = r.error();
    error("input refused: " + r.error() + (session ? " — the previous input stays" : ""));
    return false;
  }
  input_error.clear();
  session = std::move(*r);
  for (auto& w : session->warnings()) warn(w);
  refresh_demos(true);
  return true;
}

bool Engine::set_settings(const DecodeSettings& s) {
  if (!session) {
    settings = s;
    return true;
  }
  const int cursor = session->cursor();
  auto ok = session->set_settings(s);
  if (!ok) {
    error("decoding settings refused: " + ok.error());
    return false;
  }
  settings = s;
  session->jump(cursor);
  refresh_demos(true);
  return true;
}

void Engine::set_cache(bool on) {
  use_cache = on;
  if (session) session->set_use_cache(on);
}

void Engine::refresh_demos(bool force) {
  if (!model || !session) {
    order_demo.reset();
    leak_demo.reset();
    return;
  }
  if (want_order_demo && (force || !order_demo)) order_demo = make_order_demo(*model, session->input());
  if (!want_order_demo) order_demo.reset();
  if (want_leak_demo && model->config.has_decoder()) {  // an encoder-only model has no causal mask
    // Teacher forcing on the target if there is one, else on what has been decoded so far.
    const Config& c = model->config;
    std::vector<int> ids = session->input().tgt_ids;
    const bool has_target = c.has_encoder() ? ids.size() > 1 : !session->input().tgt.ids.empty();
    if (!has_target) {
      for (int id : session->tokens())
        if (static_cast<int>(ids.size()) < c.max_len) ids.push_back(id);
    }
    if (force || !leak_demo || ids != leak_ids) {
      leak_ids = ids;
      leak_demo = make_leak_demo(*model, session->input(), ids);
    }
  }
  if (!want_leak_demo) leak_demo.reset();
}

// [SECTION] worker thread

namespace {

std::shared_ptr<const Snapshot> publish(Engine& e, uint64_t generation) {
  try {
    e.refresh_demos(false);  // the leak demo follows the tokens decoded so far
  } catch (const std::exception& ex) {
    e.error(std::string("internal error in a demo: ") + ex.what());
  }
  auto s = std::make_shared<Snapshot>();
  stamp(*s, e, generation);
  s->model = e.model;
  s->model_path = e.model_path;
  s->model_name = e.model_name;
  if (e.model) s->n_params = count_params(e.model->weights, e.model->config);
  s->src_text = e.src;
  s->tgt_text = e.tgt;
  s->input_error = e.input_error;
  if (e.session) s->session = std::make_shared<const Session>(*e.session);
  s->order_demo = e.order_demo;
  s->leak_demo = e.leak_demo;
  try {
    build_views(*s);
  } catch (const std::exception& ex) {
    s->log.push_back({Message::Error, std::string("internal error while building views: ") + ex.what(), e.ticket});
  }
  return s;
}

}  // namespace

Worker::Worker(std::function<void()> wake) : JobThread(publish, std::move(wake)) {}

}  // namespace sf::gui

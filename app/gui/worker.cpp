#include "worker.h"

#include <algorithm>

#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "train/examples.h"
#include "paths.h"

namespace sf::gui {

// [SECTION] engine operations

void Engine::push(Message::Level l, const std::string& m) {
  log.push_back({l, m, ticket, ++message_seq});
  if (log.size() > 200) log.erase(log.begin(), log.begin() + 50);
}

std::shared_ptr<const BatchDemo> make_batch_demo(const Model& m, const std::map<std::string, std::string>& metadata) {
  const Config& c = m.config;
  auto d = std::make_shared<BatchDemo>();
  std::vector<Example> examples;
  bool targets = true;
  // The three shortest of the model's examples (they have different lengths): short sequences
  // keep every map's labels and numbers readable on a projector.
  std::vector<ModelExample> all = model_examples(c, metadata, 8);
  std::stable_sort(all.begin(), all.end(), [](const ModelExample& a, const ModelExample& b) {
    return a.tokens.src.size() + a.tokens.tgt.size() < b.tokens.src.size() + b.tokens.tgt.size();
  });
  if (all.size() > 3) all.resize(3);
  for (const ModelExample& e : all) {
    examples.push_back(e.tokens);
    targets = targets && !e.tokens.tgt.empty();
  }
  if (examples.size() < 2) {
    d->note = "this model's examples give fewer than two inputs to pad together";
    return d;
  }
  const Batch b = make_batch(c, examples);
  d->masks = batch_masks(c, b);
  d->has_target = c.has_decoder() && (targets || !c.has_encoder());
  const auto label = [](const Vocab& v, int id) {
    return id < 0 || id == v.pad() ? std::string("<pad>") : display_token(v, id);
  };
  for (int s = 0; s < b.size; ++s) {
    std::vector<std::string> src, tgt;
    for (int j = 0; j < b.n; ++j) src.push_back(label(c.src_vocab, b.src[static_cast<size_t>(s * b.n + j)]));
    for (int j = 0; j < b.m; ++j) tgt.push_back(label(c.tgt_vocab, b.tgt_in[static_cast<size_t>(s * b.m + j)]));
    d->src.push_back(std::move(src));
    d->tgt.push_back(std::move(tgt));
  }
  return d;
}

bool Engine::load_model(const std::string& path) {
  auto m = sf::load_model(path);
  if (!m) {
    error("cannot load model: " + m.error() + (model ? " — keeping " + model_name : ""));
    return false;
  }
  auto ptr = std::make_shared<const Model>(std::move(*m));
  model_path = path;
  metadata.clear();
  if (!dir_exists(path))
    if (auto md = read_safetensors_metadata(path); md.ok()) metadata = std::move(*md);
  use_model(ptr, base_name(path));
  return true;
}

void Engine::use_model(std::shared_ptr<const Model> m, const std::string& name) {
  model = std::move(m);
  model_name = name;
  if (model_path.empty()) metadata.clear();
  example_seed = 0;
  batch_demo = make_batch_demo(*model, metadata);
  session.reset();
  info("loaded " + name + " (" + std::to_string(count_params(model->weights, model->config)) + " parameters)");
  // Keep the typed input if this model understands it; else use the model's example.
  std::string new_src = src, new_tgt = tgt;
  bool fits = !new_src.empty() && prepare_input(*model, new_src, new_tgt).ok();
  if (fits) {
    const Config& c = model->config;
    fits = (c.has_encoder() ? c.src_vocab : c.tgt_vocab).tokenize(new_src).unknown.empty();
  }
  if (fits && with_mask_token(model->config, new_src) != new_src) fits = false;  // a masked LM wants a [MASK]
  if (!fits) {
    new_src = model_example_text(model->config, metadata);
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

void Engine::next_example() {
  if (!model) return error("no model loaded: open a .safetensors file first");
  const std::string text = model_example_text(model->config, metadata, ++example_seed);
  if (text.empty()) return error("this model's vocabulary gives no example input");
  set_input(text, "");
}

void Engine::append_padding() {
  if (!model || !session) return error("no input to pad: load a model and an input first");
  const Config& c = model->config;
  const int pad = c.src_vocab.pad();
  if (!c.has_encoder() || pad < 0) return error("this model's source vocabulary has no padding token");
  // Two, or one when two would not fit (a character model's space is a token of its own).
  const std::string sep = c.src_vocab.tokenizer() == Tokenizer::Character ? "" : " ";
  for (int k = 2; k >= 1; --k) {
    std::string padded = src;
    for (int i = 0; i < k; ++i) padded += sep + c.src_vocab.token(pad);
    if (static_cast<int>(c.src_vocab.encode(padded).ids.size()) <= c.max_len) return (void)set_input(padded, tgt);
  }
  error("the source already fills max_len (" + std::to_string(c.max_len) +
        " tokens): the Masks panel's batch view pads shorter inputs to a longer one");
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

std::shared_ptr<const Snapshot> publish_snapshot(Engine& e, uint64_t generation) {
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
  s->batch_demo = e.batch_demo;
  try {
    build_views(*s, e.published.get());
  } catch (const std::exception& ex) {
    s->log.push_back({Message::Error, std::string("internal error while building views: ") + ex.what(), e.ticket});
  }
  e.published = s;
  return s;
}

}  // namespace

Worker::Worker(std::function<void()> wake) : JobThread(publish_snapshot, wake), thumbnails_(wake) {}

// [SECTION] thumbnails

ThumbnailJobs::ThumbnailJobs(std::function<void()> wake) : wake_(std::move(wake)) {
  thread_ = std::thread([this] { run(); });
}

ThumbnailJobs::~ThumbnailJobs() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void ThumbnailJobs::request(std::vector<std::shared_ptr<const AttnData>> views) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (views == pending_) return;
    pending_ = std::move(views);
  }
  cv_.notify_all();
}

bool ThumbnailJobs::busy() const {
  std::lock_guard<std::mutex> lk(mu_);
  return working_ || !pending_.empty();
}

void ThumbnailJobs::run() {
  apply_default_threads();  // the process's --threads (base/threads.h): this thread's products
  for (;;) {
    std::shared_ptr<const AttnData> v;
    {
      std::unique_lock<std::mutex> lk(mu_);
      working_ = false;
      cv_.wait(lk, [&] { return stop_ || !pending_.empty(); });
      if (stop_) return;
      // The first view asked for that lacks a thumbnail; the views that have them all leave the list.
      while (!pending_.empty() && pending_.front()->maps.thumbnails_done()) pending_.erase(pending_.begin());
      if (pending_.empty()) continue;
      v = pending_.front();
      working_ = true;
    }
    for (int h = 0; h < v->maps.n_heads(); ++h) {
      v->maps.make_thumbnail(h);
      std::lock_guard<std::mutex> lk(mu_);
      if (stop_ || pending_.empty() || pending_.front() != v) break;  // asked for something else meanwhile
    }
    if (wake_) wake_();
  }
}

}  // namespace sf::gui

// actions.h — the operations the UI and scripts post to the worker. Each runs on the worker
// thread against its Engine; a refused operation leaves a Message and changes nothing.
#pragma once

#include <string>

#include "worker.h"

namespace sf::gui::act {

inline uint64_t move(Worker& w, bool (Session::*fn)(), const char* what) {
  return w.post([fn, what](Engine& e) {
    if (!e.session) return e.error(std::string("cannot ") + what + ": no input is loaded");
    if (!((*e.session).*fn)() && !e.session->message().empty()) e.info(e.session->message());
  });
}
inline uint64_t forward(Worker& w) { return move(w, &Session::forward, "step forward"); }
inline uint64_t back(Worker& w) { return move(w, &Session::back, "step back"); }
inline uint64_t next_token(Worker& w) { return move(w, &Session::next_token, "go to the next token"); }
inline uint64_t prev_token(Worker& w) { return move(w, &Session::prev_token, "go to the previous token"); }

inline uint64_t jump(Worker& w, int stage) {
  return w.post([stage](Engine& e) {
    if (!e.session) return e.error("cannot jump: no input is loaded");
    if (!e.session->jump(stage) && !e.session->message().empty()) e.info(e.session->message());
  });
}
inline uint64_t run_to_end(Worker& w) {
  return w.post([](Engine& e) {
    if (!e.session) return e.error("cannot decode: no input is loaded");
    e.session->run_to_end();
  });
}
// The decode as far as `seconds` of computing take it, cursor on its last stage: what the explorer
// opens on (a shipped model's whole decode; a large model's first steps, not minutes of
// "working…"). A decode left unfinished says how far it got and that End finishes it.
inline uint64_t run_for(Worker& w, double seconds) {
  return w.post([seconds](Engine& e) {
    if (!e.session) return e.error("cannot decode: no input is loaded");
    if (!e.session->run_for(seconds))
      e.info("opened on the first " + std::to_string(e.session->steps().size()) +
             " decoding steps (what the first second computed): End decodes the rest");
  });
}
inline uint64_t home(Worker& w) {
  return w.post([](Engine& e) {
    if (e.session) e.session->jump(0);
  });
}
inline uint64_t reset(Worker& w) {
  return w.post([](Engine& e) {
    if (e.session) e.session->reset();
  });
}
inline uint64_t load_model(Worker& w, const std::string& path) {
  return w.post([path](Engine& e) { e.load_model(path); });
}
inline uint64_t set_input(Worker& w, const std::string& src, const std::string& tgt) {
  return w.post([src, tgt](Engine& e) { e.set_input(src, tgt); });
}
inline uint64_t set_settings(Worker& w, const DecodeSettings& s) {
  return w.post([s](Engine& e) { e.set_settings(s); });
}
inline uint64_t set_cache(Worker& w, bool on) {
  return w.post([on](Engine& e) { e.set_cache(on); });
}
inline uint64_t want_demos(Worker& w, bool order, bool leak) {
  return w.post([order, leak](Engine& e) {
    const bool changed = e.want_order_demo != order || e.want_leak_demo != leak;
    e.want_order_demo = order;
    e.want_leak_demo = leak;
    if (changed) e.refresh_demos(false);
  });
}
inline uint64_t refresh_demos(Worker& w) {
  return w.post([](Engine& e) { e.refresh_demos(true); });
}

}  // namespace sf::gui::act

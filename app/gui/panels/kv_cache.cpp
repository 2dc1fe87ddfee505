#include "app.h"
#include "ui.h"
#include "widgets.h"

namespace sf::gui {
namespace {
class KvCachePanel : public Panel {
 public:
  const char* title() const override { return "KV cache"; }
  const char* key() const override { return "kv"; }
  ImVec4 default_rect() const override { return ImVec4(0.24f, 0.40f, 0.76f, 0.60f); }
  bool default_open() const override { return false; }
  void Draw(Ctx& c) override { (void)c; ImGui::TextUnformatted("todo"); }
};
}  // namespace
std::unique_ptr<Panel> make_kv_cache_panel() { return std::make_unique<KvCachePanel>(); }
}  // namespace sf::gui

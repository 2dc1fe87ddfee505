#include "app.h"
#include "ui.h"
#include "widgets.h"

namespace sf::gui {
namespace {
class QkvPanel : public Panel {
 public:
  const char* title() const override { return "Q, K, V"; }
  const char* key() const override { return "qkv"; }
  ImVec4 default_rect() const override { return ImVec4(0.66f, 0.40f, 0.34f, 0.60f); }
  bool default_open() const override { return true; }
  void Draw(Ctx& c) override { (void)c; ImGui::TextUnformatted("todo"); }
};
}  // namespace
std::unique_ptr<Panel> make_qkv_panel() { return std::make_unique<QkvPanel>(); }
}  // namespace sf::gui

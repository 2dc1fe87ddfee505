#include "app.h"
#include "ui.h"
#include "widgets.h"

namespace sf::gui {
namespace {
class OutputPanel : public Panel {
 public:
  const char* title() const override { return "Output"; }
  const char* key() const override { return "output"; }
  ImVec4 default_rect() const override { return ImVec4(0.0f, 0.55f, 0.24f, 0.45f); }
  bool default_open() const override { return true; }
  void Draw(Ctx& c) override { (void)c; ImGui::TextUnformatted("todo"); }
};
}  // namespace
std::unique_ptr<Panel> make_output_panel() { return std::make_unique<OutputPanel>(); }
}  // namespace sf::gui

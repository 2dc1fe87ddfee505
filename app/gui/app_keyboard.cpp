// app_keyboard.cpp — the explorer's keys (docs/explorer.md, "Keyboard"), play/pause, and the
// shared attention selection following the stepper.
#include <algorithm>

#include "app.h"

#include <GLFW/glfw3.h>

#include "actions.h"

namespace sf::gui {

// When the stepper enters an attention sublayer, the shared selection shows it (unless the user
// switched "follow stepper" off). A pinned cell is forgotten when the map changes.
void App::follow_stage() {
  if (!snap_->ok()) return;
  const Config& c = snap_->model->config;
  if (!has_kind(c, ui_.kind)) ui_.kind = attention_kinds(c).front();
  ui_.layer = std::min(ui_.layer, kind_layers(c, ui_.kind) - 1);
  ui_.head = std::min(ui_.head, kind_heads(c, ui_.kind) - 1);
  if (snap_->generation == followed_gen_) return;
  followed_gen_ = snap_->generation;
  if (!ui_.follow_stage || snap_->cursor == followed_cursor_) return;
  followed_cursor_ = snap_->cursor;
  const Stage& st = snap_->stage;
  const bool attn = st.kind == StageKind::SelfAttention || st.kind == StageKind::CrossAttention ||
                    ((st.kind == StageKind::Norm || st.kind == StageKind::AddNorm) && st.block != Block::FeedForward);
  if (!attn || st.layer < 0) return;
  AttnKind k = st.side == Side::Encoder                                                      ? AttnKind::EncoderSelf
               : (st.kind == StageKind::CrossAttention || st.block == Block::CrossAttention) ? AttnKind::Cross
                                                                                             : AttnKind::DecoderSelf;
  if (k != ui_.kind || st.layer != ui_.layer) ui_.cell_pinned = false;
  ui_.kind = k;
  ui_.layer = st.layer;
}

void App::keyboard() {
  ImGuiIO& io = ImGui::GetIO();
  const auto pressed = [](ImGuiKey k) { return ImGui::IsKeyPressed(ImGui::GetKeyIndex(k), true); };
  const bool ctrl = io.KeyCtrl;
  // Window-level keys work in every state: with or without a model, whichever panel has the focus,
  // while a text field is being edited too (none of them types a character). This is their one
  // handler; the compare view only takes the stepping keys.
  if (ImGui::IsKeyPressed(GLFW_KEY_F11, false)) set_presentation(!ui_.presentation);
  if (ctrl && ImGui::IsKeyPressed(GLFW_KEY_Q, false)) quit(0);
  if (ctrl && (ImGui::IsKeyPressed(GLFW_KEY_EQUAL, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_ADD, false)))
    set_scale(ui_.scale + 0.25f);
  if (ctrl && (ImGui::IsKeyPressed(GLFW_KEY_MINUS, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_SUBTRACT, false)))
    set_scale(ui_.scale - 0.25f);
  if (ctrl && ImGui::IsKeyPressed(GLFW_KEY_0, false)) set_scale(1.0f);
  if (io.WantTextInput) return;
  for (const auto& p : panels_)
    if (p->open && p->owns_keyboard()) return;  // the compare view steps its own runs
  // A lesson takes PageDown / PageUp (what presenter clickers send) for its steps.
  if (lesson_) {
    std::string e;
    if (pressed(ImGuiKey_PageDown)) request_lesson({LessonRequest::Next, "", "", 0}, e);
    if (pressed(ImGuiKey_PageUp)) request_lesson({LessonRequest::Back, "", "", 0}, e);
  }
  if (!snap_->ok()) return;
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space), false)) {
    ui_.playing = !ui_.playing;
    ui_.last_play = ImGui::GetTime();
    if (ui_.playing && snap_->session->at_end()) act::home(*worker_);  // play again from the start
  }
  if (pressed(ImGuiKey_RightArrow)) ctrl ? act::next_token(*worker_) : act::forward(*worker_);
  if (pressed(ImGuiKey_LeftArrow)) ctrl ? act::prev_token(*worker_) : act::back(*worker_);
  if (pressed(ImGuiKey_DownArrow) || (!lesson_ && pressed(ImGuiKey_PageDown))) act::next_token(*worker_);
  if (pressed(ImGuiKey_UpArrow) || (!lesson_ && pressed(ImGuiKey_PageUp))) act::prev_token(*worker_);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home), false)) act::home(*worker_);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_End), false)) act::run_to_end(*worker_);
}

void App::play_tick() {
  if (!ui_.playing) return;
  if (!snap_->ok() || (snap_->session->at_end() && worker_->idle() && ImGui::GetTime() - ui_.last_play > 0.5)) {
    ui_.playing = false;
    return;
  }
  const double now = ImGui::GetTime();
  if (now - ui_.last_play >= 1.0 / ui_.speed && worker_->idle()) {
    ui_.last_play = now;
    act::forward(*worker_);
  }
}

}  // namespace sf::gui

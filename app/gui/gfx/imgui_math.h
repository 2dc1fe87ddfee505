// imgui_math.h — ImVec2 arithmetic operators (ImGui keeps them behind a macro).
#pragma once

#ifndef IMGUI_DEFINE_MATH_OPERATORS
#define IMGUI_DEFINE_MATH_OPERATORS
#endif
#include "imgui.h"
#include "imgui_internal.h"

// gl.h — the one place that includes OpenGL. GL 3.3 core entry points are linked directly from
// libGL (GL_GLEXT_PROTOTYPES), no loader; ImGui's backend carries its own.
#pragma once

#ifndef GL_GLEXT_PROTOTYPES
#define GL_GLEXT_PROTOTYPES 1
#endif
#include <GL/gl.h>
#include <GL/glext.h>

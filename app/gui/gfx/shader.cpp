#include "gfx/shader.h"

#include <fstream>
#include <sstream>

namespace sf::gui {

bool read_shader_source(const std::string& dir, const std::string& name, std::string& out, std::string& error) {
  std::ifstream in(dir + "/" + name);
  if (!in) {
    error = "shader '" + dir + "/" + name + "': cannot open";
    return false;
  }
  std::string line;
  std::ostringstream text;
  while (std::getline(in, line)) {
    const std::string tag = "#include \"";
    if (line.rfind(tag, 0) == 0) {
      const size_t end = line.find('"', tag.size());
      std::string inc;
      if (end == std::string::npos || !read_shader_source(dir, line.substr(tag.size(), end - tag.size()), inc, error))
        return false;
      text << inc << "\n";
    } else {
      text << line << "\n";
    }
  }
  out = text.str();
  return true;
}

namespace {

// "" when the shader compiled (the program linked), else the driver's log. `program`: a program's
// link status; otherwise a shader's compile status.
std::string failure_log(GLuint obj, bool program) {
  GLint ok = 0;
  (program ? glGetProgramiv : glGetShaderiv)(obj, program ? GL_LINK_STATUS : GL_COMPILE_STATUS, &ok);
  if (ok) return "";
  char log[2048] = {0};
  (program ? glGetProgramInfoLog : glGetShaderInfoLog)(obj, sizeof log, nullptr, log);
  return log[0] ? log : "(no log)";
}

GLuint compile(GLenum kind, const std::string& src, const std::string& name, std::string& error) {
  GLuint s = glCreateShader(kind);
  const char* p = src.c_str();
  glShaderSource(s, 1, &p, nullptr);
  glCompileShader(s);
  if (const std::string log = failure_log(s, false); !log.empty()) {
    error = "shader '" + name + "' does not compile: " + log;
    glDeleteShader(s);
    return 0;
  }
  return s;
}

}  // namespace

GLuint load_program(const std::string& dir, const std::string& vert, const std::string& frag, std::string& error) {
  std::string vs, fs;
  if (!read_shader_source(dir, vert, vs, error) || !read_shader_source(dir, frag, fs, error)) return 0;
  GLuint v = compile(GL_VERTEX_SHADER, vs, vert, error);
  if (!v) return 0;
  GLuint f = compile(GL_FRAGMENT_SHADER, fs, frag, error);
  if (!f) {
    glDeleteShader(v);
    return 0;
  }
  GLuint prog = glCreateProgram();
  glAttachShader(prog, v);
  glAttachShader(prog, f);
  glLinkProgram(prog);
  glDeleteShader(v);
  glDeleteShader(f);
  if (const std::string log = failure_log(prog, true); !log.empty()) {
    error = "shaders '" + vert + "' + '" + frag + "' do not link: " + log;
    glDeleteProgram(prog);
    return 0;
  }
  return prog;
}

}  // namespace sf::gui

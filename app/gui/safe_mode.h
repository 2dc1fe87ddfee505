// safe_mode.h — what a lesson may do (docs/lessons.md, "Safe mode"). A lesson is untrusted input,
// like a model file: it may show anything, but the files it writes go only into the user's
// exports folder, under fresh names, and its counts, waits and training runs are bounded so that
// it cannot hang the app or fill the disk. A script run with `--script` is the user's own and
// keeps its full power; this module decides only for lessons. UI-free: the explorer's script
// runner asks it, tests/safe_mode_test.cpp checks it, tests/fuzz/fuzz_script.cpp fuzzes it.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace sf::gui {

struct SafeLimits {
  size_t max_file_bytes = 256 * 1024;  // a lesson file
  int max_lines = 4000;                // command lines in a lesson file
  size_t max_line_chars = 4000;
  int max_wait_frames = 600;   // `wait N`: ten seconds at 60 frames per second
  int max_count = 200;         // `step N`, `next-token N`, `compare-step N`, …
  int max_wait_seconds = 600;  // `wait-training S`
  int max_train_steps = 3000;  // `train-both steps=N`
  int max_train_batch = 256;
  int max_d_model = 512;
  int max_heads = 16;
  int max_layers = 24;    // `gradnorms layers=N`
  int max_seeds = 16;     // `gradnorms seeds=N`
  int max_len = 1024;     // `max-len N`
  int max_beam = 16;      // `beam-width W`
  int max_exports = 200;  // files one lesson may write
};

// The user's exports folder: $XDG_DATA_HOME/stepformer/exports, else
// $HOME/.local/share/stepformer/exports (else ./stepformer-exports). Not created here.
std::string exports_dir();

// `path` as the explorer writes it for the user: a path under $HOME starts with "~" (the exports
// folder reads ~/.local/share/stepformer/exports, as docs/lessons.md names it); any other path,
// and every path when $HOME is not an absolute folder other than "/", is unchanged.
std::string shown_path(const std::string& path);

// Creates `dir` and its missing parents (mode 0755). Error names the component that is not a folder.
Result<bool> make_dirs(const std::string& dir);

// Where an output a lesson names `requested` goes. A plain file name (letters, digits, '.', '-',
// '_'; not starting with '.') is kept; anything else (an absolute path, '/', '..', a hidden name)
// is rewritten to its last component with every other character replaced by '_'. The name is
// then made fresh inside `dir` ("x.png", "x-2.png", …) and reserved there with O_CREAT|O_EXCL (a
// folder with mkdir when `folder`), so no existing file, folder or symbolic link is ever replaced:
// the writer then renames its complete file over its own empty reservation.
struct Placement {
  std::string path;        // dir + "/" + the fresh name
  bool rewritten = false;  // the path differs from `requested`
};
Result<Placement> place_export(const std::string& dir, const std::string& requested, bool folder);

// A lesson file read within the limits: a regular file (not a FIFO or device), at most
// max_file_bytes, no NUL byte (a text file), at most max_lines command lines.
Result<std::string> read_lesson_file(const std::string& path, const SafeLimits& limits);
// The same checks on text already in memory (`name` for the messages).
Result<bool> check_lesson_text(const std::string& text, const std::string& name, const SafeLimits& limits);

// Checks one command line (already split into words) against the limits: refuses the commands a
// lesson may not run at all (`quit`, `train-save`) and counts, waits, training steps and sizes
// beyond the limits, naming the limit. True when the line may run.
bool check_safe_command(const std::vector<std::string>& words, const SafeLimits& limits, std::string& error);

// Which word of a command names a file it writes: 1 for `screenshot` and `export-recording`, 2 for
// `export-panel`, `export-heatmap` and `export-plot`; 0 when the command writes nothing.
int output_word(const std::vector<std::string>& words);
// True when an output of `words` is a folder (`export-recording` to .npy or .csv).
bool output_is_folder(const std::vector<std::string>& words);

}  // namespace sf::gui

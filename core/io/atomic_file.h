// atomic_file.h — every file stepformer writes goes through here: the bytes go to a temporary
// file in the destination's own folder (so the rename stays on one filesystem), are flushed to
// disk (fsync), and the temporary file is renamed over the destination (rename(2) is atomic on
// POSIX), then the folder is fsynced so the rename itself survives a power cut. A crash or
// kill -9 at any moment leaves either the previous complete file or the new complete one; at
// worst a stray hidden `.name.tmp-XXXXXX` next to it, never a truncated `name`.
#pragma once

#include <string>

#include "base/result.h"

namespace sf {

// Writes `bytes` to `path` atomically. Errors name the path and the reason: the folder does not
// exist, is not a folder, is not writable, or the disk is full; no partial file is left behind.
Result<bool> write_file_atomic(const std::string& path, const std::string& bytes);

// Checks, before any work is done, that a file can be created at `path`: its folder exists, is a
// folder and is writable. The same messages as write_file_atomic.
Result<bool> check_writable(const std::string& path);

// True when both paths name the same existing file (same device and inode), so that e.g.
// `--out` equal to `--model` is refused before anything is written.
bool same_file(const std::string& a, const std::string& b);

}  // namespace sf

// mapped_file.h — a whole file mapped read-only, handed back to the kernel page by page as a
// reader walks through it (so a model load holds ≈ one copy of the weights, not two).
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace sf {

class MappedFile {
 public:
  // Maps `path` (a regular file). The message names the path and why it cannot be read.
  static Result<MappedFile> open(const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& o) noexcept { *this = std::move(o); }
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const char* data() const { return data_; }
  uint64_t size() const { return size_; }
  // Drops the pages that lie wholly before byte `offset` from this process (madvise DONTNEED):
  // a reader that copies the tensors out in file order keeps only the pages it is reading.
  // Reading there again afterwards is still valid (the kernel reads the file again).
  void release_before(uint64_t offset);

 private:
  char* data_ = nullptr;
  uint64_t size_ = 0;
  uint64_t released_ = 0;  // bytes [0, released_) already given back
};

}  // namespace sf

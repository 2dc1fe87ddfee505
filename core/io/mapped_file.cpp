#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sf {

Result<MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{"'" + path + "': cannot open (" + std::strerror(errno) + ")"};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{"'" + path + "': expected a regular file, found " +
                 (S_ISDIR(st.st_mode) ? "a directory" : "something else")};
  }
  MappedFile f;
  f.size_ = static_cast<uint64_t>(st.st_size);
  if (f.size_ > 0) {
    void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      return Error{"'" + path + "': cannot map " + std::to_string(f.size_) + " bytes (" + why + ")"};
    }
    f.data_ = static_cast<char*>(p);
    // Readers walk forwards: read ahead aggressively, drop behind.
    ::madvise(p, f.size_, MADV_SEQUENTIAL);
  }
  ::close(fd);  // the mapping keeps the file
  return f;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(data_, size_);
    data_ = o.data_;
    size_ = o.size_;
    released_ = o.released_;
    o.data_ = nullptr;
    o.size_ = o.released_ = 0;
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

void MappedFile::release_before(uint64_t offset) {
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t end = std::min(offset, size_) / page * page;
  if (!data_ || end <= released_) return;
  ::madvise(data_ + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

}  // namespace sf

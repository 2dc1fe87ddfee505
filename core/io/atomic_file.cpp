// atomic_file.cpp — temporary file + fsync + rename + fsync of the folder (see atomic_file.h).
#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace sf {

namespace {

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string name_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Error failure(const std::string& path, const std::string& why) { return Error{"'" + path + "': cannot write: " + why}; }

// Why a file cannot be created in `dir`, from the errno of the failed attempt.
std::string folder_problem(const std::string& dir, int err) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return "the folder '" + dir + "' does not exist";
  if (!S_ISDIR(st.st_mode)) return "'" + dir + "' is not a folder";
  if (err == EACCES || err == EPERM || err == EROFS) return "the folder '" + dir + "' is not writable";
  if (err == ENOSPC || err == EDQUOT) return "no space left on the disk of '" + dir + "'";
  return std::strerror(err);
}

bool write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Result<bool> check_writable(const std::string& path) {
  if (path.empty() || path.back() == '/') return failure(path, "expected a file name, found a folder");
  const std::string dir = folder_of(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return failure(path, "it is a folder");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return failure(path, folder_problem(dir, errno));
  return true;
}

Result<bool> write_file_atomic(const std::string& path, const std::string& bytes) {
  if (auto ok = check_writable(path); !ok) return ok;
  const std::string dir = folder_of(path);
  // Hidden and unique per call: two writers of one path never share a temporary file.
  std::string tmpl =
      (dir == "." && path.find('/') == std::string::npos ? "" : dir + "/") + "." + name_of(path) + ".tmp-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const int fd = ::mkstemp(buf.data());
  if (fd < 0) return failure(path, folder_problem(dir, errno));
  const std::string tmp(buf.data());
  // mkstemp creates 0600; a written file gets the usual 0666 & ~umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  const bool written = write_all(fd, bytes);
  const int write_errno = errno;
  const bool synced = written && ::fsync(fd) == 0;
  const int sync_errno = errno;
  if (::close(fd) != 0 || !written || !synced) {
    ::unlink(tmp.c_str());
    return failure(path, folder_problem(dir, written ? sync_errno : write_errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return failure(path, "cannot rename the temporary file into place: " + std::string(std::strerror(e)));
  }
  // The rename is durable once the folder's entry is on disk; a failure here loses nothing
  // already written, so it is not reported.
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace sf

#include "io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace nf {

FileError::FileError(const std::string& path, const std::string& problem)
    : std::runtime_error(path + ": " + problem), m_path(path), m_problem(problem) {}

AtomicFile::AtomicFile(std::string path) : m_path(std::move(path)) {
  m_tmpPath = m_path + ".tmp-" + std::to_string(::getpid());
  m_fd = ::open(m_tmpPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (m_fd < 0) throw FileError(m_path, std::string("cannot create temporary file: ") + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (m_fd >= 0) {
    ::close(m_fd);
    ::unlink(m_tmpPath.c_str());
  }
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (m_fd < 0) throw FileError(m_path, "write after commit");
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = ::write(m_fd, p, bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw FileError(m_path, std::string("write failed: ") + std::strerror(errno));
    }
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

void AtomicFile::commit() {
  if (m_fd < 0) throw FileError(m_path, "commit twice");
  // fsync before rename: otherwise a power loss can leave a renamed but empty file.
  if (::fsync(m_fd) != 0) throw FileError(m_path, std::string("fsync failed: ") + std::strerror(errno));
  if (::close(m_fd) != 0) {
    m_fd = -1;
    ::unlink(m_tmpPath.c_str());
    throw FileError(m_path, std::string("close failed: ") + std::strerror(errno));
  }
  m_fd = -1;
  if (::rename(m_tmpPath.c_str(), m_path.c_str()) != 0) {
    int err = errno;
    ::unlink(m_tmpPath.c_str());
    throw FileError(m_path, std::string("rename failed: ") + std::strerror(err));
  }
  // Make the rename itself durable.
  std::string dir = std::filesystem::path(m_path).parent_path().string();
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void writeFileAtomic(const std::string& path, const std::string& contents) {
  AtomicFile file(path);
  file.write(contents);
  file.commit();
}

std::string readTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw FileError(path, "read failed");
  return ss.str();
}

}  // namespace nf

#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace nf {

FileError::FileError(const std::string& path, const std::string& problem)
    : std::runtime_error(path + ": " + problem), m_path(path), m_problem(problem) {}

AtomicFile::AtomicFile(std::string path, FileAccess access) : m_path(std::move(path)) {
  m_tmpPath = m_path + ".tmp-" + std::to_string(::getpid());
  ::unlink(m_tmpPath.c_str());  // a leftover of a process with our pid, which may have other permissions
  m_fd = ::open(m_tmpPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                access == FileAccess::OwnerOnly ? 0600 : 0644);
  if (m_fd < 0 && errno == ENOENT)  // the likeliest slip: an output in a folder not made yet
    throw FileError(m_path, "cannot be written: its folder does not exist");
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

void writeFileAtomic(const std::string& path, const std::string& contents, FileAccess access) {
  AtomicFile file(path, access);
  file.write(contents);
  file.commit();
}

void fsyncPath(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw FileError(path, "cannot open to flush it to disk");
  const int result = ::fsync(fd);
  ::close(fd);
  if (result != 0) throw FileError(path, "could not be flushed to disk (disk full or I/O error?)");
}

namespace {

std::string parentOf(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

}  // namespace

void replaceFolder(const std::string& tmp, const std::string& to) {
  namespace fs = std::filesystem;
  const std::string aside = to + ".old-" + std::to_string(::getpid());
  std::error_code error, ignored;
  fs::remove_all(aside, ignored);
  try {
    fsyncPath(tmp);
  } catch (const FileError& e) {
    throw FileError(to, std::string("could not be replaced: ") + e.what());
  }
  const bool replacing = fs::exists(to, ignored);
  if (replacing) fs::rename(to, aside, error);
  if (!error) fs::rename(tmp, to, error);
  if (error) {
    if (replacing && !fs::exists(to, ignored)) fs::rename(aside, to, ignored);
    throw FileError(to, "could not be replaced: " + error.message());
  }
  fsyncPath(parentOf(to));
  fs::remove_all(aside, ignored);  // a leftover of a failed removal is only disk space, never read
}

void removeFolder(const std::string& path) {
  namespace fs = std::filesystem;
  const std::string doomed = path + ".tmp-" + std::to_string(::getpid());
  std::error_code error;
  fs::remove_all(doomed, error);
  fs::rename(path, doomed, error);
  if (!error) fs::remove_all(doomed, error);
  if (error) throw FileError(path, "could not be removed: " + error.message());
}

namespace {

const char* fileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string sizeText(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

}  // namespace

OpenedFile openRegularFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw FileError(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    throw FileError(path, std::string("cannot stat: ") + std::strerror(error));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FileError(path, std::string("is ") + fileKind(st.st_mode) + ", not a regular file");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return {fd, static_cast<std::size_t>(st.st_size)};
}

void requireRegularFile(const std::string& path) { ::close(openRegularFile(path).fd); }

std::string readTextFile(const std::string& path, std::size_t maxBytes) {
  const OpenedFile file = openRegularFile(path);
  if (file.size > maxBytes) {
    ::close(file.fd);
    throw FileError(path, "is " + sizeText(file.size) + ", more than the " + sizeText(maxBytes) +
                              " such a file may have");
  }
  std::string text(file.size, '\0');
  std::size_t done = 0;
  while (done < text.size()) {  // up to the size at opening: a file that grows meanwhile is cut there
    const ssize_t n = ::read(file.fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(file.fd);
      throw FileError(path, std::string("read failed: ") + std::strerror(error));
    }
    if (n == 0) break;  // it shrank
    done += static_cast<std::size_t>(n);
  }
  ::close(file.fd);
  text.resize(done);
  return text;
}

}  // namespace nf

#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
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
  if (m_fd >= 0) ::close(m_fd);
  if (!m_committed) ::unlink(m_tmpPath.c_str());
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (m_fd < 0) throw FileError(m_path, "write after sync or commit");
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

void AtomicFile::sync() {
  if (m_failed) throw FileError(m_path, "sync after a failed sync");
  if (m_fd < 0) throw FileError(m_path, "sync twice, or after commit");
  // Failed until it succeeds: after a failed fsync or close the bytes may not be on disk, and a second fsync
  // can succeed all the same (Linux forgets the error), so nothing is committed after one.
  m_failed = true;
  // fsync before rename: otherwise a power loss can leave a renamed but empty file.
  if (::fsync(m_fd) != 0) throw FileError(m_path, std::string("fsync failed: ") + std::strerror(errno));
  const int closed = ::close(m_fd);
  m_fd = -1;
  if (closed != 0) throw FileError(m_path, std::string("close failed: ") + std::strerror(errno));
  m_failed = false;
}

void AtomicFile::commit() {
  if (m_committed) throw FileError(m_path, "commit twice");
  if (m_failed) throw FileError(m_path, "commit after a failed sync");
  if (m_fd >= 0) sync();
  if (::rename(m_tmpPath.c_str(), m_path.c_str()) != 0)
    throw FileError(m_path, std::string("rename failed: ") + std::strerror(errno));
  m_committed = true;
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

std::string writeFolderBeside(const std::string& folder,
                              const std::function<void(const std::string&)>& fill) {
  namespace fs = std::filesystem;
  const std::string tmp = folder + ".tmp-" + std::to_string(::getpid());
  std::error_code ignored;
  fs::remove_all(tmp, ignored);
  try {
    fs::create_directories(tmp);
    fill(tmp);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ignored);  // nothing of a failed write stays on a full disk
    throw FileError(folder, std::string("could not be written: ") + e.code().message());
  } catch (...) {
    fs::remove_all(tmp, ignored);
    throw;
  }
  return tmp;
}

void replaceFolder(const std::string& tmp, const std::string& to) { replaceFolders({{tmp, to}}); }

void replaceFolders(const std::vector<std::pair<std::string, std::string>>& tmpAndTo) {
  namespace fs = std::filesystem;
  const std::string pid = std::to_string(::getpid());
  std::error_code error, ignored;
  for (const auto& [tmp, to] : tmpAndTo) try {
      fsyncPath(tmp);
    } catch (const FileError& e) {
      throw FileError(to, std::string("could not be replaced: ") + e.what());
    }
  std::vector<bool> movedAside(tmpAndTo.size(), false);
  std::size_t renamedIn = 0;
  auto undo = [&] {  // back as it was: the new ones out again, the old ones back in
    for (; renamedIn > 0; --renamedIn)
      fs::rename(tmpAndTo[renamedIn - 1].second, tmpAndTo[renamedIn - 1].first, ignored);
    for (std::size_t i = 0; i < tmpAndTo.size(); ++i)
      if (movedAside[i]) fs::rename(tmpAndTo[i].second + ".old-" + pid, tmpAndTo[i].second, ignored);
  };
  for (std::size_t i = tmpAndTo.size(); i-- > 0;) {
    const std::string& to = tmpAndTo[i].second;
    fs::remove_all(to + ".old-" + pid, ignored);
    if (fs::exists(to, ignored)) {
      fs::rename(to, to + ".old-" + pid, error);
      movedAside[i] = !error;
    }
    if (error) {
      undo();
      throw FileError(to, "could not be replaced: " + error.message());
    }
  }
  for (; renamedIn < tmpAndTo.size(); ++renamedIn) {
    const auto& [tmp, to] = tmpAndTo[renamedIn];
    fs::rename(tmp, to, error);
    if (error) {
      undo();
      throw FileError(to, "could not be replaced: " + error.message());
    }
  }
  // In place now: what is left is tidying, which must not report the replacement as failed.
  for (const auto& [tmp, to] : tmpAndTo) {
    try {
      fsyncPath(parentOf(to));
    } catch (const FileError&) {
    }
    fs::remove_all(to + ".old-" + pid, ignored);  // a leftover of a failed removal is only disk space
  }
}

long deadWriterOf(const std::string& name, const char* mark, bool ownIsGone) {
  const std::string suffix = std::string(mark) + "-";
  const std::size_t at = name.rfind(suffix);
  if (at == std::string::npos || at == 0) return 0;
  const std::string digits = name.substr(at + suffix.size());
  if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return 0;
  const long pid = std::stol(digits);
  if (pid <= 0) return 0;
  if (pid == ::getpid()) return ownIsGone ? pid : 0;
  return ::kill(pid, 0) == 0 || errno == EPERM ? 0 : pid;
}

int removeDeadWritersLeftovers(const std::string& folder, const std::vector<std::string>& names) {
  namespace fs = std::filesystem;
  std::error_code error;
  std::vector<fs::path> entries;  // listed first: the loop removes
  for (const auto& entry : fs::directory_iterator(folder, error)) entries.push_back(entry.path());
  int removed = 0;
  for (const fs::path& path : entries) {
    const std::string name = path.filename().string();
    const bool ours = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return name.size() > n.size() + 5 && name.compare(0, n.size(), n) == 0 &&
             (name.compare(n.size(), 5, ".tmp-") == 0 || name.compare(n.size(), 5, ".old-") == 0);
    });
    if (!ours || (deadWriterOf(name, ".tmp") == 0 && deadWriterOf(name, ".old") == 0)) continue;
    std::error_code failed;
    fs::remove_all(path, failed);
    removed += failed ? 0 : 1;
  }
  return removed;
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

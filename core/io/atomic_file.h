// Write-then-rename files: a crash or a full disk never leaves a half-written file in place.
#pragma once
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nf {

// An error about a specific file; what() always starts with the file's path.
class FileError : public std::runtime_error {
 public:
  FileError(const std::string& path, const std::string& problem);
  const std::string& path() const { return m_path; }
  const std::string& problem() const { return m_problem; }  // what() without the path

 private:
  std::string m_path, m_problem;
};

// Who may read a file we write: everyone (0644), or its owner alone (0600: a file holding a secret).
enum class FileAccess { Shared, OwnerOnly };

// Collects bytes in "<path>.tmp-<pid>", then commit() flushes, fsyncs and renames it over <path>. The
// temporary is created anew (never a link, nor a leftover with other permissions followed or reused).
// Destroying an uncommitted AtomicFile removes the temporary and leaves <path> untouched.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path, FileAccess access = FileAccess::Shared);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, std::size_t bytes);
  void write(const std::string& text) { write(text.data(), text.size()); }
  // Flushes the bytes to disk and closes the temporary: what may take long or fail is done, and only the
  // rename is left to commit() (a file committed with another, as a token file with its sidecar).
  void sync();
  void commit();  // sync() if not done yet, then the rename

 private:
  std::string m_path, m_tmpPath;
  int m_fd = -1;
  bool m_committed = false, m_failed = false;  // m_failed: a sync failed (nothing may be committed)
};

void writeFileAtomic(const std::string& path, const std::string& contents,
                     FileAccess access = FileAccess::Shared);

// Flushes a file or folder to disk (a rename is durable once its folder is flushed); FileError if it fails.
void fsyncPath(const std::string& path);

// Folders written whole (a model folder is several files, and readers take one with config.json as complete):
// `fill` writes the new folder under a temporary name beside `folder` ("<folder>.tmp-<pid>", created empty
// first), which is returned for replaceFolder(s) to rename in. If `fill` throws, the temporary is removed
// and the error passed on (a file system's as FileError naming `folder`).
std::string writeFolderBeside(const std::string& folder, const std::function<void(const std::string&)>& fill);
// `tmp`, complete and beside `to`, takes the name `to`. A folder already there is moved aside to
// "<to>.old-<pid>" and removed only after, so a crash leaves a whole folder under `to`, or (between the two
// renames) both whole beside it. FileError names `to`.
void replaceFolder(const std::string& tmp, const std::string& to);
// Several folders replaced as one (an export's folded/ and standard/): every old one is moved aside (the last
// first), then every new one renamed in (the first first), so no moment shows a new folder beside an old one.
void replaceFolders(const std::vector<std::pair<std::string, std::string>>& tmpAndTo);
// The process id in the name of what a writer leaves while it works ("<name><mark>-<pid>", mark ".tmp" or
// ".old") when that process is gone, else 0. This process's own id counts as gone with `ownIsGone` (a
// leftover of an earlier process with our id, as in a restarted container), which only a caller with no
// writer of its own at work may say.
long deadWriterOf(const std::string& name, const char* mark, bool ownIsGone = true);
// Removes the temporaries ("<name>.tmp-<pid>") and moved-aside folders ("<name>.old-<pid>") that dead writers
// of `names` left in `folder` (a kill leaves them: a full model copy each); returns how many. Other entries
// are the user's, whatever their names.
int removeDeadWritersLeftovers(const std::string& folder, const std::vector<std::string>& names);
// Removes a folder so that a crash never leaves a part of it under its name: it is renamed to
// "<path>.tmp-<pid>" first (a dead writer's leftover to whoever cleans up) and removed from there.
void removeFolder(const std::string& path);

// Inputs are regular files only: a FIFO would block a reader forever, a device (a link to /dev/zero) never
// ends, a directory reads as nothing. Opens `path` read-only without blocking on a FIFO, refuses anything
// else by name and kind, and returns the descriptor (the caller closes it) and the file's size.
struct OpenedFile {
  int fd = -1;
  std::size_t size = 0;
};
OpenedFile openRegularFile(const std::string& path);
// The same check, for readers that open the file themselves (LibTorch's, std::ifstream).
void requireRegularFile(const std::string& path);

// A whole text file (JSON, merges), read up to its size at opening; one larger than maxBytes is refused
// before anything is read.
constexpr std::size_t kMaxTextFileBytes = std::size_t{512} << 20;
std::string readTextFile(const std::string& path, std::size_t maxBytes = kMaxTextFileBytes);

}  // namespace nf

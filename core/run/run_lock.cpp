#include "run/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "run/run_directory.h"

namespace nf {
namespace {

std::string hostName() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "an unknown host";
}

std::string now() {
  const std::time_t t = std::time(nullptr);
  char text[32];
  std::tm local{};
  ::localtime_r(&t, &local);
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
  return text;
}

nlohmann::json holderJson(int fd) {
  char text[1024] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  return nlohmann::json::parse(std::string(text, n > 0 ? n : 0), nullptr, false);
}

// Who holds the lock, as its file says; the file is written by the holder after it took the lock.
std::string holderOf(int fd) {
  const nlohmann::json holder = holderJson(fd);
  if (!holder.is_object() || !holder.value("pid", nlohmann::json()).is_number_integer())
    return "another process";
  const auto text = [&](const char* field) {  // a damaged file's field of another type reads as unknown
    return holder.contains(field) && holder[field].is_string() ? holder[field].get<std::string>() : "?";
  };
  return "process " + std::to_string(holder.at("pid").get<long>()) + " on " + text("host") + " (since " +
         text("since") + ")";
}

}  // namespace

std::optional<long> goneTrainer(const std::string& runDir) {
  const int fd = ::open(run::lockPath(runDir).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const nlohmann::json holder = holderJson(fd);
  ::close(fd);
  if (!holder.is_object() || !holder.value("pid", nlohmann::json()).is_number_integer() ||
      holder.value("host", nlohmann::json()) != nlohmann::json(hostName()))
    return std::nullopt;
  const long pid = holder.at("pid").get<long>();
  if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) return std::nullopt;
  return pid;
}

RunLock::RunLock(const std::string& runDir) {
  const std::string path = run::lockPath(runDir);
  m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (m_fd < 0) throw FileError(path, std::string("cannot be opened: ") + std::strerror(errno));
  if (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string holder = error == EWOULDBLOCK ? holderOf(m_fd) : "";
    ::close(m_fd);
    if (error != EWOULDBLOCK) throw FileError(path, std::string("cannot be locked: ") + std::strerror(error));
    throw FileError(runDir, "is being trained by " + holder +
                                ": one run has one trainer at a time. Stop that one first (or wait for it), "
                                "then resume");
  }
  const std::string holder =
      nlohmann::json{{"pid", ::getpid()}, {"host", hostName()}, {"since", now()}}.dump() + "\n";
  // Who holds it, for a refused second trainer; the lock itself is the flock, so a failed write changes
  // nothing but that message.
  if (::ftruncate(m_fd, 0) == 0) {
    [[maybe_unused]] const ssize_t written = ::pwrite(m_fd, holder.data(), holder.size(), 0);
  }
}

RunLock::~RunLock() {
  if (m_fd >= 0) ::close(m_fd);  // closing releases the flock
}

}  // namespace nf

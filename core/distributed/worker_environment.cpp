#include "distributed/worker_environment.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "util/whole_number.h"

namespace nf {
namespace {

// A whole decimal number within [low, high], or an error naming the variable.
int parseInteger(const std::string& name, const std::string& text, long low, long high) {
  const std::optional<int64_t> value = wholeNumber(text);
  if (!value || *value < low || *value > high)
    throw std::invalid_argument(name + "='" + text + "' is not a whole number from " + std::to_string(low) +
                                " to " + std::to_string(high));
  return static_cast<int>(*value);
}

}  // namespace

EnvironmentLookup processEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

std::optional<WorkerEnvironment> readWorkerEnvironment(const EnvironmentLookup& lookup) {
  const auto rank = lookup("RANK"), worldSize = lookup("WORLD_SIZE");
  if (!rank && !worldSize) return std::nullopt;
  auto required = [&](const char* name) {
    const auto value = lookup(name);
    if (!value || value->empty())
      throw std::invalid_argument(std::string(name) +
                                  " is not set, but RANK or WORLD_SIZE is: a multi-worker run needs RANK, "
                                  "WORLD_SIZE, MASTER_ADDR and MASTER_PORT (torchrun sets all four)");
    return *value;
  };
  constexpr long kMaxWorkers = 1 << 20;
  WorkerEnvironment w;
  w.worldSize = parseInteger("WORLD_SIZE", required("WORLD_SIZE"), 1, kMaxWorkers);
  w.rank = parseInteger("RANK", required("RANK"), 0, w.worldSize - 1);
  w.masterAddress = required("MASTER_ADDR");
  w.masterPort = parseInteger("MASTER_PORT", required("MASTER_PORT"), 1, 65535);
  const auto localWorldSize = lookup("LOCAL_WORLD_SIZE");
  w.localWorldSize =
      localWorldSize ? parseInteger("LOCAL_WORLD_SIZE", *localWorldSize, 1, w.worldSize) : w.worldSize;
  const auto localRank = lookup("LOCAL_RANK");
  w.localRank = localRank ? parseInteger("LOCAL_RANK", *localRank, 0, w.localWorldSize - 1) : w.rank;
  if (!localRank && w.localRank >= w.localWorldSize)
    throw std::invalid_argument("LOCAL_RANK is not set and RANK=" + std::to_string(w.rank) +
                                " is not below LOCAL_WORLD_SIZE=" + std::to_string(w.localWorldSize));
  const auto agentStore = lookup("TORCHELASTIC_USE_AGENT_STORE");
  w.launcherHostsStore = agentStore && (*agentStore == "True" || *agentStore == "true" || *agentStore == "1");
  if (const auto attempt = lookup("TORCHELASTIC_RESTART_COUNT"))
    w.launcherAttempt = parseInteger("TORCHELASTIC_RESTART_COUNT", *attempt, 0, 1 << 20);
  return w;
}

std::string workerDevice(const std::string& device, const WorkerEnvironment& worker) {
  if (device == "cuda" && worker.localWorldSize > 1) return "cuda:" + std::to_string(worker.localRank);
  return device;
}

bool isLoopbackHost(const std::string& host) {
  in_addr v4{};
  in6_addr v6{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;  // 127.0.0.0/8
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return host == "localhost";  // any other name could resolve anywhere
}

int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("cannot open a socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  const int error = errno;
  ::close(fd);
  if (!ok) throw std::runtime_error(std::string("no free port on 127.0.0.1: ") + std::strerror(error));
  return ntohs(address.sin_port);
}

BatchShare batchShare(int64_t sequences, const WorkerEnvironment& worker) {
  if (sequences < 1 || sequences % worker.worldSize != 0)
    throw std::invalid_argument("a micro-batch of " + std::to_string(sequences) +
                                " sequences does not split evenly over " + std::to_string(worker.worldSize) +
                                " workers: choose a micro-batch that is a multiple of the worker count");
  const int64_t count = sequences / worker.worldSize;
  return {count * worker.rank, count};
}

}  // namespace nf

#include "serve/serve_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <filesystem>
#include <stdexcept>

#include "io/atomic_file.h"
#include "io/file_format.h"
#include "util/whole_number.h"

namespace nf {

using json = nlohmann::json;

ServeOptions parseServeAddress(const std::string& text) {
  ServeOptions options;
  std::string port = text;
  if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    options.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (options.host.size() > 2 && options.host.front() == '[' && options.host.back() == ']')
      options.host = options.host.substr(1, options.host.size() - 2);  // [::1]:8080
  }
  const std::optional<int64_t> value = wholeNumber(port);
  if (options.host.empty() || !value || *value < 0 || *value > 65535)
    throw std::invalid_argument("'" + text + "' is not PORT or HOST:PORT (port 0–65535; 0: any free one)");
  options.port = static_cast<int>(*value);
  return options;
}

std::string ServeAddress::text() const { return host + ":" + std::to_string(port); }

ServeAddress serveAddressFromJson(const json& j, const std::string& source) {
  if (!j.is_object()) throw FileError(source, "is not a run's serve.json (not a JSON object)");
  checkFileFormat(j, kServeFormat, source);
  if (!j.contains("host") || !j["host"].is_string() || !j.contains("port") ||
      !j["port"].is_number_integer() || !j.contains("token") || !j["token"].is_string())
    throw FileError(source, "is not a run's serve.json: it needs \"host\", \"port\" and \"token\"");
  const int64_t port = j["port"].get<int64_t>();
  if (port <= 0 || port > 65535) throw FileError(source, "holds no port a run serves on");
  ServeAddress address;
  address.host = j["host"].get<std::string>();
  address.port = static_cast<int>(port);
  address.token = j["token"].get<std::string>();
  return address;
}

void deepenListenQueue(int port) {
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ignored)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    int listening = 0;
    socklen_t size = sizeof(listening);
    sockaddr_storage address{};
    socklen_t addressSize = sizeof(address);
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) != 0 || !listening ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &addressSize) != 0)
      continue;
    const int boundPort =
        address.ss_family == AF_INET    ? ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port)
        : address.ss_family == AF_INET6 ? ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port)
                                        : -1;
    if (boundPort == port) ::listen(fd, SOMAXCONN);
  }
}

}  // namespace nf

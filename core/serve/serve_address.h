// Where a run is served: the address a trainer serves on (--serve), and the address a client reaches a
// served run at (its serve.json). Plain C++, without cpp-httplib.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace nf {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 0;              // 0: a free port, chosen by the system
  bool allowRemote = false;  // a host other than loopback needs this (and gets a warning)
};

// "PORT" or "HOST:PORT" (port 0–65535). std::invalid_argument naming the text otherwise.
ServeOptions parseServeAddress(const std::string& text);

struct ServeAddress {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string token;
  // What is known against it still serving, said with a failed request: the run directory's trainer is
  // gone (its serve.json was left by a killed process). Not a reason to refuse to try: a trainer in another
  // PID namespace of the same host looks gone too.
  std::string doubt;
  std::string text() const;  // "host:port"
  bool operator==(const ServeAddress& o) const {
    return host == o.host && port == o.port && token == o.token;
  }
};
// serve.json's content; FileError naming `source` when it is not a run's.
ServeAddress serveAddressFromJson(const nlohmann::json& j, const std::string& source);

// Debian's cpp-httplib (0.11) listens with a backlog of 5 and has no setting for it; with TCP_DEFER_ACCEPT
// the connections that send nothing wait in that queue, and a few would keep every client out. So the
// listening socket bound to `port` (found among this process's descriptors: httplib does not give it out)
// listens again with the system's largest backlog (listen() on a listening socket only changes that).
void deepenListenQueue(int port);

}  // namespace nf

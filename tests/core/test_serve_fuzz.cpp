// The steering endpoint under fire: over 100,000 random and mutated requests on raw sockets (broken framing,
// mutated paths, queries, headers and JSON bodies; with no token, a wrong one and the right one) must
// neither crash it nor change the run, and it must go on answering correctly. The run is one whose steps
// are all done, so every edit a mutation could make is refused by the rules — an accepted one would be a
// state change. The analysis requests' parser is fuzzed in process (a mutated request that parsed would
// queue real work on the server).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <random>

#include "analysis/analysis_request.h"
#include "check.h"
#include "io/atomic_file.h"
#include "run_fixtures.h"
#include "serve/steering_server.h"
#include "train/trainer.h"

using namespace nf;
using namespace nf::test;
using json = nlohmann::json;

namespace {

// One HTTP/1.1 connection on a raw socket, so that requests can be malformed in ways a client library
// refuses to send.
class RawConnection {
 public:
  explicit RawConnection(int port) : m_port(port) {}
  ~RawConnection() { close(); }

  // Sends `request` and reads one answer: its status, or 0 when the server closed without one (which it
  // may for broken framing). `endOfRequest`: the client sends nothing more (the server then never waits
  // for the rest of a truncated request).
  int exchange(const std::string& request, bool endOfRequest, std::string* answerBody = nullptr) {
    // A kept-alive connection the server closed meanwhile answers nothing: the request goes again on a
    // new one, as HTTP clients do.
    const bool reused = m_fd >= 0;
    if (m_fd < 0) open();
    int status = 0;
    if (sendAll(request)) {
      if (endOfRequest) ::shutdown(m_fd, SHUT_WR);
      status = readAnswer(answerBody);
    }
    if (status == 0 && reused && m_buffer.empty()) {
      close();
      return exchange(request, endOfRequest, answerBody);
    }
    // After a 400 the server may not have read the whole request (httplib leaves a body it failed to read
    // on the connection), so the next request goes on a new connection, as after "Connection: close".
    if (status == 0 || status == 400 || endOfRequest || m_closeAfter) close();
    return status;
  }

 private:
  void open() {
    m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(m_fd >= 0);
    timeval timeout{120, 0};  // a server that stops answering fails the test instead of hanging it
    const int noDelay = 1;    // each request in one segment, answered at once (no Nagle wait)
    ::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &noDelay, sizeof noDelay);
    ::setsockopt(m_fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(m_port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE_MSG(::connect(m_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0,
                "the endpoint no longer accepts connections");
    m_buffer.clear();
  }
  void close() {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
  }
  bool sendAll(const std::string& data) {
    for (std::size_t sent = 0; sent < data.size();) {
      const ssize_t n = ::send(m_fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }
  bool fill() {
    char chunk[4096];
    const ssize_t n = ::recv(m_fd, chunk, sizeof chunk, 0);
    REQUIRE_MSG(n >= 0 || errno != EAGAIN, "no answer within 120 s");
    if (n <= 0) return false;
    m_buffer.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
  int readAnswer(std::string* answerBody) {
    std::size_t end;
    while ((end = m_buffer.find("\r\n\r\n")) == std::string::npos)
      if (!fill()) return 0;
    const std::string head = m_buffer.substr(0, end);
    m_buffer.erase(0, end + 4);
    REQUIRE_MSG(head.rfind("HTTP/1.1 ", 0) == 0, "not an HTTP answer: " << head.substr(0, 80));
    const int status = std::stoi(head.substr(9, 3));
    std::size_t length = 0;
    std::string lower = head;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (const auto at = lower.find("\r\ncontent-length: "); at != std::string::npos)
      length = std::stoul(lower.substr(at + 18));
    m_closeAfter = lower.find("\r\nconnection: close") != std::string::npos;
    while (m_buffer.size() < length)
      if (!fill()) return 0;
    if (answerBody) *answerBody = m_buffer.substr(0, length);
    m_buffer.erase(0, length);
    return status;
  }

  int m_port;
  int m_fd = -1;
  bool m_closeAfter = false;
  std::string m_buffer;
};

std::string printable(const std::string& text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string request(const std::string& method, const std::string& target, const std::string& token,
                    const std::string& body) {
  std::string r = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!token.empty()) r += "Authorization: Bearer " + token + "\r\n";
  if (!body.empty() || method == "POST" || method == "PUT")
    r += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  return r + "\r\n" + body;
}

// The same request with its body in chunks (Transfer-Encoding: chunked) of random sizes, the chunk sizes
// sometimes mutated; every chunked body is refused unread (401 without the token, 411 with it).
std::string chunkedRequest(const std::string& method, const std::string& target, const std::string& token,
                           const std::string& body, std::mt19937_64& random) {
  std::string r = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!token.empty()) r += "Authorization: Bearer " + token + "\r\n";
  r += "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (std::size_t at = 0; at < body.size();) {
    const std::size_t n = std::min<std::size_t>(1 + random() % 40, body.size() - at);
    char size[32];
    std::snprintf(size, sizeof size, "%zx", random() % 8 == 0 ? n * (1 + random() % 1000) : n);
    r += std::string(size) + "\r\n" + body.substr(at, n) + "\r\n";
    at += n;
  }
  return r + (random() % 4 ? "0\r\n\r\n" : "");
}

// Bodies and values a mutation draws from: valid requests of every kind, and the values that break
// parsers (huge, negative, fractional, of another type, deeply nested).
const std::vector<std::string> kBodies = {
    R"({"request_id": "r1", "add": {"step": 20, "site": "LN_v", "layer": 1}})",
    R"({"request_id": "r2", "add": {"step": 3, "site": "LN_qk", "layer": "all"}})",
    R"({"request_id": "r3", "move": [{"id": 4, "step": 25}, {"id": 5, "step": 26}]})",
    R"({"request_id": "r4", "delete": 6})",
    R"({"request_id": "r5", "add": {"step": 31, "site": "LN_f", "action": "make_fake"}})",
    R"({"request_id": "r6", "request": {"analysis": "dla", "sequences": 4}, "model": "now", "data": 0})",
    R"({})",
    R"([])",
};
const std::vector<std::string> kValues = {"-1",          "0",
                                          "4294967297",  "9223372036854775808",
                                          "1e308",       "-1e308",
                                          "1.5",         "true",
                                          "null",        "\"x\"",
                                          "[]",          "{}",
                                          "\"\\u0000\"", std::string(2000, '[') + std::string(2000, ']'),
                                          "\"\xff\xfe\""};

std::string mutate(std::string text, std::mt19937_64& random) {
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(random() % std::max<std::size_t>(n, 1)); };
  const int edits = 1 + static_cast<int>(pick(4));
  for (int i = 0; i < edits; ++i) {
    const std::size_t at = pick(text.size() + 1);
    switch (pick(7)) {
      case 0:  // flip a byte
        if (!text.empty()) text[pick(text.size())] ^= static_cast<char>(1 << pick(8));
        break;
      case 1:  // insert a random byte
        text.insert(at, 1, static_cast<char>(random()));
        break;
      case 2:  // delete a run
        text.erase(at, pick(8) + 1);
        break;
      case 3:  // duplicate a slice
        text.insert(at, text.substr(pick(text.size()), pick(40)));
        break;
      case 4:  // truncate
        text.resize(at);
        break;
      case 5: {  // replace a number or a value by one that breaks parsers
        const std::size_t digit = text.find_first_of("0123456789", at);
        if (digit != std::string::npos) {
          const std::size_t end = text.find_first_not_of("0123456789", digit);
          text.replace(digit, (end == std::string::npos ? text.size() : end) - digit,
                       kValues[pick(kValues.size())]);
        }
        break;
      }
      default:  // a random byte string
        text.insert(at, std::string(pick(16), static_cast<char>(random())));
    }
  }
  return text;
}

// Path and query characters only (no space, CR or LF): a mutated target still makes one request line.
std::string mutateTarget(const std::string& target, std::mt19937_64& random) {
  std::string t = mutate(target, random);
  for (char& ch : t)
    if (ch == ' ' || ch == '\r' || ch == '\n' || ch == '\0') ch = '%';
  return t.empty() ? "/" : t;
}

// What may be asked with the right token without changing a finished run, and what may not.
const std::vector<std::string> kHarmless = {"/v1/status", "/v1/schedule", "/v1/metrics?offset=12",
                                            "/v1/analysis?job=1", "/v1/edit"};
const std::vector<std::string> kTargets = {"/v1/status",
                                           "/v1/schedule",
                                           "/v1/metrics?offset=12",
                                           "/v1/analysis?job=1",
                                           "/v1/edit",
                                           "/v1/stop",
                                           "/v1/pause",
                                           "/v1/continue",
                                           "/v1/checkpoint",
                                           "/v1/analyze",
                                           "/v1/metrics/stream?offset=0"};

// A request a mutation could turn into a control with the right token (stop, pause, …): by design that
// would change the run.
bool namesControl(const std::string& target) {
  for (const char* control : {"/v1/stop", "/v1/pause", "/v1/continue", "/v1/checkpoint", "/v1/analyze",
                              "/v1/metrics/stream", "%"})  // '%': a path decoded into one
    if (target.find(control) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE(over_100000_random_and_mutated_requests_neither_crash_the_endpoint_nor_change_the_run) {
  TempDir dir;
  RunConfig config = smallRun(dir);
  auto trainer = Trainer::start(dir.path("run"), config);
  REQUIRE(trainer->run());  // all 30 steps done: every edit is refused by the rules
  SteeringServer server(*trainer, ServeOptions{});
  const std::string run = dir.path("run");
  const std::string token = server.token();
  const Schedule schedule = trainer->schedule();
  const auto metricsSize = std::filesystem::file_size(run::metricsPath(run));
  std::mt19937_64 random(20261123);
  std::string wrong = token;
  wrong[5] = wrong[5] == 'a' ? 'b' : 'a';

  int64_t sent = 0;
  std::map<int, int64_t> statuses;
  // 1. Broken framing, each on a connection of its own: mutated whole requests (with the right token only
  //    of harmless ones), random bytes.
  for (int i = 0; i < 6000; ++i, ++sent) {
    RawConnection connection(server.port());
    const bool authorized = random() % 2 == 0;
    const std::string& target =
        authorized ? kHarmless[random() % kHarmless.size()] : kTargets[random() % kTargets.size()];
    const std::string valid = request(random() % 2 ? "GET" : "POST", target, authorized ? token : wrong,
                                      kBodies[random() % kBodies.size()]);
    std::string bytes = i % 5 == 0   ? std::string(random() % 300, static_cast<char>(random()))
                        : i % 5 == 1 ? chunkedRequest("POST", target, authorized ? token : wrong,
                                                      kBodies[random() % kBodies.size()], random)
                                     : mutate(valid, random);
    for (std::size_t k = 0; i % 5 == 0 && k < bytes.size(); ++k) bytes[k] = static_cast<char>(random());
    const int status = connection.exchange(bytes, /*endOfRequest=*/true);
    // A chunked body is refused unread and the connection closed; the body's bytes still in flight may make
    // that close a reset that overtakes the answer (0: none read).
    if (i % 5 == 1)
      REQUIRE_MSG(status == 0 || status == (authorized ? 411 : 401),
                  "a chunked body answered " << status << ": " << printable(bytes.substr(0, 200)));
    ++statuses[status];
  }
  // 2. Well-framed requests over kept-alive connections: without the right token anything goes and must be
  //    refused (401); with it, mutated queries and edit bodies (never stop, pause, continue, checkpoint or
  //    analyze: those would change the run by design). No GET carries a body: httplib does not read one,
  //    and its bytes would be taken for the next request (HTTP gives a GET body no meaning).
  RawConnection connection(server.port());
  std::deque<std::string> recent;  // the last requests and answers, for the message when one is wrong
  auto history = [&] {
    std::string text;
    for (const std::string& r : recent) text += "\n  " + printable(r);
    return text;
  };
  for (int i = 0; i < 96000; ++i, ++sent) {
    std::string method = "GET", target, body, token_ = token;
    const bool authorized = i % 2 == 0;
    if (!authorized) {
      target = mutateTarget(kTargets[random() % kTargets.size()], random);
      method = random() % 3 ? "POST" : (random() % 2 ? "GET" : "PUT");
      if (method != "GET") body = mutate(kBodies[random() % kBodies.size()], random);
      token_ = random() % 2 ? wrong : token.substr(0, random() % token.size());
      if (random() % 3 == 0) token_.clear();
    } else {
      switch (random() % 4) {
        case 0:
          target = mutateTarget("/v1/metrics?offset=" + std::to_string(random() % 5000), random);
          break;
        case 1:
          target = mutateTarget("/v1/analysis?job=" + std::to_string(random() % 3), random);
          break;
        case 2:
          target = random() % 2 ? "/v1/status" : "/v1/schedule";
          break;
        default:
          method = "POST";
          target = "/v1/edit";
          body = mutate(kBodies[random() % 6], random);
      }
      if (namesControl(target)) target = "/v1/status";
    }
    const std::string sentText = request(method, target, token_, body);
    std::string answer;
    const int status = connection.exchange(sentText, false, &answer);
    recent.push_back(std::to_string(status) + " for " + sentText + " → " + answer.substr(0, 120));
    if (recent.size() > 4) recent.pop_front();
    const json reply = json::parse(answer, nullptr, false);
    REQUIRE_MSG(status != 0 && status != 500 && reply.is_object(), "a wrong answer:" << history());
    if (!authorized) {
      REQUIRE_MSG(status != 200, "an unauthorized request was answered:" << history());
    } else if (target == "/v1/status" || target == "/v1/schedule") {
      REQUIRE_MSG(status == 200 && reply.contains("steps_done") == true &&
                      reply.contains("schedule") == (target == "/v1/schedule"),
                  "not the answer asked for:" << history());
    } else if (target == "/v1/edit" && status == 200) {
      REQUIRE_MSG(reply["accepted"] == false, "an edit of a finished run was accepted:" << history());
    }
    ++statuses[status];
  }
  REQUIRE(sent >= 100000);
  std::string counts;
  for (const auto& [status, n] : statuses) counts += " " + std::to_string(status) + "×" + std::to_string(n);
  std::printf("%lld requests; answers:%s\n", static_cast<long long>(sent), counts.c_str());

  // Nothing changed, and the endpoint still answers correctly.
  REQUIRE(trainer->schedule() == schedule);
  REQUIRE(!trainer->stopRequested());
  REQUIRE(!trainer->pauseRequested());
  REQUIRE_EQ(std::filesystem::file_size(run::metricsPath(run)), metricsSize);
  std::string answer;
  REQUIRE_EQ(RawConnection(server.port()).exchange(request("GET", "/v1/status", token, ""), false, &answer),
             200);
  REQUIRE_EQ(json::parse(answer)["steps_done"], 30);
  REQUIRE_EQ(RawConnection(server.port()).exchange(request("GET", "/v1/analysis?job=1", token, ""), false),
             404);
}

TEST_CASE(the_analysis_request_parser_takes_100000_mutated_requests_without_crashing) {
  std::mt19937_64 random(7);
  const std::vector<std::string> seeds = {
      R"({"analysis": "dla", "sequences": 8, "trace_layer": 1, "trace_head": 2, "bootstrap": 100, "seed": 3})",
      R"({"analysis": "patching", "count": 96, "frame": 1, "head_positions": false})",
      R"({"analysis": "calibration", "prompts": ["a b", "c"], "new_tokens": 5, "temperature": 0.7})",
      R"({"analysis": "norms", "bins": 40, "length": 64}, {"analysis": "sinks", "threshold": 0.3, "document_starts": true})"};
  int parsed = 0;
  for (int i = 0; i < 100000; ++i) {
    const json j = json::parse(mutate(seeds[random() % seeds.size()], random), nullptr, false);
    try {
      const AnalysisRequest r = analysisRequestFromJson(j);
      checkAnalysisRequest(r);  // what parses is within bounds
      REQUIRE(analysisRequestFromJson(toJson(r)).kind == r.kind);
      ++parsed;
    } catch (const std::invalid_argument&) {
    }
  }
  REQUIRE(parsed > 0);  // the mutations do not only produce garbage
}

TEST_MAIN()

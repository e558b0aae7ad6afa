#include "serve/steering_server.h"

#include <fcntl.h>
#include <httplib.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "distributed/worker_environment.h"
#include "io/atomic_file.h"
#include "io/file_format.h"
#include "run/metrics_log.h"
#include "run/run_directory.h"
#include "train/trainer.h"

namespace nf {
namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxBody = 64 * 1024;       // an edit is a few hundred bytes
constexpr std::size_t kMaxRequestId = 128;        // a client's id for an edit, so a retry is applied once
constexpr std::size_t kRememberedEdits = 10'000;  // answers kept for retries
constexpr std::size_t kMaxMoves = 1000;

// 256 random bits from the kernel, as hex.
std::string randomToken() {
  unsigned char bytes[32];
  std::ifstream random("/dev/urandom", std::ios::binary);
  if (!random.read(reinterpret_cast<char*>(bytes), sizeof bytes))
    throw std::runtime_error("cannot read /dev/urandom for the run's token");
  static const char* const hex = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) token += hex[b >> 4], token += hex[b & 15];
  return token;
}

// Equal strings, in a time that does not depend on where they differ (the standard library has no such
// comparison, and a token compared with == leaks its prefix through timing).
bool sameSecret(const std::string& given, const std::string& secret) {
  unsigned char difference = given.size() == secret.size() ? 0 : 1;
  for (std::size_t i = 0; i < secret.size(); ++i)
    difference |= static_cast<unsigned char>(secret[i] ^ (i < given.size() ? given[i] : 0));
  return difference == 0;
}

void answer(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

// A malformed request: 400 with the reason.
struct BadRequest : std::runtime_error {
  using std::runtime_error::runtime_error;
};

int64_t integerField(const json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end() || !it->is_number_integer())
    throw BadRequest(std::string("\"") + name + "\" must be a whole number");
  return it->get<int64_t>();
}

// The event of an "add" edit: the schedule file's event form, without an id (the run gives it one).
ScheduleEvent eventToAdd(const json& e) {
  if (!e.is_object()) throw BadRequest("\"add\" must be an event object");
  if (e.contains("id")) throw BadRequest("\"add\": the run gives the new event its id; leave \"id\" out");
  integerField(e, "step");
  if (e.contains("layer") && !e["layer"].is_number_integer() && e["layer"] != "all")
    throw BadRequest("\"add\": \"layer\" must be a block index or \"all\"");
  try {
    return scheduleFromJson(json{{"events", json::array({e})}}, "the request").events.at(0);
  } catch (const std::exception& error) {
    throw BadRequest(std::string("\"add\": ") + error.what());
  }
}

}  // namespace

ServeOptions parseServeAddress(const std::string& text) {
  ServeOptions options;
  std::string port = text;
  if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    options.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (options.host.size() > 2 && options.host.front() == '[' && options.host.back() == ']')
      options.host = options.host.substr(1, options.host.size() - 2);  // [::1]:8080
  }
  std::size_t used = 0;
  long value = -1;
  try {
    value = std::stol(port, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (options.host.empty() || port.empty() || used != port.size() || value < 0 || value > 65535)
    throw std::invalid_argument("'" + text + "' is not PORT or HOST:PORT (port 0–65535; 0: any free one)");
  options.port = static_cast<int>(value);
  return options;
}

struct SteeringServer::Impl {
  Trainer& trainer;
  std::string host, token, servePath;
  int port = 0;
  httplib::Server server;
  std::thread thread;

  std::mutex editMutex;  // one edit at a time, so a retry never races its original
  std::map<std::string, std::string> answered;
  std::deque<std::string> answeredOrder;

  explicit Impl(Trainer& t) : trainer(t) {}

  json status() const {
    const RunConfig& c = trainer.config();
    return {{"run", trainer.runDir()},           {"mode", trainingModeName(c.mode)},
            {"steps_done", trainer.stepsDone()}, {"max_steps", c.optimizer.maxSteps},
            {"world_size", trainer.worldSize()}, {"stop_requested", trainer.stopRequested()}};
  }

  // GET /v1/metrics?offset=BYTES: the complete records of metrics.jsonl from that byte offset on, and the
  // offset to ask from next. A log that became shorter (the run was resumed) is sent again from its start.
  json metricsSince(const httplib::Request& req) {
    int64_t offset = 0;
    if (req.has_param("offset")) {
      const std::string text = req.get_param_value("offset");
      std::size_t used = 0;
      try {
        offset = std::stoll(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != text.size() || offset < 0)
        throw BadRequest("\"offset\" must be a byte offset (a whole number ≥ 0)");
    }
    MetricsFollower follower(trainer.runDir(), offset);
    const MetricsFollower::NewLines read = follower.read();
    json records = json::array();
    for (const std::string& line : read.lines) {
      json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!record.is_discarded()) records.push_back(std::move(record));
    }
    return {{"records", records}, {"next_offset", follower.completeOffset()}, {"restarted", read.restarted}};
  }

  json edit(const httplib::Request& req) {
    const json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (!body.is_object()) throw BadRequest("the body must be a JSON object");
    const auto id = body.find("request_id");
    if (id == body.end() || !id->is_string() || id->get<std::string>().empty() ||
        id->get<std::string>().size() > kMaxRequestId)
      throw BadRequest("\"request_id\" must be a string of 1 to 128 characters, new for each edit");
    const int ops = static_cast<int>(body.contains("add")) + static_cast<int>(body.contains("move")) +
                    static_cast<int>(body.contains("delete"));
    if (ops != 1) throw BadRequest("an edit is exactly one of \"add\", \"move\" or \"delete\"");

    std::lock_guard<std::mutex> lock(editMutex);
    const std::string requestId = *id;
    if (const auto seen = answered.find(requestId); seen != answered.end())
      return json::parse(seen->second);  // a retry: the first answer, nothing applied again
    EditResult result;
    if (body.contains("add")) {
      result = trainer.addEvent(eventToAdd(body["add"]));
    } else if (body.contains("move")) {
      const json& moves = body["move"];
      if (!moves.is_array() || moves.empty() || moves.size() > kMaxMoves)
        throw BadRequest("\"move\" must be a list of 1 to 1000 {\"id\", \"step\"} objects");
      std::vector<std::pair<int64_t, int64_t>> idAndStep;
      for (const json& m : moves) {
        if (!m.is_object()) throw BadRequest("\"move\": each entry is an {\"id\", \"step\"} object");
        idAndStep.emplace_back(integerField(m, "id"), integerField(m, "step"));
      }
      result = trainer.moveEvents(idAndStep);
    } else {
      if (!body["delete"].is_number_integer()) throw BadRequest("\"delete\" must be an event id");
      result = trainer.deleteEvent(body["delete"].get<int64_t>());
    }
    json reply = toJson(result);
    answered[requestId] = reply.dump();
    answeredOrder.push_back(requestId);
    if (answeredOrder.size() > kRememberedEdits) {
      answered.erase(answeredOrder.front());
      answeredOrder.pop_front();
    }
    return reply;
  }

  // Every route answers JSON; a malformed request gets 400 and its reason, anything else 500.
  template <class Work>
  httplib::Server::Handler route(Work work) {
    return [work](const httplib::Request& req, httplib::Response& res) {
      try {
        answer(res, 200, work(req));
      } catch (const BadRequest& e) {
        answer(res, 400, {{"error", e.what()}});
      } catch (const std::exception& e) {
        answer(res, 500, {{"error", e.what()}});
      }
    };
  }

  void routes() {
    server.set_payload_max_length(kMaxBody);
    server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      const std::string given = req.get_header_value("Authorization");
      const std::string prefix = "Bearer ";
      if (given.rfind(prefix, 0) == 0 && sameSecret(given.substr(prefix.size()), token))
        return httplib::Server::HandlerResponse::Unhandled;
      answer(
          res, 401,
          {{"error", "missing or wrong token: send 'Authorization: Bearer <token>' (the run's serve.json)"}});
      return httplib::Server::HandlerResponse::Handled;
    });
    server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
      if (res.body.empty())
        answer(res, res.status,
               {{"error", res.status == 413 ? "the request body is too large" : "no such request"}});
    });
    server.Get("/v1/status", route([this](const httplib::Request&) { return status(); }));
    server.Get("/v1/metrics", route([this](const httplib::Request& req) { return metricsSince(req); }));
    server.Get("/v1/schedule", route([this](const httplib::Request&) {
                 return json{{"schedule", toJson(trainer.schedule())}, {"steps_done", trainer.stepsDone()}};
               }));
    server.Post("/v1/edit", route([this](const httplib::Request& req) { return edit(req); }));
    server.Post("/v1/stop", route([this](const httplib::Request&) {
                  trainer.requestStop();
                  return json{{"stop_requested", true}};
                }));
  }

  // serve.json: where the run is served and its token, readable by its owner only.
  void writeServeFile() {
    const std::string tmp = servePath + ".tmp-" + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) throw FileError(servePath, "cannot be written");
    json j = formatHeader(kServeFormat);
    j.update({{"host", host}, {"port", port}, {"token", token}, {"pid", ::getpid()}});
    const std::string text = j.dump(2) + "\n";
    const bool written =
        ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
    ::close(fd);
    if (!written || ::rename(tmp.c_str(), servePath.c_str()) != 0) {
      ::unlink(tmp.c_str());
      throw FileError(servePath, "could not be written (disk full?)");
    }
  }
};

SteeringServer::SteeringServer(Trainer& trainer, const ServeOptions& options)
    : m(std::make_unique<Impl>(trainer)) {
  if (!options.allowRemote && !isLoopbackHost(options.host))
    throw std::invalid_argument("serving on '" + options.host +
                                "' exposes the run beyond this machine: reach it through an SSH tunnel to "
                                "127.0.0.1, or allow it explicitly (--serve-remote)");
  m->host = options.host;
  m->token = randomToken();
  m->servePath = run::servePath(trainer.runDir());
  m->routes();
  if (options.port == 0) {
    m->port = m->server.bind_to_any_port(options.host);
  } else {
    m->port = m->server.bind_to_port(options.host, options.port) ? options.port : -1;
  }
  if (m->port <= 0)
    throw std::runtime_error("cannot serve the run on " + options.host + ":" + std::to_string(options.port) +
                             " (in use, or not an address of this machine)");
  m->writeServeFile();
  m->thread = std::thread([this] { m->server.listen_after_bind(); });
}

SteeringServer::~SteeringServer() {
  m->server.stop();
  if (m->thread.joinable()) m->thread.join();
  std::error_code ignored;
  std::filesystem::remove(m->servePath, ignored);
}

int SteeringServer::port() const { return m->port; }
const std::string& SteeringServer::host() const { return m->host; }
const std::string& SteeringServer::token() const { return m->token; }

}  // namespace nf

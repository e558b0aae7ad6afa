#include "serve/steering_client.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "io/atomic_file.h"
#include "io/file_format.h"
#include "run/run_directory.h"
#include "run/run_lock.h"
#include "serve/steering_server.h"
#include "util/scope_exit.h"

namespace nf {
namespace {

using json = nlohmann::json;

constexpr int kAttempts = 3;  // a request that changes the run, sent again while its answer is lost
constexpr std::size_t kMaxRefusalBytes = 4096;  // of a refused stream's answer: a reason, not a page

// Why the run refused a request: its answer's "error", else the answer's start.
std::string refusalReason(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  return j.is_object() && j.contains("error") && j["error"].is_string() ? j["error"].get<std::string>()
                                                                        : body.substr(0, 300);
}

}  // namespace

ServeAddress readServeFile(const std::string& path) {
  return serveAddressFromJson(json::parse(readTextFile(path), nullptr, false), path);
}

ServeAddress serveAddressOf(const std::string& target, const std::string& token) {
  if (std::filesystem::exists(target)) {
    const bool isRun = std::filesystem::is_directory(target);
    if (isRun && !std::filesystem::exists(run::servePath(target)))
      throw std::invalid_argument(target +
                                  " is not being served: it has no serve.json (start the run with --serve)");
    ServeAddress address = readServeFile(isRun ? run::servePath(target) : target);
    if (isRun)
      if (const std::optional<long> pid = goneTrainer(target))
        address.doubt = target + "/serve.json may be stale: process " + std::to_string(*pid) +
                        ", which trained the run, is gone (killed?); resume the run with --serve";
    return address;
  }
  ServeAddress address;
  try {
    const ServeOptions hostPort = parseServeAddress(target);
    address.host = hostPort.host;
    address.port = hostPort.port;
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("'" + target + "' is neither a run directory, a serve.json nor HOST:PORT");
  }
  if (address.port == 0) throw std::invalid_argument("'" + target + "' names no port");
  if (token.empty()) throw std::invalid_argument("HOST:PORT needs the run's token (NF_STEER_TOKEN)");
  address.token = token;
  return address;
}

struct SteeringClient::Connection {
  std::mutex mutex;  // one request at a time on the kept-alive connection
  httplib::Client http;
  Connection(const ServeAddress& a, double timeoutSeconds) : http(a.host, a.port) {
    http.set_bearer_token_auth(a.token);
    http.set_keep_alive(true);
    http.set_tcp_nodelay(true);
    const auto seconds = static_cast<time_t>(timeoutSeconds);
    const auto micros = static_cast<time_t>((timeoutSeconds - static_cast<double>(seconds)) * 1e6);
    http.set_connection_timeout(seconds, micros);
    http.set_read_timeout(seconds, micros);
    http.set_write_timeout(seconds, micros);
  }
};

SteeringClient::SteeringClient(ServeAddress address, double timeoutSeconds)
    : m_address(std::move(address)),
      m_timeoutSeconds(timeoutSeconds),
      m_connection(std::make_unique<Connection>(m_address, timeoutSeconds)) {
  std::random_device random;  // ids need only be unique, not secret
  char prefix[20];
  std::snprintf(prefix, sizeof prefix, "%08x%08x-", random(), random());
  m_idPrefix = prefix;
}

SteeringClient::~SteeringClient() = default;

json SteeringClient::call(const std::string& method, const std::string& path, const json& body) {
  std::lock_guard<std::mutex> lock(m_connection->mutex);
  httplib::Request req;
  req.method = method;
  req.path = path;
  if (method == "POST") {
    req.body = body.is_null() ? "{}" : body.dump();
    req.set_header("Content-Type", "application/json");
  }
  // The answer is collected here, so that its size and the time it takes are ours to bound.
  std::string answerBody;
  bool tooLarge = false, tooSlow = false;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(kTotalTimeoutFactor * m_timeoutSeconds);
  req.content_receiver = [&](const char* data, std::size_t size, uint64_t, uint64_t) {
    tooLarge = answerBody.size() + size > kMaxAnswerBytes;
    if (!tooLarge) answerBody.append(data, size);
    return !tooLarge;
  };
  req.progress = [&](uint64_t, uint64_t) {
    tooSlow = std::chrono::steady_clock::now() > deadline;
    return !tooSlow;
  };
  httplib::Result res = m_connection->http.send(req);
  if (tooLarge)
    throw SteeringError(0, "the run at " + m_address.text() + " answered " + path + " with more than " +
                               std::to_string(kMaxAnswerBytes >> 20) + " MiB: not a run's answer");
  if (tooSlow)
    throw SteeringError(0, "the run at " + m_address.text() + " took more than " +
                               std::to_string(static_cast<int>(kTotalTimeoutFactor * m_timeoutSeconds)) +
                               " s to answer " + path + ": is it still serving, and the tunnel open?");
  if (!res)
    throw SteeringError(
        0, "the run at " + m_address.text() + " does not answer (" + httplib::to_string(res.error()) + "); " +
               (m_address.doubt.empty() ? "is it still serving, and the tunnel open?" : m_address.doubt));
  res->body = std::move(answerBody);
  if (res->status != 200)
    throw SteeringError(
        res->status, "the run at " + m_address.text() + " answered " + std::to_string(res->status) + " to " +
                         path + ": " + refusalReason(res->body) +
                         (res->status != 401        ? ""
                          : m_address.doubt.empty() ? "; was it restarted (a new token)? Connect to it again"
                                                    : "; " + m_address.doubt));
  json answer = json::parse(res->body, nullptr, false);
  if (!answer.is_object())
    throw SteeringError(res->status,
                        "the run at " + m_address.text() + " answered " + path + " with no JSON object");
  return answer;
}

std::string SteeringClient::newRequestId() { return m_idPrefix + std::to_string(++m_requests); }

json SteeringClient::once(const std::string& path, json body, const std::string& requestId) {
  body["request_id"] = requestId.empty() ? newRequestId() : requestId;
  for (int attempt = 1;; ++attempt) {
    try {
      return call("POST", path, body);
    } catch (const SteeringError& e) {
      if (e.status != 0 || attempt == kAttempts) throw;  // only a lost answer is asked again
    }
  }
}

json SteeringClient::status() { return call("GET", "/v1/status"); }

SteeringClient::MetricsPage SteeringClient::metrics(int64_t offset) {
  const json j = call("GET", "/v1/metrics?offset=" + std::to_string(offset));
  try {
    return metricsPageFromJson(j);
  } catch (const std::invalid_argument& e) {
    throw SteeringError(200, "the run at " + m_address.text() + " answered " + e.what());
  }
}

void SteeringClient::followMetrics(int64_t offset, const std::function<bool(const MetricsPage&)>& onPage) {
  Connection stream(m_address, m_timeoutSeconds);
  stream.http.set_read_timeout(60);  // the run sends a comment every 15 s on a quiet stream
  {
    std::lock_guard<std::mutex> lock(m_streamMutex);
    if (m_stopFollowing) return;
    m_stream = &stream;
  }
  const ScopeExit unregister([this] {
    std::lock_guard<std::mutex> lock(m_streamMutex);
    m_stream = nullptr;
  });
  MetricsStreamReader reader(offset);
  bool stopped = false;
  std::string streamError;  // the stream was not the endpoint's
  int status = 0;
  std::string refusal;  // a refused stream's answer: the run's reason
  const httplib::Result res = stream.http.Get(
      ("/v1/metrics/stream?offset=" + std::to_string(offset)).c_str(),
      [&](const httplib::Response& response) {
        status = response.status;
        return true;
      },
      [&](const char* data, std::size_t size) {
        {  // stopFollowing() before the request was under way closed nothing: end at the next chunk
          std::lock_guard<std::mutex> lock(m_streamMutex);
          if (m_stopFollowing) return false;
        }
        if (status != 200) {  // (refusal never passes its bound: what is left of it is appended)
          refusal.append(data, std::min(size, kMaxRefusalBytes - refusal.size()));
          return true;
        }
        try {
          stopped = !reader.feed(data, size, onPage);
        } catch (const std::invalid_argument& e) {
          streamError = e.what();
          return false;
        }
        return !stopped;
      });
  if (stopped) return;
  {
    std::lock_guard<std::mutex> lock(m_streamMutex);
    if (m_stopFollowing) return;  // stopFollowing() closed the connection
  }
  if (!streamError.empty())
    throw SteeringError(200, "the metrics stream of the run at " + m_address.text() + " sent " + streamError);
  if (!res)
    throw SteeringError(0, "the metrics stream of the run at " + m_address.text() + " ended (" +
                               httplib::to_string(res.error()) + ")" +
                               (m_address.doubt.empty() ? "" : "; " + m_address.doubt));
  // 400: an offset inside a record; 401: the token (a stale serve.json's?); 503: too many streams
  if (res->status != 200)
    throw SteeringError(res->status,
                        "the run at " + m_address.text() + " refused the metrics stream from offset " +
                            std::to_string(offset) + ": " + std::to_string(res->status) + " " +
                            refusalReason(refusal) +
                            (res->status == 401 && !m_address.doubt.empty() ? "; " + m_address.doubt : ""));
}

void SteeringClient::stopFollowing() {
  std::lock_guard<std::mutex> lock(m_streamMutex);
  m_stopFollowing = true;
  if (m_stream) m_stream->http.stop();  // shuts the socket: the blocking read returns
}

Schedule SteeringClient::schedule(int64_t* stepsDone) {
  const json j = call("GET", "/v1/schedule");
  try {
    if (stepsDone) *stepsDone = j.at("steps_done").get<int64_t>();
    return scheduleFromJson(j.at("schedule"), "the schedule of the run at " + m_address.text());
  } catch (const json::exception& e) {
    throw SteeringError(200,
                        "the run at " + m_address.text() + " answered a malformed schedule: " + e.what());
  }
}

EditResult SteeringClient::edit(json body, const std::string& requestId) {
  try {
    return editResultFromJson(once("/v1/edit", std::move(body), requestId));
  } catch (const std::invalid_argument& e) {
    throw SteeringError(200, "the run at " + m_address.text() + ": " + e.what());
  }
}

EditResult SteeringClient::add(ScheduleEvent event, const std::string& requestId) {
  json e = toJson(event);
  e.erase("id");
  return edit({{"add", e}}, requestId);
}

EditResult SteeringClient::moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep,
                                      const std::string& requestId) {
  json moves = json::array();
  for (const auto& [id, step] : idAndStep) moves.push_back({{"id", id}, {"step", step}});
  return edit({{"move", moves}}, requestId);
}

EditResult SteeringClient::remove(int64_t id, const std::string& requestId) {
  return edit({{"delete", id}}, requestId);
}

json SteeringClient::pause() { return call("POST", "/v1/pause"); }
json SteeringClient::continueRun() { return call("POST", "/v1/continue"); }
json SteeringClient::checkpoint() { return call("POST", "/v1/checkpoint"); }
json SteeringClient::stop() { return call("POST", "/v1/stop"); }
json SteeringClient::setAutopilot(bool on) { return call("POST", "/v1/autopilot", {{"enabled", on}}); }

int64_t SteeringClient::analyze(const AnalysisRequest& request, const std::string& model, const json& data) {
  json body{{"request", toJson(request)}, {"model", model}};
  if (!data.is_null()) body["data"] = data;
  try {
    return analysisJobNumber(once("/v1/analyze", std::move(body)));
  } catch (const std::invalid_argument& e) {
    throw SteeringError(200, "the run at " + m_address.text() + ": " + e.what());
  }
}

json SteeringClient::analysisJob(int64_t job) {
  return call("GET", "/v1/analysis?job=" + std::to_string(job));
}

json SteeringClient::cancelAnalysis(int64_t job) {
  return call("DELETE", "/v1/analysis?job=" + std::to_string(job));
}

json SteeringClient::awaitAnalysis(int64_t job, const ProgressFn& progress,
                                   const std::function<bool()>& abandoned) {
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> unreachableSince;
  // Polled: the endpoint has no push for jobs. Soon at first (most analyses take a moment), then less often.
  for (auto wait = std::chrono::milliseconds(20);;
       wait = std::min(2 * wait, std::chrono::milliseconds(500))) {
    if (abandoned && abandoned()) {
      try {
        // Not while it cannot be reached: a closing window would wait for the connect timeout.
        if (!unreachableSince) cancelAnalysis(job);
      } catch (const SteeringError&) {  // unreachable, or forgotten: nothing more to do for it
      }
      throw Cancelled("abandoned");
    }
    json state;
    const Clock::time_point asked = Clock::now();  // a failed poll's own timeout counts as unreachable time
    try {
      state = analysisJob(job);
      unreachableSince.reset();
    } catch (const SteeringError& e) {
      if (e.status != 0) throw;
      if (!unreachableSince) unreachableSince = asked;
      if (Clock::now() - *unreachableSince > std::chrono::duration<double>(kUnreachableSeconds))
        throw SteeringError(
            0, std::string(e.what()) + " (for " + std::to_string(static_cast<int>(kUnreachableSeconds)) +
                   " s; its analysis job " + std::to_string(job) + " may still finish there)");
      std::this_thread::sleep_for(wait);
      continue;
    }
    try {
      const std::string name = state.at("state").get<std::string>();
      if (name == "done") return state.at("result");
      if (name == "failed")
        throw SteeringError(200, "the run at " + m_address.text() +
                                     " could not compute it: " + state.value("error", std::string()));
      if (progress && state.contains("total")) {
        Progress p;
        p.task = state.value("task", std::string());
        p.done = state.value("done", int64_t{0});
        p.total = state.value("total", int64_t{0});
        progress(p);
      }
    } catch (const json::exception& e) {
      throw SteeringError(
          200, "the run at " + m_address.text() + " answered an analysis job malformed: " + e.what());
    }
    std::this_thread::sleep_for(wait);
  }
}

}  // namespace nf

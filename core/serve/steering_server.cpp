#include "serve/steering_server.h"

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <thread>

#include "analysis/analysis_request.h"
#include "distributed/worker_environment.h"
#include "io/atomic_file.h"
#include "io/file_format.h"
#include "run/metrics_log.h"
#include "run/run_directory.h"
#include "run/source_model.h"
#include "serve/analysis_queue.h"
#include "serve/request_reading.h"
#include "train/trainer.h"
#include "util/progress.h"
#include "util/random.h"

namespace nf {
namespace {

using json = nlohmann::json;
using namespace serve_request;

constexpr std::size_t kMaxBody = 64 * 1024;          // an edit is a few hundred bytes
constexpr std::size_t kMaxAnalysisBody = 32 << 20;   // a benchmark analysis carries its task's items
constexpr std::size_t kRememberedRequests = 10'000;  // request ids answered, kept for retries
constexpr std::size_t kMaxMoves = 1000;
constexpr int kAnalysisNice = 10;                // the analysis thread's niceness
constexpr std::size_t kThreads = 32;             // connections served at once, streams included
constexpr int kIdleConnectionSeconds = 30;       // a connection that sends nothing waits in the kernel
constexpr int64_t kMaxPageBytes = 1 << 20;       // of metrics.jsonl per answer or stream event batch
constexpr int kMaxStreams = 8;                   // metrics streams open at once (each holds a thread)
constexpr std::size_t kMaxQueuedAnalyses = 16;   // waiting or computing
constexpr std::size_t kRememberedAnalyses = 64;  // finished ones kept for their clients to fetch

// Equal strings, in a time that does not depend on where they differ (the standard library has no such
// comparison, and a token compared with == leaks its prefix through timing).
bool sameSecret(const std::string& given, const std::string& secret) {
  unsigned char difference = given.size() == secret.size() ? 0 : 1;
  for (std::size_t i = 0; i < secret.size(); ++i)
    difference |= static_cast<unsigned char>(secret[i] ^ (i < given.size() ? given[i] : 0));
  return difference == 0;
}

// JSON text even when a request smuggled invalid UTF-8 into what the answer repeats (replaced by U+FFFD).
std::string jsonText(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void answer(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(jsonText(body), "application/json");
}

// A job number the server does not know (any more): 404.
struct NotFound : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// More work than the server takes at once: 429, ask again later.
struct Busy : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A request to a run that has trained its last step (it would never take effect): 409.
struct RunEnded : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace

struct SteeringServer::Impl {
  Trainer* trainerServed = nullptr;  // set by serve(): a bound server may not have its run yet
  std::string host, token, servePath;
  int port = 0;
  httplib::Server server;
  std::thread thread;

  std::mutex editMutex;  // one edit at a time, so a retry never races its original
  RememberedRequests<std::string> answeredEdits{kRememberedRequests};  // the answers' JSON text

  Trainer& trainer() const { return *trainerServed; }

  std::atomic<bool> ended{false};  // runEnded()
  // A request that changes what the run does, refused once it will not train again.
  void requireTraining() const {
    if (ended)
      throw RunEnded("the run is not training any more (it ended at step " +
                     std::to_string(trainer().stepsDone()) + "): resume it to steer it");
  }
  // A request the trainer refused because it is writing its end (`then`: what the user can do instead).
  RunEnded endBegun(const std::string& then) const {
    return RunEnded("the run's steps are over (it is saving its end at step " +
                    std::to_string(trainer().stepsDone()) + "): " + then);
  }

  json status() const {
    const RunConfig c = trainer().settingsNow();  // as config.json has it: a rollback's lowered rate
    return {{"run", trainer().runDir()},
            {"mode", trainingModeName(c.mode)},
            {"steps_done", trainer().stepsDone()},
            {"max_steps", c.optimizer.maxSteps},
            {"layers", trainer().layers()},
            {"world_size", trainer().worldSize()},
            {"device", c.device},
            {"stop_requested", trainer().stopRequested()},
            {"pause_requested", trainer().pauseRequested()},
            {"paused", trainer().paused()},
            {"autopilot", trainer().autopilotOn()},
            {"ended", ended.load()},
            {"config", toJson(c)}};
  }

  // GET /v1/metrics?offset=BYTES: the complete records of metrics.jsonl from that byte offset on, and the
  // offset to ask from next. A log that became shorter (a new run in the folder) is sent again from its
  // start.
  static MetricsFollower followerFrom(const std::string& runDir, int64_t offset) {
    MetricsFollower follower(runDir, offset);
    if (!follower.startsAtLine())
      throw BadRequest(
          "offset " + std::to_string(offset) +
          " is inside a record of metrics.jsonl: ask from 0 or from an offset this endpoint gave");
    return follower;
  }

  json metricsSince(const httplib::Request& req) {
    MetricsFollower follower = followerFrom(trainer().runDir(), queryNumber(req, "offset", 0));
    const MetricsFollower::NewLines read = follower.read(kMaxPageBytes);
    json records = json::array();
    for (const std::string& line : read.lines) {
      json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!record.is_discarded()) records.push_back(std::move(record));
    }
    return {{"records", records}, {"next_offset", follower.completeOffset()}, {"restarted", read.restarted}};
  }

  // GET /v1/metrics/stream?offset=BYTES: the same records as server-sent events, each as it is written
  // (the event's id is the offset after it), until the client goes or the server stops.
  std::atomic<bool> stopping{false};
  std::atomic<bool> listenEnded{false};
  std::atomic<int> streams{0};
  void streamMetrics(const httplib::Request& req, httplib::Response& res) {
    auto follower =
        std::make_shared<MetricsFollower>(followerFrom(trainer().runDir(), queryNumber(req, "offset", 0)));
    if (++streams > kMaxStreams) {
      --streams;
      throw Busy("too many metrics streams are open (at most 8)");
    }
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, follower](std::size_t, httplib::DataSink& sink) {
          auto lastWrite = std::chrono::steady_clock::now();
          while (sink.is_writable()) {
            // Read on after the server stops, to the log's end: the run's last records (its stop or
            // finish) go out, however far behind the client was.
            const bool last = stopping;
            const MetricsFollower::NewLines read = follower->read(kMaxPageBytes);
            std::string events = read.restarted ? "event: restarted\ndata: {}\n\n" : "";
            for (const std::string& line : read.lines) events += "data: " + line + "\n\n";
            if (!read.lines.empty()) events += "id: " + std::to_string(follower->completeOffset()) + "\n\n";
            const auto now = std::chrono::steady_clock::now();
            if (events.empty() && now - lastWrite > std::chrono::seconds(15))
              events = ": still here\n\n";  // a comment keeps proxies and tunnels from closing an idle stream
            if (!events.empty()) {
              lastWrite = now;
              if (!sink.write(events.data(), events.size())) return false;
              if (!last) return true;
            }
            if (last) {
              if (read.lines.empty()) break;  // the log's end
              continue;                       // its next page, at once (one page had been all: records lost)
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));  // how often the log is looked at
          }
          sink.done();
          return true;
        },
        [this](bool) { --streams; });
  }

  json edit(const httplib::Request& req) {
    const json body = objectBody(req);
    const std::string id = requestId(body);
    requireKnownFields(body, {"request_id", "add", "move", "delete"}, "the edit");
    const int ops = static_cast<int>(body.contains("add")) + static_cast<int>(body.contains("move")) +
                    static_cast<int>(body.contains("delete"));
    if (ops != 1) throw BadRequest("an edit is exactly one of \"add\", \"move\" or \"delete\"");

    const std::string request = body.dump();  // what a retry must repeat
    std::lock_guard<std::mutex> lock(editMutex);
    if (const std::string* seen = answeredEdits.find(id, request))
      return json::parse(*seen);  // a retry: the first answer, nothing applied again
    requireTraining();
    const Trainer::ClientRequest client{id, request};
    EditResult result;
    if (body.contains("add")) {
      result = trainer().addEvent(eventToAdd(body["add"]), client);
    } else if (body.contains("move")) {
      const json& moves = body["move"];
      if (!moves.is_array() || moves.empty() || moves.size() > kMaxMoves)
        throw BadRequest("\"move\" must be a list of 1 to 1000 {\"id\", \"step\"} objects");
      std::vector<std::pair<int64_t, int64_t>> idAndStep;
      std::set<int64_t> ids;
      for (const json& m : moves) {
        if (!m.is_object()) throw BadRequest("\"move\": each entry is an {\"id\", \"step\"} object");
        requireKnownFields(m, {"id", "step"}, "\"move\"");
        idAndStep.emplace_back(integerField(m, "id"), integerField(m, "step"));
        if (!ids.insert(idAndStep.back().first).second)
          throw BadRequest("\"move\": event " + std::to_string(idAndStep.back().first) +
                           " is moved twice in one edit");
      }
      result = trainer().moveEvents(idAndStep, client);
    } else {
      result = trainer().deleteEvent(integerField(body, "delete"), client);
    }
    json reply = toJson(result);
    answeredEdits.remember(id, request, jsonText(reply));
    return reply;
  }

  // --- analyses: one at a time, on a thread of their own, each on the model as it is when it starts ----

  std::mutex jobMutex;  // guards the queue
  std::condition_variable jobAdded;
  AnalysisQueue jobs{kMaxQueuedAnalyses, kRememberedAnalyses, kRememberedRequests};
  std::thread analysisThread;
  SnapshotPtr startModel;  // loaded on first use; the job thread's alone
  std::shared_ptr<const Tokenizer> tokenizer;
  bool tokenizerLoaded = false;

  // POST /v1/analyze {"request_id", "request": {…}, "model": "now"|"start", "data": eval set | "train"}.
  json analyze(const httplib::Request& req) {
    const json body = objectBody(req);
    const std::string id = requestId(body);
    AnalysisJob job;
    job.model = "now";
    const RunConfig& c = trainer().config();
    job.data = c.evalData.empty() ? "train" : "0";
    for (const auto& [name, value] : body.items()) {
      if (name == "request_id") continue;
      if (name == "model") {
        if (value != "now" && value != "start")
          throw BadRequest(
              "\"model\" must be \"now\" (the model as it trains) or \"start\" (as the run began)");
        // A pretraining run began from weights drawn from its seed, not from its model folder's.
        if (value == "start" && c.mode == TrainingMode::Pretrain)
          throw BadRequest("a pretraining run has no start model to analyse (it began from random weights)");
        job.model = value;
      } else if (name == "data") {
        if (value == "train") {
          job.data = "train";
        } else if (value.is_number_unsigned() && value.get<uint64_t>() < c.evalData.size()) {
          job.data = std::to_string(value.get<uint64_t>());
        } else {
          throw BadRequest("\"data\" must be \"train\" or the number of one of the run's " +
                           std::to_string(c.evalData.size()) + " evaluation sets");
        }
      } else if (name == "request") {
        try {
          job.request = analysisRequestFromJson(value);
        } catch (const std::invalid_argument& e) {
          throw BadRequest(std::string("\"request\": ") + e.what());
        }
      } else {
        throw BadRequest("unknown field \"" + name + "\" (request_id, request, model, data)");
      }
    }
    if (!body.contains("request")) throw BadRequest("\"request\" is missing: {\"analysis\": …, …}");

    std::lock_guard<std::mutex> lock(jobMutex);
    const AnalysisQueue::Submitted submitted = jobs.submit(id, body.dump(), std::move(job));
    switch (submitted.outcome) {
      case AnalysisQueue::Outcome::Forgotten:
        throw NotFound("the job of request \"" + id + "\" is no longer kept");
      case AnalysisQueue::Outcome::Full:
        throw Busy(std::to_string(kMaxQueuedAnalyses) +
                   " analyses are waiting already; ask again when one is done");
      case AnalysisQueue::Outcome::Added:
        jobAdded.notify_all();
        break;
      case AnalysisQueue::Outcome::Retried:  // the same job
        break;
    }
    return submitted.job.describe();
  }

  // GET /v1/analysis?job=N: the job's state; DELETE: the client no longer wants it (a pane left, a window
  // closed), so a queued job fails at once and a running one at its next progress report, which frees the
  // device for training sooner.
  json analysisJob(const httplib::Request& req) {
    const int64_t id = queryNumber(req, "job", -1);
    if (id < 0) throw BadRequest("\"job\" is missing: " + req.method + " /v1/analysis?job=N");
    std::lock_guard<std::mutex> lock(jobMutex);
    const AnalysisJob* job = req.method == "DELETE" ? jobs.cancel(id) : jobs.find(id);
    if (!job) throw NotFound("no analysis job " + std::to_string(id) + " is kept");
    return job->describe();
  }

  // The job thread: the oldest queued job, computed without holding the list.
  void computeAnalyses() {
    // Below training (and a workbench sharing the machine) in the CPU's queue: an analysis may wait, a step
    // should not. Linux's nice is per thread; failing to lower it changes nothing else.
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), kAnalysisNice);
    while (true) {
      AnalysisJob job;
      {
        std::unique_lock<std::mutex> lock(jobMutex);
        jobAdded.wait(lock, [&] { return stopping || jobs.hasQueued(); });
        if (stopping) return;
        job = *jobs.start();
      }
      json result;
      std::string error;
      try {
        result = compute(job);
      } catch (const Cancelled& e) {
        if (stopping) return;
        error = e.what();  // its client's cancel
      } catch (const std::exception& e) {
        error = e.what();
      }
      std::lock_guard<std::mutex> lock(jobMutex);
      jobs.finish(job.id, std::move(result), error);
    }
  }

  json compute(const AnalysisJob& job) {
    const RunConfig& c = trainer().config();
    SnapshotPtr model;
    if (job.model == "now") {
      model = trainer().snapshot();
    } else {
      if (!startModel) {
        // Never a replacement: the folder must still hold the weights the run started from.
        const std::string change = run::sourceModelChange(trainer().runDir());
        if (!change.empty())
          throw std::runtime_error("the model this run started from is not what it was (" + change +
                                   "): analyse it as it is with normfree-cli analyze, or the run now");
        startModel = ModelSnapshot::load(c.model, c.device);
      }
      model = startModel;
    }
    if (!tokenizerLoaded) {
      const std::string folder = run::tokenizerFolder(trainer().runDir());
      if (!folder.empty()) tokenizer = loadTokenizer(folder);
      tokenizerLoaded = true;
    }
    {
      std::lock_guard<std::mutex> lock(jobMutex);
      if (AnalysisJob* kept = jobs.find(job.id)) kept->step = model->step();
    }
    const std::string data = job.data == "train" ? c.trainData : c.evalData.at(std::stoul(job.data));
    const int64_t id = job.id;
    return runAnalysis(job.request, *model, {data, tokenizer, nullptr},
                       [this, id](const Progress& p) {
                         if (stopping) throw Cancelled("the run stopped serving");
                         std::lock_guard<std::mutex> lock(jobMutex);
                         if (AnalysisJob* kept = jobs.find(id)) {
                           if (kept->cancelRequested) throw Cancelled(AnalysisQueue::kCancelled);
                           kept->task = p.task;
                           kept->done = p.done;
                           kept->total = p.total;
                         }
                       })
        .result;
  }

  // Every route answers JSON: a malformed request gets 400 and its reason, an unknown job 404, a request
  // id reused for another request 409, too much work at once 429, anything else 500.
  template <class Work>
  static void answerOrFail(httplib::Response& res, Work work) {
    try {
      work();
    } catch (const BadRequest& e) {
      answer(res, 400, {{"error", e.what()}});
    } catch (const NotFound& e) {
      answer(res, 404, {{"error", e.what()}});
    } catch (const Busy& e) {
      answer(res, 429, {{"error", e.what()}});
    } catch (const RequestIdReused& e) {
      answer(res, 409, {{"error", e.what()}});
    } catch (const RunEnded& e) {
      answer(res, 409, {{"error", e.what()}, {"code", "run_ended"}});
    } catch (const std::exception& e) {
      answer(res, 500, {{"error", e.what()}});
    }
  }
  // The token is checked from the headers, before any body is read (the pre-routing handler below): a
  // stranger's body is never buffered. Its connection is closed with the refusal, so the unread body is
  // never taken for a next request.
  bool authorized(const httplib::Request& req) const {
    const std::string given = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    return given.rfind(prefix, 0) == 0 && sameSecret(given.substr(prefix.size()), token);
  }
  static void refuse(httplib::Response& res) {
    answer(
        res, 401,
        {{"error", "missing or wrong token: send 'Authorization: Bearer <token>' (the run's serve.json)"}});
  }
  template <class Work>
  httplib::Server::Handler route(Work work) {
    return [work](const httplib::Request& req, httplib::Response& res) {
      answerOrFail(res, [&] { answer(res, 200, work(req)); });
    };
  }

  // Before a body is read: the token, then the request's head (headProblem). The connection is closed
  // with a refusal: its body may be unread.
  httplib::Server::HandlerResponse screen(const httplib::Request& req, httplib::Response& res) const {
    if (!authorized(req)) {
      refuse(res);
    } else if (const auto problem = headProblem(req, kMaxBody)) {
      answer(res, problem->status, {{"error", problem->error}});
    } else {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    res.set_header("Connection", "close");
    return httplib::Server::HandlerResponse::Handled;
  }

  void routes() {
    server.set_payload_max_length(kMaxAnalysisBody);
    server.set_keep_alive_max_count(1000);  // a client polling every second keeps its connection
    server.set_tcp_nodelay(true);           // an answer's head and body go out at once
    server.new_task_queue = [] { return new httplib::ThreadPool(kThreads); };
    server.set_pre_routing_handler(
        [this](const httplib::Request& req, httplib::Response& res) { return screen(req, res); });
    // Unknown paths and methods, and bodies too large (strangers were refused before: screen).
    server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
      if (!res.body.empty()) return;
      const char* why = res.status == 404   ? "no such request"
                        : res.status == 413 ? "the request body is too large"
                        : res.status == 414 ? "the request's path and query are too long"
                        : res.status == 400
                            ? "the request could not be read (its headers, Content-Length or body)"
                            : "the request was refused";
      answer(res, res.status, {{"error", why}});
    });
    server.Get("/v1/status", route([this](const httplib::Request&) { return status(); }));
    server.Get("/v1/metrics", route([this](const httplib::Request& req) { return metricsSince(req); }));
    server.Get("/v1/schedule", route([this](const httplib::Request&) {
                 return json{{"schedule", toJson(trainer().schedule())},
                             {"steps_done", trainer().stepsDone()},
                             {"layers", trainer().layers()}};
               }));
    server.Post("/v1/edit", route([this](const httplib::Request& req) { return edit(req); }));
    server.Get("/v1/metrics/stream", [this](const httplib::Request& req, httplib::Response& res) {
      answerOrFail(res, [&] { streamMetrics(req, res); });
    });
    // A control: the request is passed to the trainer, the status answered. It takes no fields: a body
    // that says more ({"dry_run": true}) is refused, not obeyed as if it said nothing.
    auto control = [this](std::function<void()> request) {
      return route([this, request](const httplib::Request& req) {
        if (!req.body.empty() && !objectBody(req).empty())
          throw BadRequest("this request takes no fields: send {} or nothing");
        requireTraining();
        request();
        return status();
      });
    };
    server.Post("/v1/stop", control([this] { trainer().requestStop(); }));
    server.Post("/v1/pause", control([this] {
                  if (!trainer().requestPause()) throw endBegun("there is nothing left to pause");
                }));
    server.Post("/v1/continue", control([this] { trainer().requestContinue(); }));
    server.Post("/v1/checkpoint", control([this] { trainer().requestCheckpoint(); }));
    // POST /v1/autopilot {"enabled": true|false}: the autopilot times the pending removals, or stops.
    server.Post("/v1/autopilot", route([this](const httplib::Request& req) {
                  const json body = objectBody(req);
                  requireKnownFields(body, {"enabled"}, "the request");
                  if (!body.contains("enabled") || !body["enabled"].is_boolean())
                    throw BadRequest("\"enabled\" must be true or false");
                  requireTraining();
                  if (trainer().config().mode != TrainingMode::Remove)
                    throw BadRequest("only a removal has an autopilot");
                  // Once the steps are over it would wait for a next run(), which this process never has.
                  if (!trainer().setAutopilotBeforeTheEnd(body["enabled"].get<bool>()))
                    throw endBegun("resume it to switch its autopilot");
                  return status();
                }));
    server.Post("/v1/analyze", route([this](const httplib::Request& req) { return analyze(req); }));
    server.Get("/v1/analysis", route([this](const httplib::Request& req) { return analysisJob(req); }));
    server.Delete("/v1/analysis", route([this](const httplib::Request& req) { return analysisJob(req); }));
  }

  // serve.json: where the run is served and its token, readable by its owner only.
  void writeServeFile() {
    json j = formatHeader(kServeFormat);
    j.update({{"host", host}, {"port", port}, {"token", token}, {"pid", ::getpid()}});
    writeFileAtomic(servePath, j.dump(2) + "\n", FileAccess::OwnerOnly);
  }
};

SteeringServer::SteeringServer(const ServeOptions& options) : m(std::make_unique<Impl>()) {
  if (!options.allowRemote && !isLoopbackHost(options.host))
    throw std::invalid_argument("serving on '" + options.host +
                                "' exposes the run beyond this machine: reach it through an SSH tunnel to "
                                "127.0.0.1, or allow it explicitly (--serve-remote)");
  m->host = options.host;
  m->token = kernelRandomHex(32, "the run's token");  // 256 bits
  // The routes and the server's settings before the bind: TCP_NODELAY is set on the listening socket and
  // inherited by every connection (without it each answer waited for Nagle's delayed ACK). No request is
  // served, so none reaches a trainer, before serve().
  m->routes();
  // SO_REUSEADDR alone, not httplib's default SO_REUSEPORT: with that, a second run served on a port in
  // use would listen beside the first and the kernel would share their requests between them. And
  // TCP_DEFER_ACCEPT: a connection is handed to the server only once its request starts to arrive, so
  // connections that send nothing wait in the kernel instead of holding the server's threads (100 idle
  // ones used to delay every request by 10–13 s: each held a thread until its read timed out).
  m->server.set_socket_options([](socket_t sock) {
    int yes = 1, deferSeconds = kIdleConnectionSeconds;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    ::setsockopt(sock, IPPROTO_TCP, TCP_DEFER_ACCEPT, &deferSeconds, sizeof(deferSeconds));
  });
  if (options.port == 0) {
    m->port = m->server.bind_to_any_port(options.host);
  } else {
    m->port = m->server.bind_to_port(options.host, options.port) ? options.port : -1;
  }
  if (m->port <= 0)
    throw std::runtime_error("cannot serve the run on " + options.host + ":" + std::to_string(options.port) +
                             " (in use, or not an address of this machine)");
  deepenListenQueue(m->port);
}

SteeringServer::SteeringServer(Trainer& trainer, const ServeOptions& options) : SteeringServer(options) {
  serve(trainer);
}

void SteeringServer::runEnded() { m->ended = true; }

void SteeringServer::serve(Trainer& trainer) {
  if (m->trainerServed) throw std::logic_error("the steering server already serves a run");
  m->trainerServed = &trainer;
  {
    // Edits this run accepted before a restart: a client that lost their answers gets them from the run.
    std::lock_guard<std::mutex> lock(m->editMutex);
    for (const auto& [request, result] : trainer.answeredRequests())
      m->answeredEdits.remember(request.id, request.text, jsonText(toJson(result)));
  }
  m->servePath = run::servePath(trainer.runDir());
  m->writeServeFile();
  m->analysisThread = std::thread([this] { m->computeAnalyses(); });
  m->thread = std::thread([this] {
    m->server.listen_after_bind();
    m->listenEnded = true;
  });
  // Until it listens, httplib's stop() would not stop it (and the destructor would wait forever).
  while (!m->server.is_running() && !m->listenEnded)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

SteeringServer::~SteeringServer() {
  {
    std::lock_guard<std::mutex> lock(m->jobMutex);
    m->stopping = true;  // streams end, an analysis in progress is abandoned at its next progress report
    m->jobAdded.notify_all();
  }
  m->server.stop();
  if (m->thread.joinable()) m->thread.join();
  if (m->analysisThread.joinable()) m->analysisThread.join();
  std::error_code ignored;
  if (!m->servePath.empty()) std::filesystem::remove(m->servePath, ignored);
}

int SteeringServer::port() const { return m->port; }
const std::string& SteeringServer::host() const { return m->host; }
const std::string& SteeringServer::token() const { return m->token; }

}  // namespace nf

// The steering endpoint over loopback, driven by an HTTP client as the workbench drives it: the run's
// status, metrics (also as a stream) and schedule; edits accepted and refused exactly as in-process edits
// are (same codes), a retried edit applied once; pause, continue, checkpoint and stop; analyses computed on
// the running model that equal the CLI's on the checkpoint of the same step; no token or a wrong one gets
// 401 and changes nothing; malformed requests get 400 with a reason. (Fuzzed: test_serve_fuzz.cpp.)
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <thread>

#include "analysis/analysis_request.h"
#include "check.h"
#include "cli_process.h"
#include "data/synthetic_benchmarks.h"
#include "distributed/worker_environment.h"
#include "io/atomic_file.h"
#include "run_fixtures.h"
#include "serve/analysis_queue.h"
#include "serve/steering_client.h"
#include "serve/steering_server.h"
#include "train/trainer.h"
#include "util/scope_exit.h"

using namespace nf;
using namespace nf::test;
using json = nlohmann::json;

namespace {

// A removal run (smallRun: 30 steps, events at steps 5–16, ids 1–6), not trained yet, and its endpoint.
// A client that waits for the answer however loaded the machine is (httplib's default gives up after 5 s,
// which a suite beside fuzzers and checkpoint writes can exceed): the tests wait for events, not clocks.
httplib::Client patientClient(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(600);
  c.set_write_timeout(600);
  return c;
}

struct Served {
  TempDir dir;
  std::unique_ptr<Trainer> trainer;
  std::unique_ptr<SteeringServer> server;
  Served() {
    trainer = Trainer::start(dir.path("run"), smallRun(dir));
    server = std::make_unique<SteeringServer>(*trainer, ServeOptions{});
  }
  httplib::Client client(const std::string& token) const {
    httplib::Client c = patientClient(server->port());
    if (!token.empty()) c.set_bearer_token_auth(token);
    return c;
  }
  httplib::Client client() const { return client(server->token()); }
  void trainUntil(int64_t steps) {
    trainer->run([&](const Progress& p) {
      if (p.done >= steps) trainer->requestStop();
    });
  }
};

json body(const httplib::Result& res, int status) {
  REQUIRE(res);
  REQUIRE_MSG(res->status == status, "status " << res->status << ": " << res->body);
  return json::parse(res->body);
}

json get(httplib::Client& c, const std::string& path) { return body(c.Get(path.c_str()), 200); }

httplib::Result post(httplib::Client& c, const std::string& path, const json& j) {
  return c.Post(path.c_str(), j.dump(), "application/json");
}

json edit(httplib::Client& c, json request) { return body(post(c, "/v1/edit", request), 200); }

// Polls until `done` holds: the interval is how often to look, not a deadline.
template <class Condition>
void waitUntil(Condition done) {
  while (!done()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

bool hasRecord(const std::string& run, const std::string& type, int64_t step) {
  for (const json& r : records(run, type))
    if (r["step"] == step) return true;
  return false;
}

// An analysis asked for over HTTP, followed until it is done or failed.
json finishedJob(httplib::Client& c, const json& request) {
  const int64_t job = body(post(c, "/v1/analyze", request), 200)["job"];
  json state;
  waitUntil([&] {
    state = get(c, "/v1/analysis?job=" + std::to_string(job));
    return state["state"] == "done" || state["state"] == "failed";
  });
  return state;
}

json analysedOverHttp(httplib::Client& c, const json& request) {
  const json state = finishedJob(c, request);
  REQUIRE_MSG(state["state"] == "done", state.dump());
  return state;
}

// Two analysis results with the same numbers (to float32 rounding: the two sides may split their sums over
// threads differently) and the same texts, their headers aside (which say where each model came from).
void requireSameResult(const json& a, const json& b, const std::string& at = "") {
  REQUIRE_MSG(a.type() == b.type() || (a.is_number() && b.is_number()), at << ": " << a << " vs " << b);
  if (a.is_object()) {
    REQUIRE_MSG(a.size() == b.size(), at);
    for (const auto& [key, value] : a.items())
      if (key != "header") requireSameResult(value, b.at(key), at + "." + key);
  } else if (a.is_array()) {
    REQUIRE_MSG(a.size() == b.size(), at);
    for (std::size_t i = 0; i < a.size(); ++i)
      requireSameResult(a[i], b[i], at + "[" + std::to_string(i) + "]");
  } else if (a.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    REQUIRE_MSG(std::abs(x - y) <= 1e-5 * std::max(1.0, std::abs(x)), at << ": " << x << " vs " << y);
  } else {
    REQUIRE_MSG(a == b, at << ": " << a << " vs " << b);
  }
}

}  // namespace

// A removal run of the CLI with --serve (smallRun's model, data and schedule, its events `later` steps
// later; as many steps as it is let train), once it serves: its process, serve.json and a client with the
// token.
struct ServedCli {
  TempDir dir;
  RunConfig config = smallRun(dir);
  std::string run = dir.path("run");
  pid_t pid = -1;
  json serveFile;
  explicit ServedCli(const std::string& moreArguments = "", int64_t later = 0) {
    for (ScheduleEvent& e : config.schedule.events) e.step += later;
    writeFileAtomic(dir.path("schedule.json"), toJson(config.schedule).dump());
    pid = startCli("remove " + run + " --model " + config.model + " --train " + config.trainData +
                       " --schedule " + dir.path("schedule.json") +
                       " --steps 100000 --micro-batch 4 --context 16 --serve 0 " + moreArguments,
                   dir.path("stderr.txt"));
    int status = 0;
    while (!std::filesystem::exists(run::servePath(run))) {  // written once the run serves
      REQUIRE_MSG(::waitpid(pid, &status, WNOHANG) == 0, "the run ended before serving");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling interval, not a deadline
    }
    serveFile = json::parse(readTextFile(run::servePath(run)));
  }
  httplib::Client client() const {
    httplib::Client c = patientClient(serveFile["port"].get<int>());
    c.set_bearer_token_auth(serveFile["token"].get<std::string>());
    return c;
  }
  Finished finished() { return finish(pid, dir.path("stderr.txt")); }
};

TEST_CASE(status_schedule_and_metrics_are_served_with_the_token) {
  Served s;
  const std::string servePath = run::servePath(s.dir.path("run"));
  struct stat info {};
  REQUIRE(::stat(servePath.c_str(), &info) == 0);
  REQUIRE_EQ(info.st_mode & 0777, 0600u);  // the token is its owner's only
  const json serveFile = json::parse(readTextFile(servePath));
  REQUIRE_EQ(serveFile["port"], s.server->port());
  REQUIRE_EQ(serveFile["token"], s.server->token());
  REQUIRE_EQ(serveFile["token"].get<std::string>().size(), 64u);

  auto c = s.client();
  json status = get(c, "/v1/status");
  REQUIRE_EQ(status["steps_done"], 0);
  REQUIRE_EQ(status["max_steps"], 30);
  REQUIRE_EQ(status["mode"], "remove");
  REQUIRE_EQ(get(c, "/v1/schedule")["schedule"], toJson(s.trainer->schedule()));

  s.trainUntil(4);
  REQUIRE_EQ(get(c, "/v1/status")["steps_done"], 4);
  // Metrics from an offset: every record once, in order, across two requests.
  const json first = get(c, "/v1/metrics");
  REQUIRE_EQ(first["records"][0]["type"], "start");
  const int64_t offset = first["next_offset"];
  REQUIRE_EQ(offset, static_cast<int64_t>(std::filesystem::file_size(run::metricsPath(s.dir.path("run")))));
  REQUIRE(get(c, "/v1/metrics?offset=" + std::to_string(offset))["records"].empty());
  // An offset inside a record would read its tail as a damaged line, dropped unsaid: refused.
  for (const char* path : {"/v1/metrics?offset=5", "/v1/metrics/stream?offset=5"})
    REQUIRE_MSG(
        body(c.Get(path), 400)["error"].get<std::string>().find("inside a record") != std::string::npos,
        path);
  s.trainUntil(6);
  const json next = get(c, "/v1/metrics?offset=" + std::to_string(offset));
  std::vector<int64_t> steps;
  for (const json& r : next["records"])
    if (r["type"] == "step") steps.push_back(r["step"]);
  REQUIRE(steps == (std::vector<int64_t>{5, 6}));
  s.server.reset();
  REQUIRE(!std::filesystem::exists(servePath));  // gone with the server
}

TEST_CASE(edits_are_accepted_and_refused_as_in_process_and_a_retry_is_applied_once) {
  Served s;
  auto c = s.client();
  // LN_v.1 (event 5, step 14) moves to step 20 by a delete and an add.
  REQUIRE_EQ(edit(c, {{"request_id", "del-5"}, {"delete", 5}})["accepted"], true);
  const json add{{"request_id", "add-1"}, {"add", {{"step", 20}, {"site", "LN_v"}, {"layer", 1}}}};
  const json added = edit(c, add);
  REQUIRE_EQ(added["accepted"], true);
  const int64_t newId = added["event_id"];
  REQUIRE(newId > 6);
  REQUIRE(edit(c, add) == added);  // retried: the same answer, applied once
  // The same id with another edit is not a retry: 409, nothing applied (it had answered as the add).
  const httplib::Result reused = post(c, "/v1/edit", {{"request_id", "add-1"}, {"delete", newId}});
  REQUIRE(reused);
  REQUIRE_MSG(reused->status == 409 && reused->body.find("another request") != std::string::npos,
              reused->status << ": " << reused->body);
  REQUIRE(s.trainer->schedule().find(newId));
  REQUIRE_EQ(s.trainer->schedule().events.size(), 6u);
  REQUIRE_EQ(s.trainer->schedule().find(newId)->step, 20);

  REQUIRE_EQ(edit(c, {{"request_id", "move-1"}, {"move", {{{"id", newId}, {"step", 22}}}}})["accepted"],
             true);
  REQUIRE_EQ(s.trainer->schedule().find(newId)->step, 22);

  // Refusals carry the in-process result's code and arguments (asking in-process changes nothing).
  REQUIRE(edit(c, {{"request_id", "del-9"}, {"delete", 999}}) == toJson(s.trainer->deleteEvent(999)));
  const ScheduleEvent late{0, 30, EventAction::MakeFake, SiteKind::V, 1};
  const json pastEnd =
      edit(c, {{"request_id", "add-late"}, {"add", {{"step", 30}, {"site", "LN_v"}, {"layer", 1}}}});
  REQUIRE_EQ(pastEnd["refusal"]["code"], "invalid_schedule");
  REQUIRE(pastEnd == toJson(s.trainer->addEvent(late)));
  REQUIRE_EQ(pastEnd["refusal"]["problems"][0]["code"], "past_last_step");

  s.trainUntil(8);  // event 1 (step 5) and 2 (step 7) are applied
  const json applied = edit(c, {{"request_id", "move-applied"}, {"move", {{{"id", 1}, {"step", 12}}}}});
  REQUIRE_EQ(applied["refusal"]["code"], "event_already_applied");
  REQUIRE(applied == toJson(s.trainer->moveEvent(1, 12)));
  const json started = edit(c, {{"request_id", "move-started"}, {"move", {{{"id", newId}, {"step", 3}}}}});
  REQUIRE_EQ(started["refusal"]["code"], "step_already_started");
  REQUIRE_EQ(started["refusal"]["run_step"], 7);
  REQUIRE(started == toJson(s.trainer->moveEvent(newId, 3)));
  // An edit the run took appears in metrics.jsonl as an "edit" record.
  REQUIRE_EQ(records(s.dir.path("run"), "edit").size(), 3u);
}

// A client sends an edit again when its answer is lost, and the run may have restarted meanwhile (killed
// and resumed by its owner): an edit it had accepted, kept in its checkpoint or taken back from
// metrics.jsonl, is answered as the first time and not applied twice.
TEST_CASE(an_edit_sent_again_to_the_resumed_run_is_answered_from_its_record_not_applied_twice) {
  Served s;
  const std::string run = s.dir.path("run");
  auto c = s.client();
  // LN_v.1 (event 5, step 14) moves to step 20 by a delete and an add.
  const json del{{"request_id", "del-5"}, {"delete", 5}};
  const json deleted = edit(c, del);
  const json add{{"request_id", "add-1"}, {"add", {{"step", 20}, {"site", "LN_v"}, {"layer", 1}}}};
  const json added = edit(c, add);
  REQUIRE(deleted["accepted"] == true && added["accepted"] == true);
  s.trainUntil(3);  // stops with a checkpoint at step 3, the add in it
  const json move{{"request_id", "move-1"}, {"move", {{{"id", added["event_id"]}, {"step", 22}}}}};
  const json moved = edit(c, move);  // after the checkpoint: in schedule.json and metrics.jsonl only
  REQUIRE_EQ(moved["accepted"], true);
  const json refused = edit(c, {{"request_id", "del-9"}, {"delete", 999}});
  REQUIRE_EQ(refused["accepted"], false);
  s.server.reset();
  s.trainer.reset();  // as a killed process leaves it: no checkpoint after the move

  s.trainer = Trainer::resume(run);
  s.server = std::make_unique<SteeringServer>(*s.trainer, ServeOptions{});
  auto again = s.client();
  REQUIRE(edit(again, del) == deleted);  // not "no event 5"
  REQUIRE(edit(again, add) == added);
  REQUIRE(edit(again, move) == moved);
  REQUIRE_EQ(s.trainer->schedule().events.size(), 6u);  // smallRun's 6, less one, and the one added, once
  REQUIRE_EQ(s.trainer->schedule().find(added["event_id"])->step, 22);
  REQUIRE_EQ(records(run, "edit").size(), 3u);
  // The same id with another request is still refused; a refusal changed nothing, so it is asked anew.
  const httplib::Result reused = post(again, "/v1/edit", {{"request_id", "add-1"}, {"delete", 1}});
  REQUIRE(reused);
  REQUIRE_MSG(reused->status == 409, reused->status << ": " << reused->body);
  REQUIRE(edit(again, {{"request_id", "del-9"}, {"delete", 999}}) == refused);
  REQUIRE(s.trainer->schedule().find(1));
}

TEST_CASE(requests_without_the_right_token_get_401_and_change_nothing) {
  Served s;
  const Schedule before = s.trainer->schedule();
  std::string wrong = s.server->token();
  wrong.back() = wrong.back() == '0' ? '1' : '0';
  for (const std::string& token : {std::string(), wrong, s.server->token().substr(0, 63), std::string("x")}) {
    auto c = s.client(token);
    REQUIRE_EQ(c.Get("/v1/status")->status, 401);
    REQUIRE_EQ(c.Get("/v1/metrics")->status, 401);
    body(post(c, "/v1/edit", {{"request_id", "r"}, {"delete", 1}}), 401);
    body(post(c, "/v1/stop", json::object()), 401);
  }
  REQUIRE(s.trainer->schedule() == before);
  REQUIRE(!s.trainer->stopRequested() && !s.trainer->pauseRequested());
  auto c = s.client();
  body(post(c, "/v1/stop", json::object()), 200);
  REQUIRE(s.trainer->stopRequested());
}

TEST_CASE(a_paused_run_holds_takes_a_checkpoint_and_edits_and_continues) {
  Served s;
  auto c = s.client();
  const std::string run = s.dir.path("run");
  // Paused over HTTP after step 3, from the training thread, so the test knows where it holds.
  std::thread training([&] {
    s.trainer->run([&](const Progress& p) {
      if (p.done != 3) return;
      auto fromTraining = s.client();
      REQUIRE_EQ(body(post(fromTraining, "/v1/pause", json::object()), 200)["pause_requested"], true);
    });
  });
  waitUntil([&] { return get(c, "/v1/status")["paused"] == true; });
  REQUIRE_EQ(get(c, "/v1/status")["steps_done"], 3);
  REQUIRE(hasRecord(run, "pause", 3));
  // While it holds: a checkpoint now, an edit for the next step, an analysis of the model at step 3.
  body(post(c, "/v1/checkpoint", json::object()), 200);
  waitUntil([&] { return hasRecord(run, "checkpoint", 3); });
  REQUIRE_EQ(edit(c, {{"request_id", "m"}, {"move", {{{"id", 1}, {"step", 4}}}}})["accepted"], true);
  const json analysed = analysedOverHttp(
      c, {{"request_id", "a"}, {"data", "train"}, {"request", {{"analysis", "norms"}, {"sequences", 4}}}});
  REQUIRE_EQ(analysed["step"], 3);
  REQUIRE_EQ(analysed["result"]["header"]["step"], 3);
  REQUIRE_EQ(get(c, "/v1/status")["steps_done"], 3);  // nothing trained meanwhile
  AnalysisRequest norms;
  norms.kind = "norms";
  norms.sequences = 4;
  const SnapshotPtr checkpoint = ModelSnapshot::load(run::checkpointPath(run, 3), "cpu");
  requireSameResult(analysed["result"],
                    runAnalysis(norms, *checkpoint, {s.dir.path("train.bin"), nullptr, nullptr}).result);

  body(post(c, "/v1/continue", json::object()), 200);
  training.join();  // the run trains to its end
  REQUIRE(hasRecord(run, "continue", 3));
  REQUIRE(hasRecord(run, "event", 4));  // the moved event fired at its new step
  REQUIRE_EQ(s.trainer->stepsDone(), 30);
  REQUIRE_EQ(records(run, "step").size(), 30u);
}

// A pause asked for during the last step is held before the run writes its end (it had been answered and
// dropped: the run finished); continue finishes it. Once it has begun its end, a pause is refused (409).
TEST_CASE(a_pause_during_the_last_step_holds_before_the_end) {
  Served s;
  auto c = s.client();
  const std::string run = s.dir.path("run");
  const int64_t last = s.trainer->config().optimizer.maxSteps;
  std::atomic<bool> finished{false}, over{false};
  std::thread training([&] {
    finished = s.trainer->run([&](const Progress& p) {
      if (p.done != last) return;
      auto fromTraining = s.client();
      REQUIRE_EQ(body(post(fromTraining, "/v1/pause", json::object()), 200)["pause_requested"], true);
    });
    over = true;
  });
  waitUntil([&] { return over || get(c, "/v1/status")["paused"] == true; });
  REQUIRE_MSG(!over, "the run ended without holding");
  REQUIRE(hasRecord(run, "pause", last));
  REQUIRE(records(run, "finish").empty());
  REQUIRE(!std::filesystem::exists(run::finalModelPath(run)));
  body(post(c, "/v1/continue", json::object()), 200);
  training.join();
  REQUIRE(finished);
  REQUIRE(hasRecord(run, "continue", last));
  REQUIRE(hasRecord(run, "finish", last));
  REQUIRE(!s.trainer->requestPause());  // its end is written: nothing to hold
  const json late = body(post(c, "/v1/pause", json::object()), 409);
  REQUIRE_MSG(late["code"] == "run_ended", late.dump());
}

// A stop while paused at the end finishes the run: its steps are all trained.
TEST_CASE(a_stop_while_paused_after_the_last_step_finishes_the_run) {
  Served s;
  auto c = s.client();
  const int64_t last = s.trainer->config().optimizer.maxSteps;
  std::atomic<bool> finished{false}, over{false};
  std::thread training([&] {
    finished = s.trainer->run([&](const Progress& p) {
      if (p.done == last) REQUIRE(s.trainer->requestPause());
    });
    over = true;
  });
  waitUntil([&] { return over || s.trainer->paused(); });
  REQUIRE_MSG(!over, "the run ended without holding");
  body(post(c, "/v1/stop", json::object()), 200);
  training.join();
  REQUIRE(finished);
  REQUIRE(hasRecord(s.dir.path("run"), "finish", last));
}

// The autopilot switched on over HTTP (as the workbench and `steer autopilot on` do): the status says so
// at once, the run records the switch at its next step and keeps it in config.json, and its removals are
// then timed by the autopilot (their records say why); a malformed switch gets 400.
TEST_CASE(the_autopilot_is_switched_over_http) {
  Served s;
  auto c = s.client();
  const std::string run = s.dir.path("run");
  REQUIRE_EQ(get(c, "/v1/status")["autopilot"], false);
  REQUIRE_EQ(body(post(c, "/v1/autopilot", {{"enabled", true}}), 200)["autopilot"], true);
  body(post(c, "/v1/autopilot", {{"enabled", "yes"}}), 400);
  body(post(c, "/v1/autopilot", {{"enabled", true}, {"tolerance", 1}}), 400);
  REQUIRE(s.trainer->run());
  REQUIRE(hasRecord(run, "autopilot", 0));
  REQUIRE(readRunConfig(run).autopilot.enabled);
  for (const json& e : records(run, "event"))
    REQUIRE_MSG(e.value("reason", "").rfind("autopilot: ", 0) == 0, e.dump());
}

// A switch the run accepted is kept when it stops before another step: it had been applied only at the
// next step, so a paused run stopped after it resumed with the autopilot off.
TEST_CASE(an_autopilot_switch_before_a_stop_is_kept) {
  Served s;
  const std::string run = s.dir.path("run");
  auto c = s.client();
  body(post(c, "/v1/pause", json::object()), 200);
  std::thread training([&] { s.trainer->run(); });
  waitUntil([&] { return get(c, "/v1/status")["paused"] == true; });
  REQUIRE_EQ(body(post(c, "/v1/autopilot", {{"enabled", true}}), 200)["autopilot"], true);
  // Made while paused, not at the next step: a run killed during the pause keeps it. (Both awaited: the
  // config is written before the record, and a loaded machine had run the check between the two.)
  waitUntil([&] { return readRunConfig(run).autopilot.enabled && hasRecord(run, "autopilot", 0); });
  body(post(c, "/v1/stop", json::object()), 200);
  training.join();
  REQUIRE(readRunConfig(run).autopilot.enabled);
  REQUIRE(hasRecord(run, "autopilot", 0));
  // Once the steps are over (the run writes its end, then its process exits), a switch is refused: it had
  // been answered as made, and was never made.
  const json late = body(post(c, "/v1/autopilot", {{"enabled", false}}), 409);
  REQUIRE_MSG(late["code"] == "run_ended" &&
                  late["error"].get<std::string>().find("steps are over") != std::string::npos,
              late.dump());
  REQUIRE(readRunConfig(run).autopilot.enabled);
  // In the same process a switch still waits for the next run(), which makes it (the workbench's own runs).
  REQUIRE(s.trainer->setAutopilot(false));
  s.trainer->run();
  REQUIRE(!readRunConfig(run).autopilot.enabled);
}

TEST_CASE(a_run_paused_before_its_first_step_writes_the_checkpoint_asked_for_once) {
  Served s;
  const std::string run = s.dir.path("run");
  auto c = s.client();
  body(post(c, "/v1/pause", json::object()), 200);
  bool finished = true;
  std::thread training([&] { finished = s.trainer->run(); });
  waitUntil([&] { return get(c, "/v1/status")["paused"] == true; });
  body(post(c, "/v1/checkpoint", json::object()), 200);
  waitUntil([&] { return hasRecord(run, "checkpoint", 0); });
  body(post(c, "/v1/stop", json::object()), 200);
  training.join();
  REQUIRE(!finished);
  REQUIRE_EQ(records(run, "checkpoint").size(), 1u);  // the stop found it written already
  REQUIRE_EQ(run::latestCheckpoint(run), run::checkpointPath(run, 0));
  REQUIRE_EQ(get(c, "/v1/status")["paused"], false);
  REQUIRE_EQ(get(c, "/v1/status")["pause_requested"], false);
  // Once its owner says the run has ended (the CLI, when run() returns, before it exits), the server
  // refuses what would never take effect: a checkpoint had been acknowledged and never written, edits
  // recorded after the stop.
  REQUIRE_EQ(get(c, "/v1/status")["ended"], false);
  s.server->runEnded();
  REQUIRE_EQ(get(c, "/v1/status")["ended"], true);
  REQUIRE_EQ(body(post(c, "/v1/checkpoint", json::object()), 409)["code"], "run_ended");
  REQUIRE_EQ(body(post(c, "/v1/edit", {{"request_id", "late"}, {"delete", 1}}), 409)["code"], "run_ended");
  REQUIRE_EQ(body(post(c, "/v1/autopilot", {{"enabled", true}}), 409)["code"], "run_ended");
  REQUIRE_EQ(records(run, "checkpoint").size(), 1u);
  REQUIRE(s.trainer->schedule().find(1));
  REQUIRE(records(run, "edit").empty());
}

TEST_CASE(metrics_stream_as_server_sent_events_from_an_offset) {
  Served s;
  const std::string run = s.dir.path("run");
  // The records of the stream from `offset` until a batch holding a "stop" record has ended (each "data:"
  // event is one record of the log; an "id:" event ends a batch with the offset after it).
  auto streamUntilStop = [&](int64_t offset) {
    auto c = s.client();
    std::string text;
    std::vector<json> received;
    bool stopped = false;
    int64_t end = -1;
    c.Get(("/v1/metrics/stream?offset=" + std::to_string(offset)).c_str(),
          [&](const char* data, std::size_t size) {
            text.append(data, size);
            for (std::size_t at; (at = text.find("\n\n")) != std::string::npos; text.erase(0, at + 2)) {
              const std::string event = text.substr(0, at);
              if (event.rfind("data: ", 0) == 0) {
                received.push_back(json::parse(event.substr(6)));
                stopped = stopped || received.back()["type"] == "stop";
              }
              if (event.rfind("id: ", 0) == 0) {
                end = std::stoll(event.substr(4));
                if (stopped) return false;
              }
            }
            return true;
          });
    return std::make_pair(received, end);
  };
  auto written = [&] {
    std::ifstream log(run::metricsPath(run));
    std::vector<json> all;
    for (std::string line; std::getline(log, line);) all.push_back(json::parse(line));
    return all;
  };
  s.trainUntil(4);
  const auto [first, firstEnd] = streamUntilStop(0);
  REQUIRE(first == written());
  REQUIRE_EQ(first.front()["type"], "start");
  // From the offset the last batch named, while the run trains on: only the records written after it.
  std::thread training([&] { s.trainUntil(6); });
  const auto [rest, restEnd] = streamUntilStop(firstEnd);
  training.join();
  const std::vector<json> all = written();
  REQUIRE_EQ(first.size() + rest.size(), all.size());
  REQUIRE(std::equal(rest.begin(), rest.end(), all.begin() + static_cast<std::ptrdiff_t>(first.size())));
  REQUIRE_EQ(rest.front()["type"], "step");
  REQUIRE_EQ(rest.front()["step"], 5);
  REQUIRE_EQ(restEnd, static_cast<int64_t>(std::filesystem::file_size(run::metricsPath(run))));
}

TEST_CASE(analysis_requests_are_checked_and_a_retry_is_the_same_job) {
  Served s;
  auto c = s.client();
  auto reason = [&](const json& request) {
    return body(post(c, "/v1/analyze", request), 400)["error"].get<std::string>();
  };
  const json norms{{"analysis", "norms"}, {"sequences", 2}};
  REQUIRE(reason({{"request", norms}}).find("request_id") != std::string::npos);
  REQUIRE(reason({{"request_id", "a"}}).find("\"request\" is missing") != std::string::npos);
  REQUIRE(reason({{"request_id", "a"}, {"request", norms}, {"model", "/etc/passwd"}}).find("\"model\"") !=
          std::string::npos);
  REQUIRE(reason({{"request_id", "a"}, {"request", norms}, {"data", 0}}).find("\"data\"") !=
          std::string::npos);  // the run has no evaluation sets
  REQUIRE(reason({{"request_id", "a"}, {"request", norms}, {"data", "/tmp/x.bin"}}).find("\"data\"") !=
          std::string::npos);  // no request names a file
  REQUIRE(reason({{"request_id", "a"}, {"request", norms}, {"file", "x"}}).find("unknown field") !=
          std::string::npos);
  for (const auto& [bad, named] : std::vector<std::pair<json, std::string>>{
           {{{"analysis", "nope"}}, "one of norms"},
           {{{"analysis", "norms"}, {"sequences", 1.5}}, "\"sequences\""},
           {{{"analysis", "norms"}, {"sequences", true}}, "\"sequences\""},
           {{{"analysis", "norms"}, {"sequences", 18446744073709551615ull}}, "\"sequences\""},
           {{{"analysis", "norms"}, {"sequences", 100000}}, "\"sequences\""},
           {{{"analysis", "dla"}, {"bootstrap", -1}}, "\"bootstrap\""},
           {{{"analysis", "dla"}, {"bootstrap", 1}}, "beyond both of its ends"},
           {{{"analysis", "patching"}, {"count", 10}}, "multiple of 4"},
           {{{"analysis", "sinks"}, {"threshold", 2}}, "\"threshold\""},
           {{{"analysis", "norms"}, {"path", "x"}}, "unknown analysis setting"}}) {
    const std::string why = reason({{"request_id", "a"}, {"request", bad}});
    REQUIRE_MSG(why.find(named) != std::string::npos, why);
  }
  // A retried request is the same job; an unknown job is 404; one the model cannot answer fails, saying why.
  const json request{{"request_id", "n1"}, {"data", "train"}, {"request", norms}};
  const json first = body(post(c, "/v1/analyze", request), 200);
  REQUIRE_EQ(body(post(c, "/v1/analyze", request), 200)["job"], first["job"]);
  REQUIRE(body(c.Get("/v1/analysis?job=999"), 404)["error"].get<std::string>().find("999") !=
          std::string::npos);
  REQUIRE(body(c.Get("/v1/analysis"), 400)["error"].get<std::string>().find("job") != std::string::npos);
  const json tooLong = finishedJob(
      c, {{"request_id", "n2"}, {"data", "train"}, {"request", {{"analysis", "norms"}, {"length", 999}}}});
  REQUIRE_EQ(tooLong["state"], "failed");
  REQUIRE_MSG(
      tooLong["error"].get<std::string>().find("longer than the model's context") != std::string::npos,
      tooLong.dump());
}

TEST_CASE(the_client_edits_follows_and_analyses_as_the_workbench_does) {
  Served s;
  const std::string run = s.dir.path("run");
  SteeringClient client(readServeFile(run::servePath(run)));
  REQUIRE_EQ(client.address().port, s.server->port());
  // Edits: the in-process results, refusals with their codes and problems.
  REQUIRE(client.moveEvents({{5, 20}}).accepted);
  REQUIRE_EQ(s.trainer->schedule().find(5)->step, 20);
  const EditResult missing = client.remove(999);
  REQUIRE(!missing.accepted && missing.refusal && missing.refusal->code == EditRefusal::Code::NoSuchEvent);
  REQUIRE(toJson(missing) == toJson(s.trainer->deleteEvent(999)));
  const ScheduleEvent late{0, 30, EventAction::MakeFake, SiteKind::V, 1};
  const EditResult pastEnd = client.add(late);
  REQUIRE(pastEnd.refusal && pastEnd.refusal->problems.at(0).code == ScheduleProblem::Code::PastLastStep);
  REQUIRE(toJson(pastEnd) == toJson(s.trainer->addEvent(late)));
  int64_t stepsDone = -1;
  REQUIRE(client.schedule(&stepsDone) == s.trainer->schedule());
  REQUIRE_EQ(stepsDone, 0);

  // Metrics followed as a stream: every record once, in order; then on from the last page's offset.
  s.trainUntil(3);
  std::vector<json> followed;
  int64_t next = 0;
  client.followMetrics(0, [&](const SteeringClient::MetricsPage& page) {
    followed.insert(followed.end(), page.records.begin(), page.records.end());
    next = page.nextOffset;
    return followed.back()["type"] != "stop";
  });
  REQUIRE(followed == client.metrics(0).records);
  REQUIRE(client.metrics(next).records.empty());
  // A refused stream says why, in the run's words.
  REQUIRE_THROWS_WITH(client.followMetrics(1, [](const SteeringClient::MetricsPage&) { return true; }),
                      "refused the metrics stream from offset 1: 400", "inside a record of metrics.jsonl");

  // An analysis job, followed to its result.
  AnalysisRequest norms;
  norms.kind = "norms";
  norms.sequences = 2;
  const int64_t job = client.analyze(norms, "now", "train");
  json state;
  waitUntil(
      [&] { return (state = client.analysisJob(job))["state"] != "queued" && state["state"] != "running"; });
  REQUIRE_MSG(state["state"] == "done", state.dump());
  REQUIRE_EQ(state["result"]["header"]["step"], 3);
  REQUIRE_EQ(client.cancelAnalysis(job)["state"], "done");  // finished: a cancel changes nothing
  REQUIRE_THROWS_WITH(client.cancelAnalysis(job + 100), "404", "no analysis job");
  REQUIRE_EQ(client.pause()["pause_requested"], true);
  REQUIRE_EQ(client.continueRun()["pause_requested"], false);
}

// The Benchmarks pane's request for a served run: the task's items travel in the body (larger than an edit
// may be), and the server's answer is what the same request computes here.
TEST_CASE(a_benchmark_travels_to_the_server_and_scores_as_here) {
  TempDir dir;
  RunConfig config = smallRun(dir);
  config.model = std::string(NF_REFERENCE_DIR) + "/../../resources/tiny-gpt2";  // a model with a tokenizer
  const auto trainer = Trainer::start(dir.path("run"), config);
  SteeringServer server(*trainer, ServeOptions{});
  httplib::Client c = patientClient(server.port());
  c.set_bearer_token_auth(server.token());

  writeSyntheticBenchmarks(dir.path("bench"), 2, 300);
  AnalysisRequest request;
  request.kind = "benchmark";
  request.benchmark =
      std::make_shared<const BenchmarkData>(readBenchmark(BenchmarkTask::HellaSwag, dir.path("bench")));
  const json asked{{"request_id", "b1"}, {"request", toJson(request)}, {"model", "now"}};
  REQUIRE_MSG(asked.dump().size() > 64 * 1024, asked.dump().size());  // more than an edit may send
  const json answer = analysedOverHttp(c, asked)["result"];
  AnalysisSources here;
  here.tokenizer = loadTokenizer(config.model);
  requireSameResult(answer, runAnalysis(request, *ModelSnapshot::load(config.model), here).result);
  REQUIRE_EQ(answer["n"], 300);
  // Other requests stay small, refused before they are read.
  const auto large = c.Post("/v1/edit", std::string(100'000, ' '), "application/json");
  REQUIRE(!large || large->status == 413);
  // A benchmark request is as strict as every other: a gold choice outside the item is named.
  json bad = toJson(request);
  bad["items"][0]["gold"] = 9;
  const json refused = body(post(c, "/v1/analyze", {{"request_id", "b2"}, {"request", bad}}), 400);
  REQUIRE_MSG(refused["error"].get<std::string>().find("\"gold\"") != std::string::npos, refused.dump());
}

// The Logit lens and Circuit panes' requests for a served run: the server's answers are what the same
// requests compute here (the circuit's edges whose scores differ by float rounding may swap places: its top
// edges, size and faithfulness are compared).
TEST_CASE(the_logit_lens_and_the_circuit_of_a_served_run_are_those_computed_here) {
  TempDir dir;
  RunConfig config = smallRun(dir);
  config.model = std::string(NF_REFERENCE_DIR) + "/../../resources/tiny-gpt2";  // a tokenizer: IOI prompts
  const auto trainer = Trainer::start(dir.path("run"), config);
  SteeringServer server(*trainer, ServeOptions{});
  httplib::Client c = patientClient(server.port());
  c.set_bearer_token_auth(server.token());
  AnalysisSources here;
  here.tokenFile = config.trainData;
  here.tokenizer = loadTokenizer(config.model);
  const auto snapshot = ModelSnapshot::load(config.model);

  AnalysisRequest lens;
  lens.kind = "logit-lens";
  lens.sequences = 2;
  lens.length = 16;
  lens.traceSequence = 1;
  lens.top = 3;
  const json lensAnswer =
      analysedOverHttp(c, {{"request_id", "l1"}, {"data", "train"}, {"request", toJson(lens)}})["result"];
  // Token texts travel as valid UTF-8: a byte-level token's partial character is replaced on the way.
  const json lensHere = json::parse(
      runAnalysis(lens, *snapshot, here).result.dump(-1, ' ', false, json::error_handler_t::replace));
  requireSameResult(lensAnswer, lensHere);

  AnalysisRequest circuit;
  circuit.kind = "circuit";
  circuit.ioiCount = 8;
  circuit.edges = 6;
  circuit.check = 3;
  const json served = analysedOverHttp(c, {{"request_id", "c1"}, {"request", toJson(circuit)}})["result"];
  const json local = runAnalysis(circuit, *snapshot, here).result;
  requireSameResult(served["circuit"], local["circuit"]);
  for (int i = 0; i < 3; ++i) requireSameResult(served["edges"][i], local["edges"][i]);
  REQUIRE_EQ(served["edges"].size(), local["edges"].size());
}

TEST_CASE(the_client_names_the_run_it_cannot_reach_and_the_file_it_cannot_read) {
  Served s;
  ServeAddress wrong = readServeFile(run::servePath(s.dir.path("run")));
  wrong.token = "not-the-token";
  try {
    SteeringClient(wrong).status();
    REQUIRE_MSG(false, "a wrong token was taken");
  } catch (const SteeringError& e) {
    REQUIRE_EQ(e.status, 401);
    REQUIRE(std::string(e.what()).find("token") != std::string::npos);
  }
  const ServeAddress gone{"127.0.0.1", freeLoopbackPort(), "t", {}};
  try {
    SteeringClient(gone, 5).status();
    REQUIRE_MSG(false, "nothing serves there");
  } catch (const SteeringError& e) {
    REQUIRE_EQ(e.status, 0);
    REQUIRE(std::string(e.what()).find(gone.text()) != std::string::npos);
  }
  REQUIRE_THROWS_WITH(readServeFile(s.dir.path("none.json")), "none.json");
  writeFileAtomic(s.dir.path("bad.json"), R"({"format": "normfree-serve", "version": 1, "host": "h"})");
  REQUIRE_THROWS_WITH(readServeFile(s.dir.path("bad.json")), "bad.json", "\"port\"");
  // A run whose trainer was killed left its serve.json; steering it said only 401 or "does not answer", now
  // also what is known: the trainer is gone. (goneTrainer itself: test_reliability.)
  const std::string killed = s.dir.path("killed");
  std::filesystem::create_directories(killed);
  nlohmann::json left = nlohmann::json::parse(readTextFile(run::servePath(s.dir.path("run"))));
  left["port"] = freeLoopbackPort();  // nothing serves there now
  writeFileAtomic(run::servePath(killed), left.dump());
  const pid_t child = deadProcess();
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  writeFileAtomic(run::lockPath(killed), nlohmann::json{{"pid", child}, {"host", host}}.dump());
  try {
    SteeringClient(serveAddressOf(killed, ""), 5).status();
    REQUIRE_MSG(false, "nothing serves there");
  } catch (const SteeringError& e) {
    REQUIRE_MSG(std::string(e.what()).find("may be stale: process " + std::to_string(child) +
                                           ", which trained "
                                           "the run, is gone") != std::string::npos,
                e.what());
  }
  REQUIRE(serveAddressOf(s.dir.path("run"), "").doubt.empty());  // a live one is served
}

TEST_CASE(malformed_requests_get_400_with_a_reason) {
  Served s;
  const Schedule before = s.trainer->schedule();
  auto c = s.client();
  auto reason = [&](const std::string& text) {
    const auto res = c.Post("/v1/edit", text, "application/json");
    return body(res, 400)["error"].get<std::string>();
  };
  REQUIRE(reason("{not json").find("JSON object") != std::string::npos);
  REQUIRE(reason(R"({"delete": 1})").find("request_id") != std::string::npos);
  REQUIRE(reason(R"({"request_id": "", "delete": 1})").find("request_id") != std::string::npos);
  REQUIRE(reason(R"({"request_id": "a", "delete": 1, "add": {}})").find("exactly one") != std::string::npos);
  REQUIRE(reason(R"({"request_id": "a", "add": {"id": 3, "step": 4, "site": "LN_v", "layer": 0}})")
              .find("leave \"id\" out") != std::string::npos);
  REQUIRE(reason(R"({"request_id": "a", "add": {"step": 4.5, "site": "LN_v", "layer": 0}})")
              .find("whole number") != std::string::npos);
  REQUIRE(reason(R"({"request_id": "a", "add": {"step": 4, "site": "LN_zz", "layer": 0}})").find("LN_zz") !=
          std::string::npos);
  REQUIRE(reason(R"({"request_id": "a", "move": {"id": 1}})").find("list") != std::string::npos);
  REQUIRE(reason(R"({"request_id": "a", "delete": "1"})").find("whole number") != std::string::npos);
  // Past 2^63 a number had wrapped: 2^64 - 1 was answered as event -1, a step as a negative step.
  REQUIRE(reason(R"({"request_id": "a", "delete": 18446744073709551615})").find("below 2^63") !=
          std::string::npos);
  REQUIRE(reason(R"({"request_id": "a", "move": [{"id": 1, "step": 18446744073709551614}]})")
              .find("\"step\" must be a whole number below 2^63") != std::string::npos);
  // As strict as an analysis request: unknown fields (a "dry_run" would otherwise be applied for real),
  // duplicate keys (which one counts would be the JSON library's choice) and an event moved twice.
  REQUIRE(reason(R"({"request_id": "a", "delete": 1, "dry_run": true})").find("unknown field \"dry_run\"") !=
          std::string::npos);
  REQUIRE(reason(R"({"request_id": "a", "add": {"step": 4, "site": "LN_v", "layer": 0, "at": 9}})")
              .find("unknown field \"at\"") != std::string::npos);
  REQUIRE(reason(R"({"request_id": "a", "move": [{"id": 1, "step": 9, "to": 3}]})").find("unknown field") !=
          std::string::npos);
  REQUIRE(reason(R"({"request_id": "a", "add": {"step": 4, "step": 40, "site": "LN_v", "layer": 0}})")
              .find("\"step\" appears twice") != std::string::npos);
  REQUIRE(reason(R"({"request_id": "a", "move": [{"id": 1, "step": 9}, {"id": 1, "step": 11}]})")
              .find("event 1 is moved twice") != std::string::npos);
  REQUIRE(body(c.Get("/v1/metrics?offset=-3"), 400)["error"].get<std::string>().find("offset") !=
          std::string::npos);
  // And the query string: a "dry_run" there had been applied, a misspelt offset answered from 0.
  REQUIRE(body(c.Post("/v1/edit?dry_run=true", R"({"request_id": "q", "delete": 1})", "application/json"),
               400)["error"]
              .get<std::string>()
              .find("unknown query parameter 'dry_run'") != std::string::npos);
  REQUIRE(body(c.Get("/v1/metrics?ofset=5000"), 400)["error"].get<std::string>().find("'ofset'") !=
          std::string::npos);
  REQUIRE(body(c.Get("/v1/metrics?offset=0&offset=5"), 400)["error"].get<std::string>().find("twice") !=
          std::string::npos);
  // The controls take no fields: a stop that says {"dry_run": true} had stopped the run.
  for (const char* control : {"/v1/stop", "/v1/pause", "/v1/checkpoint", "/v1/continue"})
    REQUIRE_MSG(body(c.Post(control, R"({"dry_run": true})", "application/json"), 400)["error"]
                        .get<std::string>()
                        .find("takes no fields") != std::string::npos,
                control);
  REQUIRE(!s.trainer->stopRequested() && !s.trainer->pauseRequested());
  // Too large: refused with 413 (the server may also close the connection before reading it all).
  const auto large = c.Post("/v1/edit", std::string(100'000, ' '), "application/json");
  REQUIRE(!large || large->status == 413);
  // A body's kind: JSON sent as a form (curl -d) is read as JSON, but httplib caps a form at 8 KiB (said),
  // and a multipart body (curl -F) reaches no handler: a control that said {"dry_run": true} so was obeyed.
  const std::string padded = R"({"request_id": "f", "delete": 999999)" + std::string(9000, ' ') + "}";
  REQUIRE(body(c.Post("/v1/edit", padded, "application/x-www-form-urlencoded"), 413)["error"]
              .get<std::string>()
              .find("as application/json") != std::string::npos);
  REQUIRE(!body(c.Post("/v1/edit", R"({"request_id": "f", "delete": 999999})",
                       "application/x-www-form-urlencoded"),
                200)["accepted"]
               .get<bool>());  // read, and refused as an edit: no such event
  httplib::MultipartFormDataItems fields = {{"dry_run", "true", "", ""}};
  REQUIRE(body(c.Post("/v1/continue", fields), 415)["error"].get<std::string>().find("not multipart") !=
          std::string::npos);
  REQUIRE(body(c.Get("/v1/no-such-thing"), 404).contains("error"));
  REQUIRE(s.trainer->schedule() == before);
}

TEST_CASE(serving_beyond_loopback_needs_permission_and_addresses_are_checked) {
  TempDir dir;
  auto trainer = Trainer::start(dir.path("run"), smallRun(dir));
  REQUIRE_THROWS_WITH(SteeringServer(*trainer, parseServeAddress("0.0.0.0:0")), "0.0.0.0", "--serve-remote");
  const ServeOptions port = parseServeAddress("8123");
  REQUIRE_EQ(port.host, "127.0.0.1");
  REQUIRE_EQ(port.port, 8123);
  const ServeOptions both = parseServeAddress("[::1]:0");
  REQUIRE_EQ(both.host, "::1");
  REQUIRE_EQ(both.port, 0);
  for (const char* bad : {"", "host:", "99999", "1.2.3.4:x", ":80"})
    REQUIRE_THROWS_WITH(parseServeAddress(bad), "PORT or HOST:PORT");
  // Loopback is an address of 127.0.0.0/8 or ::1 (or "localhost"), never a name that merely starts so.
  for (const char* loopback : {"127.0.0.1", "127.3.2.1", "::1", "localhost"})
    REQUIRE(isLoopbackHost(loopback));
  for (const char* other : {"127.evil.example", "10.0.0.1", "::2", "0.0.0.0", ""})
    REQUIRE(!isLoopbackHost(other));
  REQUIRE_THROWS_WITH(SteeringServer(*trainer, parseServeAddress("127.evil.example:0")), "--serve-remote");
  // An empty or malformed --serve is bad usage, said while the command line is read: no run folder is made
  // (an empty one used to train without serving and without a word).
  for (const std::string bad : {"''", "host:"}) {
    const CliResult r = cli("remove " + dir.path("served") + " --model m --train t.bin --serve " + bad);
    REQUIRE_MSG(r.status == 2 && r.err.find("--serve") != std::string::npos, r.status << ": " << r.err);
    REQUIRE(!std::filesystem::exists(dir.path("served")));
  }
  // A port in use is found before the run folder is made (it used to leave a folder neither remove nor
  // resume would take).
  const SteeringServer holder(*trainer, ServeOptions{});
  const RunConfig config = smallRun(dir);
  const CliResult inUse =
      cli("finetune " + dir.path("served") + " --model " + config.model + " --train " + config.trainData +
          " --steps 2 --micro-batch 4 --context 16 --serve " + std::to_string(holder.port()));
  REQUIRE_MSG(inUse.status != 0 && inUse.err.find("in use") != std::string::npos, inUse.err);
  REQUIRE(!std::filesystem::exists(dir.path("served")));
}

TEST_CASE(a_cli_run_with_serve_stops_when_asked_over_http) {
  ServedCli cli;
  auto c = cli.client();
  waitUntil([&] { return get(c, "/v1/status")["steps_done"].get<int64_t>() >= 2; });
  body(post(c, "/v1/stop", json::object()), 200);
  const Finished finished = cli.finished();
  REQUIRE_EQ(finished.status, 3);  // stopped before its last step, with a checkpoint
  REQUIRE_EQ(records(cli.run, "stop").size(), 1u);
  REQUIRE(!run::latestCheckpoint(cli.run).empty());
  REQUIRE(!std::filesystem::exists(run::servePath(cli.run)));
  REQUIRE_MSG(finished.err.find(cli.serveFile["token"].get<std::string>()) != std::string::npos,
              finished.err);
}

// "The model the run started from" is that model or nothing: a source folder replaced since the start
// fails the job by name (it used to analyse the replacement).
TEST_CASE(an_analysis_of_the_start_model_refuses_a_replaced_source) {
  Served s;
  auto c = s.client();
  const json norms{{"analysis", "norms"}, {"sequences", 2}};
  REQUIRE_EQ(
      finishedJob(c,
                  {{"request_id", "a"}, {"model", "start"}, {"data", "train"}, {"request", norms}})["state"],
      "done");
  saveModel(*randomModel(smallConfig(), 2), s.dir.path("model"));
  // A new server: the first one keeps the start model it loaded (the one the run really started from).
  s.server = std::make_unique<SteeringServer>(*s.trainer, ServeOptions{});
  auto fresh = s.client();
  const json failed =
      finishedJob(fresh, {{"request_id", "b"}, {"model", "start"}, {"data", "train"}, {"request", norms}});
  REQUIRE_EQ(failed["state"], "failed");
  REQUIRE_MSG(failed["error"].get<std::string>().find("its weights changed since the run started") !=
                  std::string::npos,
              failed.dump());
}

// Connections that send nothing do not hold the server's threads: a request made after 100 of them (more
// than its 32 threads) is answered while every one of them is still open. Before, the request waited until
// the idle ones had timed out one thread-load after another (10–13 s), so some were closed by then.
TEST_CASE(idle_connections_do_not_starve_the_others) {
  Served s;
  std::vector<int> idle;
  for (int i = 0; i < 100; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(s.server->port()));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    idle.push_back(fd);
  }
  auto c = s.client();
  REQUIRE_EQ(get(c, "/v1/status")["steps_done"], 0);
  int stillOpen = 0;
  for (int fd : idle) {
    char byte;
    const ssize_t got = ::recv(fd, &byte, 1, MSG_DONTWAIT | MSG_PEEK);
    stillOpen += got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    ::close(fd);
  }
  REQUIRE_EQ(stillOpen, 100);
}

TEST_CASE(a_cli_run_is_paused_analysed_and_continued_over_http_and_matches_the_cli_analysis) {
  ServedCli cli("--checkpoint-interval 0");
  const std::string& run = cli.run;
  auto c = cli.client();
  waitUntil([&] { return get(c, "/v1/status")["steps_done"].get<int64_t>() >= 2; });
  REQUIRE_EQ(body(post(c, "/v1/pause", json::object()), 200)["pause_requested"], true);
  waitUntil([&] { return get(c, "/v1/status")["paused"] == true; });
  const int64_t held = get(c, "/v1/status")["steps_done"];
  body(post(c, "/v1/checkpoint", json::object()), 200);
  waitUntil([&] { return hasRecord(run, "checkpoint", held); });
  const json dla{
      {"analysis", "dla"}, {"sequences", 4}, {"bootstrap", 20}, {"trace_layer", 1}, {"trace_head", 1}};
  const json analysed = analysedOverHttp(c, {{"request_id", "dla"}, {"data", "train"}, {"request", dla}});
  REQUIRE_EQ(analysed["step"], held);
  // The CLI's analysis of the checkpoint of the same step: the same numbers.
  const Finished analyze = finish(
      startCli("analyze dla " + run + " --step " + std::to_string(held) + " --data " + cli.config.trainData +
                   " --sequences 4 --bootstrap 20 --head 1.1 --out " + cli.dir.path("dla.json"),
               cli.dir.path("analyze.txt")),
      cli.dir.path("analyze.txt"));
  REQUIRE_MSG(analyze.status == 0, analyze.err);
  requireSameResult(analysed["result"], json::parse(readTextFile(cli.dir.path("dla.json"))));
  REQUIRE_EQ(get(c, "/v1/status")["steps_done"], held);  // held all along

  body(post(c, "/v1/continue", json::object()), 200);
  waitUntil([&] { return get(c, "/v1/status")["steps_done"].get<int64_t>() > held; });
  REQUIRE(hasRecord(run, "continue", held));
  body(post(c, "/v1/stop", json::object()), 200);
  REQUIRE_EQ(cli.finished().status, 3);
}

TEST_CASE(a_served_run_is_steered_from_a_terminal_with_steer) {
  ServedCli served("", 1000);  // the events are at steps 1005–1016, not reached while the test edits
  const std::string& run = served.run;
  auto c = served.client();
  waitUntil([&] { return get(c, "/v1/status")["steps_done"].get<int64_t>() >= 2; });
  CliResult r = cli("steer pause " + run);
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(json::parse(r.out)["pause_requested"], true);
  waitUntil([&] { return json::parse(cli("steer status " + run).out)["paused"] == true; });
  // Edits: accepted (exit 0) and refused with the run's code (exit 5).
  r = cli("steer move " + run + " 6:2000");
  REQUIRE_MSG(r.status == 0, r.out << r.err);
  REQUIRE_EQ(json::parse(cli("steer schedule " + run).out)["schedule"]["events"][5]["step"], 2000);
  r = cli("steer delete " + run + " 999");
  REQUIRE_EQ(r.status, 5);
  REQUIRE_EQ(json::parse(r.out)["refusal"]["code"], "no_such_event");
  r = cli("steer add " + run + " '{\"step\": 1500, \"site\": \"LN_v\", \"layer\": 1}'");
  REQUIRE_EQ(r.status, 5);  // LN_v.1 is made fake at step 1014 already
  REQUIRE_EQ(json::parse(r.out)["refusal"]["problems"][0]["code"], "site_already_changed");
  // An id of the user's own had been replaced unsaid; the run names its events, as the endpoint says.
  r = cli("steer add " + run + " '{\"id\": 40, \"step\": 1500, \"site\": \"LN_v\", \"layer\": 1}'");
  REQUIRE_MSG(r.status == 2 && r.err.find("leave \"id\" out") != std::string::npos, r.err);
  // Ids are read in base 10 only: "010" had been octal eight (deleting event 8), "0x10" sixteen.
  r = cli("steer delete " + run + " 0x10");
  REQUIRE_MSG(r.status == 2 && r.err.find("expects an integer") != std::string::npos, r.err);
  // The autopilot switched from a terminal; a state that is neither on nor off is bad usage.
  r = cli("steer autopilot " + run + " on");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(json::parse(r.out)["autopilot"], true);
  REQUIRE_EQ(cli("steer autopilot " + run + " maybe").status, 2);
  REQUIRE_EQ(json::parse(cli("steer autopilot " + run + " off").out)["autopilot"], false);
  // HOST:PORT needs the token; with it, the same run.
  const std::string address = "127.0.0.1:" + std::to_string(served.serveFile["port"].get<int>());
  r = cli("steer status " + address);
  REQUIRE_EQ(r.status, 2);
  REQUIRE_MSG(r.err.find("NF_STEER_TOKEN") != std::string::npos, r.err);
  r = cli("steer continue " + address + " --token " + served.serveFile["token"].get<std::string>());
  REQUIRE_MSG(r.status == 0, r.err);
  r = cli("steer stop " + run);
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(served.finished().status, 3);
  REQUIRE(cli("steer status " + run).status != 0);  // no longer served
}

// `steer watch` follows a run until it stops serving. A stop record of an earlier stretch (a run stopped,
// then trained on) is not the end: watch had ended at the first stop it read, while the run trained on.
TEST_CASE(steer_watch_follows_past_an_earlier_stop_until_the_run_stops_serving) {
  Served s;
  const std::string run = s.dir.path("run"), out = s.dir.path("watch.jsonl"), err = s.dir.path("watch.err");
  s.trainUntil(4);  // a stop record at step 4
  const pid_t watch = startCli("steer watch " + run, err, out);
  const auto printed = [&](const std::string& type, int64_t step) {
    std::ifstream in(out);
    for (std::string line; std::getline(in, line);) {
      const json r = json::parse(line, nullptr, false);
      if (r.is_object() && r.value("type", "") == type && r.value("step", int64_t{-1}) == step) return true;
    }
    return false;
  };
  waitUntil([&] { return printed("stop", 4); });  // it streams
  s.trainUntil(8);
  int status = 0;
  bool exited = false;
  waitUntil([&] { return (exited = ::waitpid(watch, &status, WNOHANG) == watch) || printed("stop", 8); });
  REQUIRE_MSG(!exited, "steer watch ended at the stop of step 4 while the run trained on");
  REQUIRE(printed("step", 6));
  s.server.reset();  // the run stops serving: its stream ends, and watch with it
  const Finished f = finish(watch, err);
  REQUIRE_MSG(f.status == 0, f.err);
}

TEST_MAIN()

// The endpoint's bookkeeping alone: a retried request gets its first answer, the oldest request ids are
// forgotten past the capacity, and the analysis queue's jobs move through typed states.
TEST_CASE(remembered_requests_answer_retries_and_forget_the_oldest) {
  RememberedRequests<int> answers(2);
  answers.remember("a", "add 1", 1);
  answers.remember("b", "add 2", 2);
  REQUIRE(answers.find("a", "add 1") && *answers.find("a", "add 1") == 1);
  // The same id with another request is a client's mistake, not a retry: refused, not answered as the first.
  REQUIRE_THROWS_WITH(answers.find("a", "delete 5"), "request_id \"a\"", "another request");
  REQUIRE_THROWS_WITH(answers.find("a", "add 9"), "another request");  // as long as the first, but another
  answers.remember("a", "add 1", 3);  // the same id again: no second place in the order
  REQUIRE_EQ(*answers.find("a", "add 1"), 3);
  answers.remember("c", "add 4", 4);  // "a" is the oldest id
  REQUIRE(!answers.find("a", "delete 5") && *answers.find("b", "add 2") == 2 &&
          *answers.find("c", "add 4") == 4);
}

TEST_CASE(the_analysis_queue_runs_jobs_in_order_through_typed_states) {
  AnalysisQueue queue(/*maxOpen=*/2, /*keepFinished=*/1, /*rememberedRequests=*/3);
  auto submitted = queue.submit("r1", "request r1", AnalysisJob{});
  REQUIRE(submitted.outcome == AnalysisQueue::Outcome::Added && submitted.job.id == 1);
  REQUIRE_EQ(submitted.job.describe()["state"], "queued");
  REQUIRE(queue.submit("r1", "request r1", AnalysisJob{}).outcome ==
          AnalysisQueue::Outcome::Retried);  // not queued twice
  REQUIRE(queue.submit("r2", "request r2", AnalysisJob{}).job.id == 2);
  REQUIRE(queue.submit("r3", "request r3", AnalysisJob{}).outcome ==
          AnalysisQueue::Outcome::Full);  // two open already

  const std::optional<AnalysisJob> first = queue.start();
  REQUIRE(first && first->id == 1 && queue.find(1)->state == JobState::Running);
  // A benchmark's items are held while the job waits and computes, and let go when it is done: 64 finished
  // jobs of HellaSwag's items had held a gigabyte.
  auto items = std::make_shared<const BenchmarkData>();
  queue.find(1)->request.benchmark = items;
  REQUIRE_EQ(items.use_count(), 2);
  queue.finish(1, nlohmann::json{{"answer", 42}}, "");
  REQUIRE_EQ(items.use_count(), 1);
  nlohmann::json done = queue.find(1)->describe();
  REQUIRE(done["state"] == "done" && done["result"]["answer"] == 42 && !done.contains("error"));
  REQUIRE_EQ(queue.start()->id, 2);
  queue.finish(2, nullptr, "the data file is gone");
  nlohmann::json failed = queue.find(2)->describe();
  REQUIRE(failed["state"] == "failed" && failed["error"] == "the data file is gone" &&
          !failed.contains("result"));
  REQUIRE(!queue.start() && !queue.hasQueued());
  REQUIRE(queue.cancel(1)->state == JobState::Done);  // finished: a cancel changes nothing
  REQUIRE(!queue.cancel(99));

  // Room again; finished jobs beyond the one kept are forgotten, oldest first, and a retry of a forgotten
  // job's request is told so rather than computed again.
  REQUIRE_EQ(queue.submit("r3", "request r3", AnalysisJob{}).job.id, 3);
  REQUIRE(!queue.find(1) && queue.find(2) && queue.find(3));
  REQUIRE(queue.submit("r1", "request r1", AnalysisJob{}).outcome == AnalysisQueue::Outcome::Forgotten);
  queue.finish(99, nullptr, "");  // a job no longer kept: nothing happens

  // A job its client cancels: queued, it fails at once and is never started; running, it is asked to end.
  REQUIRE_EQ(queue.submit("r4", "request r4", AnalysisJob{}).job.id, 4);
  REQUIRE_EQ(queue.start()->id, 3);
  const AnalysisJob* queued = queue.cancel(4);
  REQUIRE(queued->state == JobState::Failed && queued->error == AnalysisQueue::kCancelled);
  REQUIRE(!queue.hasQueued());
  const AnalysisJob* running = queue.cancel(3);
  REQUIRE(running->state == JobState::Running && running->cancelRequested);
}

namespace {

// What a raw socket receives until `marker` has arrived, or the peer closes.
std::string receiveUntil(int fd, const std::string& marker) {
  std::string received;
  char buffer[4096];
  while (received.find(marker) == std::string::npos) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    received.append(buffer, n);
  }
  return received;
}

// A stand-in for a broken or hostile endpoint on loopback: it reads one request and answers with `head`,
// then sends `piece` again and again (every `pause`) until the client goes away.
class BadEndpoint {
 public:
  BadEndpoint(std::string head, std::string piece, std::chrono::milliseconds pause) {
    m_listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(m_listener, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
            ::listen(m_listener, 1) == 0);
    socklen_t length = sizeof a;
    ::getsockname(m_listener, reinterpret_cast<sockaddr*>(&a), &length);
    m_port = ntohs(a.sin_port);
    m_thread = std::thread([this, head, piece, pause] {
      const int fd = ::accept(m_listener, nullptr, nullptr);
      if (fd < 0) return;
      receiveUntil(fd, "\r\n\r\n");  // the request's head
      bool open = ::send(fd, head.data(), head.size(), MSG_NOSIGNAL) > 0;
      while (open) {
        open = ::send(fd, piece.data(), piece.size(), MSG_NOSIGNAL) > 0;
        std::this_thread::sleep_for(pause);
      }
      ::close(fd);
    });
  }
  ~BadEndpoint() {
    m_thread.join();
    ::close(m_listener);
  }
  ServeAddress address() const { return {"127.0.0.1", m_port, "token", {}}; }

 private:
  int m_listener = -1, m_port = 0;
  std::thread m_thread;
};

}  // namespace

// The client never waits forever nor fills its memory: an endpoint that trickles its answer a byte at a
// time is given up after the total deadline, one that floods is cut at kMaxAnswerBytes; each is named.
TEST_CASE(the_client_bounds_an_answer_in_time_and_size) {
  {
    BadEndpoint trickle("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", "{",
                        std::chrono::milliseconds(20));
    try {
      SteeringClient(trickle.address(), 0.5).status();
      REQUIRE_MSG(false, "a trickled answer was waited for to its end");
    } catch (const SteeringError& e) {
      REQUIRE_EQ(e.status, 0);
      REQUIRE_MSG(std::string(e.what()).find(trickle.address().text()) != std::string::npos, e.what());
    }
  }
  BadEndpoint flood("HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n", std::string(1 << 20, ' '),
                    std::chrono::milliseconds(0));
  try {
    SteeringClient(flood.address(), 5).status();
    REQUIRE_MSG(false, "a 1 GB answer was read");
  } catch (const SteeringError& e) {
    REQUIRE_MSG(e.status == 0 && std::string(e.what()).find("more than 64 MiB") != std::string::npos,
                e.what());
  }
}

// A poll of an analysis job that reaches no one (a tunnel that drops for a moment) is asked again, and the
// job's result collected: the job stays on the server, where one lost poll had failed the pane and left the
// result to nobody. A job the server could not compute says why, with the server's address.
TEST_CASE(a_lost_poll_of_an_analysis_job_is_asked_again) {
  httplib::Server fake;
  std::mutex mutex;
  std::condition_variable polled;
  int polls = 0;
  fake.Get("/v1/analysis", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.get_param_value("job") == "8") {
      res.set_content(R"({"job": 8, "state": "failed", "error": "the model has no head 12 in layer 0"})",
                      "application/json");
      return;
    }
    std::unique_lock<std::mutex> lock(mutex);
    if (++polls == 1) {  // the first poll is answered only once the client, given up on it, asks again
      polled.wait_for(lock, std::chrono::seconds(600), [&] { return polls >= 2; });  // a ceiling only
      return;
    }
    polled.notify_all();
    res.set_content(R"({"job": 7, "state": "done", "result": {"answer": 42}})", "application/json");
  });
  std::string cancelled;
  fake.Delete("/v1/analysis", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex);
    cancelled = req.get_param_value("job");
    res.set_content(R"({"job": 9, "state": "failed", "error": "cancelled by its client"})",
                    "application/json");
  });
  const int port = fake.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { fake.listen_after_bind(); });
  const ScopeExit stop([&] {
    fake.stop();
    serving.join();
  });
  SteeringClient client({"127.0.0.1", port, "token", {}}, 0.5);
  REQUIRE_EQ(client.awaitAnalysis(7)["answer"], 42);
  REQUIRE_EQ(polls, 2);
  REQUIRE_THROWS_WITH(client.awaitAnalysis(8), "127.0.0.1:" + std::to_string(port),
                      "could not compute it: the model has no head 12");
  // A job nobody wants any more (the pane left) is cancelled on the server, not left to compute for no one.
  bool abandoned = false;
  try {
    client.awaitAnalysis(9, {}, [] { return true; });
  } catch (const Cancelled&) {
    abandoned = true;
  }
  REQUIRE(abandoned);
  std::lock_guard<std::mutex> lock(mutex);
  REQUIRE_EQ(cancelled, "9");
}

namespace {

// Sends `request` (the head and the start of a body that never ends) on a fresh connection and returns
// the status line of the answer — which must come before the rest of the body, since none will.
std::string statusLineBeforeTheBodyEnds(int port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size()));
  const std::string answer = receiveUntil(fd, "\r\n");
  ::close(fd);
  return answer.substr(0, answer.find("\r\n"));
}

}  // namespace

// A stranger's request is refused from its headers, before its body is read (nothing of it is buffered:
// the 401 comes while the body is still unsent), and a chunked body — whose size cannot be checked before
// it is read — is refused too, by name.
TEST_CASE(the_endpoint_reads_no_body_before_the_token_and_no_chunked_body) {
  Served s;
  const std::string chunkedHead = "POST /v1/edit HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n";
  const std::string firstChunk = "\r\n100000\r\n" + std::string(1000, 'x');
  REQUIRE_EQ(statusLineBeforeTheBodyEnds(s.server->port(), chunkedHead + firstChunk),
             "HTTP/1.1 401 Unauthorized");
  const std::string lengthHead = "POST /v1/edit HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n";
  REQUIRE_EQ(statusLineBeforeTheBodyEnds(s.server->port(), lengthHead + "\r\n{\"request_id\""),
             "HTTP/1.1 401 Unauthorized");
  const std::string token = "Authorization: Bearer " + s.server->token() + "\r\n";
  REQUIRE_EQ(statusLineBeforeTheBodyEnds(s.server->port(), chunkedHead + token + firstChunk),
             "HTTP/1.1 411 Length Required");
  // A POST that does not say its length (curl -X POST sends no Content-Length): told to say 0.
  REQUIRE_EQ(statusLineBeforeTheBodyEnds(s.server->port(),
                                         "POST /v1/pause HTTP/1.1\r\nHost: x\r\n" + token + "\r\n"),
             "HTTP/1.1 411 Length Required");
  REQUIRE(!s.trainer->pauseRequested());
  // The endpoint still serves its client.
  auto c = s.client();
  REQUIRE_EQ(get(c, "/v1/status")["steps_done"], 0);
}

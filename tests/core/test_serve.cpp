// The steering endpoint over loopback, driven by an HTTP client as the workbench will drive it: the run's
// status, metrics and schedule; edits accepted and refused exactly as in-process edits are (same codes), a
// retried edit applied once; no token or a wrong one gets 401 and changes nothing; malformed requests get
// 400 with a reason; a CLI run started with --serve stops when asked over HTTP.
#include <httplib.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "check.h"
#include "cli_process.h"
#include "io/atomic_file.h"
#include "run_fixtures.h"
#include "serve/steering_server.h"
#include "train/trainer.h"

using namespace nf;
using namespace nf::test;
using json = nlohmann::json;

namespace {

// A removal run (smallRun: 30 steps, events at steps 5–16, ids 1–6), not trained yet, and its endpoint.
struct Served {
  TempDir dir;
  std::unique_ptr<Trainer> trainer;
  std::unique_ptr<SteeringServer> server;
  Served() {
    trainer = Trainer::start(dir.path("run"), smallRun(dir));
    server = std::make_unique<SteeringServer>(*trainer, ServeOptions{});
  }
  httplib::Client client(const std::string& token) const {
    httplib::Client c("127.0.0.1", server->port());
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

}  // namespace

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
  REQUIRE(!s.trainer->stopRequested());
  auto c = s.client();
  body(post(c, "/v1/stop", json::object()), 200);
  REQUIRE(s.trainer->stopRequested());
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
  REQUIRE(reason(R"({"request_id": "a", "delete": "1"})").find("event id") != std::string::npos);
  REQUIRE(body(c.Get("/v1/metrics?offset=-3"), 400)["error"].get<std::string>().find("offset") !=
          std::string::npos);
  // Too large: refused with 413 (the server may also close the connection before reading it all).
  const auto large = c.Post("/v1/edit", std::string(100'000, ' '), "application/json");
  REQUIRE(!large || large->status == 413);
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
}

TEST_CASE(a_cli_run_with_serve_stops_when_asked_over_http) {
  TempDir dir;
  const RunConfig config = smallRun(dir);
  writeFileAtomic(dir.path("schedule.json"), toJson(config.schedule).dump());
  const std::string run = dir.path("run");
  const pid_t pid = startCli("remove " + run + " --model " + config.model + " --train " + config.trainData +
                                 " --schedule " + dir.path("schedule.json") +
                                 " --steps 100000 --micro-batch 4 --context 16 --serve 0",
                             dir.path("stderr.txt"));
  // serve.json appears once the run serves; the run then trains until asked to stop.
  int status = 0;
  while (!std::filesystem::exists(run::servePath(run))) {
    REQUIRE_MSG(::waitpid(pid, &status, WNOHANG) == 0, "the run ended before serving");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling interval, not a deadline
  }
  const json serveFile = json::parse(readTextFile(run::servePath(run)));
  httplib::Client c("127.0.0.1", serveFile["port"].get<int>());
  c.set_bearer_token_auth(serveFile["token"].get<std::string>());
  while (get(c, "/v1/status")["steps_done"].get<int64_t>() < 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  body(post(c, "/v1/stop", json::object()), 200);
  const Finished finished = finish(pid, dir.path("stderr.txt"));
  REQUIRE_EQ(finished.status, 3);  // stopped before its last step, with a checkpoint
  REQUIRE_EQ(records(run, "stop").size(), 1u);
  REQUIRE(!run::latestCheckpoint(run).empty());
  REQUIRE(!std::filesystem::exists(run::servePath(run)));
  REQUIRE_MSG(finished.err.find(serveFile["token"].get<std::string>()) != std::string::npos, finished.err);
}

TEST_MAIN()

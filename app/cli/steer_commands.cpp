// normfree-cli steer <request> TARGET: a served run steered from a terminal — this machine's or, through an
// SSH tunnel, a server's (docs/STEERING.md). TARGET is the run directory (its serve.json) or HOST:PORT with
// the token in --token or NF_STEER_TOKEN.
#ifdef NF_STEERING  // the command exists where the endpoint does
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "options.h"
#include "run/metrics_records.h"
#include "run/run_directory.h"
#include "serve/steering_client.h"
#include "serve/steering_server.h"
#include "util/exit_status.h"
#include "util/whole_number.h"

namespace nf::cli {
namespace {

struct TargetOptions {
  std::string target, token;
};

void addTarget(CLI::App& command, TargetOptions& o) {
  command.add_option("target", o.target, "the run directory (its serve.json), or HOST:PORT of a served run")
      ->required();
  command.add_option("--token", o.token, "the run's token with HOST:PORT (default: $NF_STEER_TOKEN)")
      ->type_name("hex");
}

std::unique_ptr<SteeringClient> connect(const TargetOptions& o) {
  const char* fromEnvironment = std::getenv("NF_STEER_TOKEN");
  try {
    return std::make_unique<SteeringClient>(serveAddressOf(o.target, !o.token.empty()  ? o.token
                                                                     : fromEnvironment ? fromEnvironment
                                                                                       : ""));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// Exit status of an edit: accepted, or refused (the answer says why, with its code).
int editAnswered(const EditResult& result) {
  printJson(toJson(result));
  return result.accepted ? exit_status::kSuccess : exit_status::kRefused;
}

void simple(CLI::App& parent, const std::string& name, const std::string& summary,
            nlohmann::json (SteeringClient::*request)()) {
  CLI::App& command = addCommand(parent, name, summary);
  auto o = std::make_shared<TargetOptions>();
  addTarget(command, *o);
  onRun(command, [o, request] {
    printJson((connect(*o).get()->*request)());
    return 0;
  });
}

}  // namespace

void cmdSteer(CLI::App& command) {
  command.description(
      "Steer a run started with --serve, here or through an SSH tunnel (docs/STEERING.md): its status, "
      "pause, continue, a checkpoint now, stop, the autopilot on or off, its schedule and edits of it, its "
      "metrics as they are written. An edit that the run refuses exits with status 5 and says why.");
  command.require_subcommand(1);
  simple(command, "status", "the run's step, state and device", &SteeringClient::status);
  simple(command, "pause", "hold the run after the step in progress", &SteeringClient::pause);
  simple(command, "continue", "train again after a pause", &SteeringClient::continueRun);
  simple(command, "checkpoint", "write a checkpoint after the step in progress", &SteeringClient::checkpoint);
  simple(command, "stop", "stop after the step in progress, with a checkpoint", &SteeringClient::stop);
  {
    CLI::App& autopilot = addCommand(command, "autopilot",
                                     "switch the autopilot on or off: it times the pending removals from the "
                                     "next step (docs/TRAINING.md, \"The autopilot\")");
    auto o = std::make_shared<TargetOptions>();
    auto state = std::make_shared<std::string>();
    addTarget(autopilot, *o);
    autopilot.add_option("state", *state, "on or off")->required()->check(CLI::IsMember({"on", "off"}));
    onRun(autopilot, [o, state] {
      printJson(connect(*o)->setAutopilot(*state == "on"));
      return 0;
    });
  }
  {
    CLI::App& schedule = addCommand(command, "schedule", "the run's schedule as it is now");
    auto o = std::make_shared<TargetOptions>();
    addTarget(schedule, *o);
    onRun(schedule, [o] {
      int64_t stepsDone = 0;
      const Schedule s = connect(*o)->schedule(&stepsDone);
      printJson({{"schedule", toJson(s)}, {"steps_done", stepsDone}});
      return 0;
    });
  }
  {
    CLI::App& move = addCommand(command, "move", "move events to other steps, all or none");
    auto o = std::make_shared<TargetOptions>();
    auto moves = std::make_shared<std::vector<std::string>>();
    addTarget(move, *o);
    move.add_option("moves", *moves, "event id and its new step, e.g. 4:130 5:140")
        ->type_name("ID:STEP")
        ->required();
    onRun(move, [o, moves] {
      std::vector<std::pair<int64_t, int64_t>> idAndStep;
      for (const std::string& m : *moves) {
        const std::size_t colon = m.find(':');
        const std::optional<int64_t> id =
            colon == std::string::npos ? std::nullopt : wholeNumber(m.substr(0, colon));
        const std::optional<int64_t> step =
            colon == std::string::npos ? std::nullopt : wholeNumber(std::string_view(m).substr(colon + 1));
        if (!id || !step) throw UsageError("'" + m + "' is not ID:STEP, e.g. 4:130");
        idAndStep.emplace_back(*id, *step);
      }
      return editAnswered(connect(*o)->moveEvents(idAndStep));
    });
  }
  {
    CLI::App& remove = addCommand(command, "delete", "delete an event that has not fired");
    auto o = std::make_shared<TargetOptions>();
    auto id = std::make_shared<int64_t>(0);
    addTarget(remove, *o);
    remove.add_option("id", *id, "the event's id (steer schedule lists them)")
        ->transform(atLeast<int64_t>(0))
        ->required();
    onRun(remove, [o, id] { return editAnswered(connect(*o)->remove(*id)); });
  }
  {
    CLI::App& add = addCommand(command, "add", "add an event, in a schedule file's event form");
    auto o = std::make_shared<TargetOptions>();
    auto event = std::make_shared<std::string>();
    addTarget(add, *o);
    add.add_option("event", *event,
                   "the event as JSON, e.g. '{\"step\": 120, \"site\": \"LN_v\", \"layer\": 3}'")
        ->required();
    onRun(add, [o, event] {
      nlohmann::json e = nlohmann::json::parse(*event, nullptr, false);
      if (!e.is_object()) throw UsageError("the event is not a JSON object");
      if (e.contains("id")) throw UsageError("the run gives the new event its id; leave \"id\" out");
      e["id"] = 1;  // a stand-in to read the event by a schedule file's rules; the run gives it its own
      ScheduleEvent parsed;
      try {
        parsed = scheduleFromJson(nlohmann::json{{"events", {e}}}, "the event").events.at(0);
      } catch (const std::exception& error) {
        throw UsageError(error.what());
      }
      return editAnswered(connect(*o)->add(parsed));
    });
  }
  {
    CLI::App& watch = addCommand(command, "watch", "print the run's metrics records as it writes them");
    auto o = std::make_shared<TargetOptions>();
    auto offset = std::make_shared<int64_t>(0);
    addTarget(watch, *o);
    watch.add_option("--offset", *offset, "start at this byte of metrics.jsonl (a previous watch's last)")
        ->type_name("bytes")
        ->transform(atLeast<int64_t>(0))
        ->capture_default_str();
    onRun(watch, [o, offset] {
      // Until the run stops serving, which it does once it finishes or stops: its last records are sent,
      // then the stream ends. A stop record on the way is not the end: a resumed run's log holds the stops
      // of its earlier stretches. A lost connection says where to go on from.
      int64_t next = *offset;
      std::string latestStatus;
      const auto goOn = [&] { return "; go on with --offset " + std::to_string(next); };
      try {
        connect(*o)->followMetrics(*offset, [&](const SteeringClient::MetricsPage& page) {
          if (page.restarted)  // an offset past its end: a new run in the folder, or another run's offset
            std::cerr << "note: the run's metrics.jsonl is shorter than offset " << next
                      << ": printed again from its start\n";
          for (const nlohmann::json& record : page.records) {
            printJson(record);
            const std::string type = record.value(record::kType, "");
            if (record::isRunStatus(type)) latestStatus = type;
          }
          next = page.nextOffset;
          std::cout.flush();  // each page as it comes, also into a pipe or a file (`| jq`, a log)
          return true;
        });
      } catch (const SteeringError& e) {  // only a lost connection is gone on from; a refusal would repeat
        throw std::runtime_error(e.status == 0 ? e.what() + goOn() : std::string(e.what()));
      }
      if (latestStatus != record::kFinish && latestStatus != record::kStop)
        throw std::runtime_error("the run at " + o->target + " ended its metrics stream before it stopped" +
                                 goOn());
      return 0;
    });
  }
}

}  // namespace nf::cli
#endif

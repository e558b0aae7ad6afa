// Every file format of ours carries "format" + "version", and its reader refuses a newer version with an
// error naming the file, the version found and the newest supported, while still reading every older
// version we wrote (before formats were versioned, some had no "version" or spelled it "format_version").
#include <nlohmann/json.hpp>

#include "analysis/analysis_header.h"
#include "check.h"
#include "data/ioi.h"
#include "data/token_file.h"
#include "fixtures.h"
#include "io/atomic_file.h"
#include "io/file_format.h"
#include "io/json_read.h"
#include "model/config.h"
#include "run/metrics_log.h"
#include "run/run_directory.h"
#include "schedule/schedule.h"
#include "serve/steering_answers.h"
#include "train/checkpoint.h"
#include "train/settings.h"

using namespace nf;
using namespace nf::test;
using json = nlohmann::json;

namespace {

// What every "too new" error must say: the file, the version found and the newest this build reads.
#define REQUIRE_TOO_NEW(expr, file, format)                                                        \
  REQUIRE_THROWS_WITH(expr, file,                                                                  \
                      std::string(format.name) + " version " + std::to_string(format.version + 1), \
                      "reads versions up to " + std::to_string(format.version))

static_assert(kRunConfigFormat.version == 1 && kScheduleFormat.version == 1 &&
                  kCheckpointStateFormat.version == 1 && kMetricsFormat.version == 2 &&
                  kAnalysisFormat.version == 1,
              "a format's version changed: extend these tests with a file of the old version");

json bumped(json j) {
  j["version"] = j.value("version", 1) + 1;
  return j;
}

RunConfig someRun() {
  RunConfig c;
  c.model = "m";
  c.trainData = "t.bin";
  c.schedule = findPreset("tiny").schedule;
  return c;
}

}  // namespace

TEST_CASE(run_config_and_schedule_refuse_newer_versions) {
  const json config = toJson(someRun());
  REQUIRE_EQ(config["format"], "normfree-run");
  REQUIRE(runConfigFromJson(config, "run/config.json").schedule == someRun().schedule);
  REQUIRE_TOO_NEW(runConfigFromJson(bumped(config), "run/config.json"), "run/config.json", kRunConfigFormat);
  json other = config;
  other["format"] = "normfree-schedule";
  REQUIRE_THROWS_WITH(runConfigFromJson(other, "c.json"), "c.json",
                      "is a normfree-schedule file, not normfree-run");

  const json schedule = toJson(findPreset("tiny").schedule);
  REQUIRE_TOO_NEW(scheduleFromJson(bumped(schedule), "schedule.json"), "schedule.json", kScheduleFormat);
  json unmarked = schedule;  // written by hand: no format, no version
  unmarked.erase("format");
  unmarked.erase("version");
  REQUIRE(scheduleFromJson(unmarked, "mine.json") == findPreset("tiny").schedule);
  json invalid = schedule;
  invalid["version"] = "one";
  REQUIRE_THROWS_WITH(scheduleFromJson(invalid, "s.json"), "s.json",
                      "invalid normfree-schedule version \"one\"");
}

TEST_CASE(checkpoint_state_refuses_newer_versions) {
  TempDir dir;
  const std::string checkpoint = dir.path("checkpoints/step-0000004");
  std::filesystem::create_directories(checkpoint);
  json state = formatHeader(kCheckpointStateFormat);
  state.update({{"steps_done", 4},
                {"sampler_state", {"1", "2", "3", "4"}},
                {"trackers", json::object()},
                {"applied_events", json::array()},
                {"edits", json::array()}});
  writeFileAtomic(run::checkpointStatePath(checkpoint), state.dump());
  REQUIRE_EQ(readTrainingState(checkpoint).stepsDone, 4);
  REQUIRE_EQ(run::checkpointStep(checkpoint), 4);
  REQUIRE_EQ(run::checkpointStep(dir.path()), -1);  // not a checkpoint
  // A negative count (found by fuzz_checkpoint_state) would make resume pick a step that never ran.
  json negative = state;
  negative["steps_done"] = -5;
  writeFileAtomic(run::checkpointStatePath(checkpoint), negative.dump());
  REQUIRE_THROWS_WITH(run::checkpointStep(checkpoint), "state.json", "non-negative whole-number");
  writeFileAtomic(run::checkpointStatePath(checkpoint), bumped(state).dump());
  REQUIRE_TOO_NEW(readTrainingState(checkpoint), "state.json", kCheckpointStateFormat);
  REQUIRE_TOO_NEW(run::checkpointStep(checkpoint), "state.json", kCheckpointStateFormat);
  // Damaged values are refused, naming the file: "-1" and "12abc" had read as sampler words (2^64 − 1 and
  // 12: a resume no longer bit-exact, unsaid), 1.5 as a count, a misspelt key as left out.
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, json>>{{"sampler_state", {"-1", "2", "3", "4"}},
                                                 {"sampler_state", {"12abc", "2", "3", "4"}},
                                                 {"sampler_state", {"1", "2", "3"}},
                                                 {"metrics_bytes", 1.5},
                                                 {"metrics_bytes", -7},
                                                 {"applied_events", {{1, 2, 3}}},
                                                 {"world_sise", 2}}) {
    json damaged = state;
    damaged[key] = value;
    writeFileAtomic(run::checkpointStatePath(checkpoint), damaged.dump());
    REQUIRE_THROWS_WITH(readTrainingState(checkpoint), "state.json", "malformed checkpoint state");
  }
}

TEST_CASE(metrics_log_start_record_refuses_newer_versions) {
  const json start = metricsStartRecord();
  checkMetricsRecord(start, "run/metrics.jsonl");
  checkMetricsRecord(json{{"type", "start"}, {"mode", "remove"}}, "run/metrics.jsonl");  // before versioning
  // Version 1, cut at each resume, reads the same under version 2's rule (currentHistory).
  checkMetricsRecord(json{{"type", "start"}, {"format", kMetricsFormat.name}, {"version", 1}},
                     "run/metrics.jsonl");
  checkMetricsRecord(json{{"type", "step"}, {"version", 9}}, "run/metrics.jsonl");  // not a start record
  REQUIRE_TOO_NEW(checkMetricsRecord(bumped(start), "run/metrics.jsonl"), "run/metrics.jsonl",
                  kMetricsFormat);

  // A log on disk: its readers refuse a newer build's (the window's Runs tab, a followed run, a new start
  // in its folder), and no writer appends to it.
  TempDir dir;
  const std::string path = run::metricsPath(dir.path()), first = bumped(start).dump() + "\n";
  writeFileAtomic(path, first + json{{"type", "step"}, {"step", 1}}.dump() + "\n");
  MetricsFollower refusing(dir.path());
  REQUIRE_TOO_NEW(refusing.read(), path, kMetricsFormat);
  REQUIRE_TOO_NEW(refusing.read(), path, kMetricsFormat);  // again: its start record is not passed over
  REQUIRE_TOO_NEW((void)MetricsWriter(dir.path(), -1), path, kMetricsFormat);
  REQUIRE_EQ(readTextFile(path).size(), first.size() + 25);  // nothing appended
  REQUIRE_EQ(MetricsFollower(dir.path(), static_cast<int64_t>(first.size())).read().lines.size(), 1u);
  // So does a client of a served run (the window connected to it, steer watch).
  REQUIRE_THROWS_WITH(metricsPageFromJson({{"records", json::array({bumped(start)})}, {"next_offset", 10}}),
                      "metrics.jsonl", "reads versions up to");
  // A damaged record (a type or step of another type) is no kind of record to the history, not an error.
  const std::vector<json> damaged = {json{{"type", 5}}, json{{"type", "step"}, {"step", "1"}},
                                     json{{"type", "resume"}, {"step", "0"}}};
  REQUIRE_EQ(currentHistory(damaged).size(), 3u);
}

TEST_CASE(analysis_results_refuse_newer_versions_and_read_unversioned_ones) {
  AnalysisHeader header{"attention_sinks", "m", 3, "LayerNorm", "val.bin", 2, 16};
  json j = toJson(header);
  REQUIRE_EQ(j["format"], kAnalysisFormat.name);
  REQUIRE_EQ(analysisHeaderFromJson(j).step, 3);
  j.erase("format");  // written before results were versioned
  j.erase("version");
  REQUIRE_EQ(analysisHeaderFromJson(j).analysis, "attention_sinks");
  REQUIRE_THROWS_WITH(analysisHeaderFromJson(bumped(toJson(header))), "normfree-analysis version 2",
                      "up to version 1");
  json unnumbered = toJson(header);
  unnumbered["version"] = 0;  // had read as a current result
  REQUIRE_THROWS_WITH(analysisHeaderFromJson(unnumbered), "analysis result", "version 0");
}

TEST_CASE(model_config_block_refuses_newer_versions_and_reads_the_old_spelling) {
  ModelConfig config;
  config.shape = smallConfig();
  config.norms = NormState(config.shape.nLayer);
  json j = json::parse(configToJson(config));
  REQUIRE_EQ(j["normfree"]["format"], "normfree-model");
  REQUIRE(parseConfigJson(j.dump(), "m/config.json").shape == config.shape);
  j["normfree"]["version"] = 2;
  REQUIRE_TOO_NEW(parseConfigJson(j.dump(), "m/config.json"), "m/config.json", kModelBlockFormat);
  // Written before formats carried "format" + "version" (the bundled model's config.json, for one).
  json legacy = j;
  legacy["normfree"].erase("format");
  legacy["normfree"].erase("version");
  legacy["normfree"]["format_version"] = 1;
  REQUIRE(parseConfigJson(legacy.dump(), "m/config.json").shape == config.shape);
  legacy["normfree"]["format_version"] = 2;
  REQUIRE_TOO_NEW(parseConfigJson(legacy.dump(), "m/config.json"), "m/config.json", kModelBlockFormat);
}

// A slip in the block would otherwise run an LN-free model with the family's norms, unsaid.
TEST_CASE(model_config_block_refuses_unknown_fields_and_a_false_layernorm_free) {
  ModelConfig config;
  config.shape = smallConfig();
  config.norms = NormState(config.shape.nLayer);
  config.norms.setAll({NormKind::FakeLN, 2.5, 2.5, false, false});
  const json j = json::parse(configToJson(config));
  REQUIRE(parseConfigJson(j.dump(), "m/config.json").norms.isLayerNormFree());
  json misspelt = j;
  misspelt["normfree"]["site"] = misspelt["normfree"]["sites"];
  misspelt["normfree"].erase("sites");
  REQUIRE_THROWS_WITH(parseConfigJson(misspelt.dump(), "m/config.json"), "m/config.json",
                      "unknown field \"site\"");
  json siteTypo = j;
  siteTypo["normfree"]["sites"]["LN_f"]["scal"] = 3.0;
  REQUIRE_THROWS_WITH(parseConfigJson(siteTypo.dump(), "m/config.json"), "m/config.json",
                      "unknown field \"scal\"");
  json missing = j;  // a site left out keeps the family's norm, which the block's claim contradicts
  missing["normfree"]["sites"].erase("LN_f");
  REQUIRE_THROWS_WITH(parseConfigJson(missing.dump(), "m/config.json"), "m/config.json",
                      "layernorm_free is true but its sites say otherwise");
  missing["normfree"].erase("layernorm_free");  // without the claim, a partial list stays readable
  REQUIRE(!parseConfigJson(missing.dump(), "m/config.json").norms.isLayerNormFree());
  missing["normfree"]["folded"] = true;  // every header would have called it "LN-free (folded)"
  REQUIRE_THROWS_WITH(parseConfigJson(missing.dump(), "m/config.json"), "m/config.json",
                      "normfree.folded is true but its sites divide by each token's scale");
}

TEST_CASE(token_file_sidecar_refuses_newer_versions_and_reads_unversioned_ones) {
  TempDir dir;
  const std::string bin = dir.path("t.bin");
  writeTokens(bin, {1, 2, 3, 4}, 50);
  const std::string sidecar = tokenFileSidecarPath(bin);
  json j = json::parse(readTextFile(sidecar));
  REQUIRE_EQ(j["version"], 1);
  j.erase("version");  // as written before formats were versioned
  writeFileAtomic(sidecar, j.dump());
  REQUIRE_EQ(TokenFile::open(bin).size(), 4);
  writeFileAtomic(sidecar, bumped(j).dump());
  REQUIRE_TOO_NEW(TokenFile::open(bin), "t.bin.json", kTokenSidecarFormat);
  // A misspelt key had switched off what it names unsaid (here the check of another tokenizer's data);
  // a null count, the check of a truncated file.
  json misspelt = j;
  misspelt["tokenizer_fingerprnt"] = "abc";
  writeFileAtomic(sidecar, misspelt.dump());
  REQUIRE_THROWS_WITH(TokenFile::open(bin), "t.bin.json", "unknown field \"tokenizer_fingerprnt\"");
  json unsized = j;
  unsized["tokens"] = nullptr;
  writeFileAtomic(sidecar, unsized.dump());
  REQUIRE_THROWS_WITH(TokenFile::open(bin), "t.bin.json", "'tokens' is null");
  // Every key this format has ever written reads.
  json every = j;
  every.update({{"bos_token_id", 3},
                {"documents", 1},
                {"tokenizer", "tok"},
                {"tokenizer_fingerprint", "f"},
                {"sources", {"a.txt"}}});
  writeFileAtomic(sidecar, every.dump());
  REQUIRE_EQ(TokenFile::open(bin).size(), 4);
}

TEST_CASE(ioi_prompt_set_refuses_newer_versions) {
  const json set{{"format", "normfree-ioi"}, {"version", 2}, {"prompts", json::array()}};
  REQUIRE_TOO_NEW(ioiPromptSetFromJson(set, "ioi.json"), "ioi.json", kIoiFormat);
  REQUIRE_THROWS_WITH(ioiPromptSetFromJson(json{{"prompts", json::array()}}, "ioi.json"), "ioi.json",
                      "no \"format\" field");
}

TEST_MAIN()

// The run directory module: names inside a run, the tokenizer that goes with a model, run or checkpoint,
// and following metrics.jsonl as another process writes it (partial lines, truncation on resume).
#include <fstream>
#include <nlohmann/json.hpp>

#include "check.h"
#include "fixtures.h"
#include "io/atomic_file.h"
#include "run/metrics_log.h"
#include "run/run_directory.h"

using namespace nf;
using namespace nf::test;
using json = nlohmann::json;

namespace {

void append(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << bytes;
}

void touchTokenizer(const std::string& folder) {
  std::filesystem::create_directories(folder);
  writeFileAtomic(folder + "/vocab.json", "{}");
  writeFileAtomic(folder + "/merges.txt", "#version: 0.2\n");
}

}  // namespace

TEST_CASE(checkpoint_names_sort_by_step_and_temporaries_are_recognised) {
  REQUIRE_EQ(run::checkpointName(42), "step-0000042");
  REQUIRE(run::checkpointName(9) < run::checkpointName(10));
  REQUIRE(run::isCheckpointName(run::checkpointName(3)));
  REQUIRE(!run::isCheckpointName(run::unfinishedCheckpointName(3, 77)));
  REQUIRE(run::isUnfinishedCheckpointName(run::unfinishedCheckpointName(3, 77)));
  REQUIRE(run::isUnfinishedCheckpointName(run::replacedCheckpointName(3, 77)));
  REQUIRE(!run::isUnfinishedCheckpointName("latest"));
  REQUIRE_EQ(run::checkpointPath("r", 7), "r/checkpoints/step-0000007");
}

TEST_CASE(tokenizer_of_a_model_run_or_checkpoint_is_found) {
  TempDir dir;
  touchTokenizer(dir.path("start"));
  const std::string runDir = dir.path("run");
  std::filesystem::create_directories(run::checkpointPath(runDir, 5));
  writeFileAtomic(run::configPath(runDir), json{{"model", dir.path("start")}}.dump());
  writeFileAtomic(run::metricsPath(runDir), "");
  REQUIRE(run::isRunDirectory(runDir));
  REQUIRE(!run::isRunDirectory(dir.path("start")));
  REQUIRE_EQ(run::tokenizerFolder(dir.path("start")), dir.path("start"));
  REQUIRE_EQ(run::tokenizerFolder(runDir), dir.path("start"));  // the model it started from
  REQUIRE_EQ(run::tokenizerFolder(run::checkpointPath(runDir, 5)),
             dir.path("start"));  // a checkpoint's run's
  touchTokenizer(run::finalModelPath(runDir));
  REQUIRE_EQ(run::tokenizerFolder(runDir), run::finalModelPath(runDir));  // its own final model first
  REQUIRE_EQ(run::tokenizerFolder(dir.path("nowhere")), "");
}

TEST_CASE(metrics_follower_reads_complete_lines_and_restarts_after_truncation) {
  TempDir dir;
  const std::string path = run::metricsPath(dir.path());
  MetricsFollower follower(dir.path());
  REQUIRE(follower.read().lines.empty());  // no file yet
  append(path, "{\"type\":\"start\"}\n{\"type\":\"st");
  MetricsFollower::NewLines got = follower.read();
  REQUIRE(!got.restarted);
  REQUIRE(got.lines == std::vector<std::string>{"{\"type\":\"start\"}"});  // the partial line waits
  append(path, "ep\",\"step\":1}\n");
  got = follower.read();
  REQUIRE(got.lines == std::vector<std::string>{"{\"type\":\"step\",\"step\":1}"});
  REQUIRE(follower.read().lines.empty());
  // A record that did not fit, cut off again by its writer after this reader saw part of it: the log
  // goes on, not over (every follower had taken it for a new run and read it all again).
  const auto complete = std::filesystem::file_size(path);
  append(path, "{\"type\":\"ed");
  REQUIRE(follower.read().lines.empty());
  std::filesystem::resize_file(path, complete);
  got = follower.read();
  REQUIRE(!got.restarted && got.lines.empty());
  append(path, "{\"type\":\"continue\"}\n");
  REQUIRE(follower.read().lines == std::vector<std::string>{"{\"type\":\"continue\"}"});
  // A new run in the folder, grown to a line end where the old log's complete lines ended: a new run still.
  const auto before = std::filesystem::file_size(path);
  append(path, "{\"type\":\"ed");
  REQUIRE(follower.read().lines.empty());
  writeFileAtomic(path, std::string(before - 1, 'x') + "\n{");
  got = follower.read();
  REQUIRE(got.restarted);
  // A resumed run cuts the log back to its checkpoint and writes on.
  writeFileAtomic(path, "{\"type\":\"start\"}\n");
  got = follower.read();
  REQUIRE(got.restarted);
  REQUIRE(got.lines == std::vector<std::string>{"{\"type\":\"start\"}"});
}

TEST_CASE(metrics_writer_appends_records_and_hands_them_to_listeners) {
  TempDir dir;
  {
    MetricsWriter writer(dir.path(), 0);
    auto queue = writer.subscribe();
    writer.write({{"type", "step"}, {"step", 1}});
    writer.write({{"type", "step"}, {"step", 2}});
    const std::vector<std::string> drained = queue->drain();
    REQUIRE_EQ(drained.size(), 2u);
    REQUIRE_EQ(json::parse(drained[1])["step"], 2);
    REQUIRE(json::parse(drained[0]).contains("time"));
    REQUIRE(queue->drain().empty());
  }
  const int64_t firstRecord = static_cast<int64_t>(readTextFile(run::metricsPath(dir.path())).find('\n')) + 1;
  MetricsWriter resumed(dir.path(), firstRecord);  // keeps the first record only
  resumed.write({{"type", "resume"}});
  const std::vector<std::string> lines = MetricsFollower(dir.path()).read().lines;
  REQUIRE_EQ(lines.size(), 2u);
  REQUIRE_EQ(json::parse(lines[0])["step"], 1);
  REQUIRE_EQ(json::parse(lines[1])["type"], "resume");
}

TEST_MAIN()

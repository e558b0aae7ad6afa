// A multi-hour run against a hostile world (issue 16): a disk that fills during a checkpoint, files that
// would load wrongly, hang or never end, numbers that would be converted silently, events that cannot take
// effect, and a run that diverges. Each case as a user met it, with the error it must now get (or the
// correct result).
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <limits>
#include <set>
#include <thread>

#include "cli_process.h"
#include "eval/evaluate.h"
#include "fixtures.h"
#include "io/atomic_file.h"
#include "io/file_format.h"
#include "io/safetensors.h"
#include "model/hf_checkpoint.h"
#include "run/metrics_log.h"
#include "run/run_directory.h"
#include "run/run_lock.h"
#include "run/source_model.h"
#include "run_fixtures.h"
#include "text/bpe_tokenizer.h"  // the merges.txt cases are in test_tokenizer.cpp
#include "train/checkpoint.h"
#include "train/divergence.h"
#include "train/optimizer.h"
#include "train/trainer.h"
#include "util/bytes.h"

using namespace nf;
using namespace nf::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Caps the size of every file this process writes until destroyed: write() then fails with EFBIG part-way
// through a file, as it fails with ENOSPC on a full disk (which a test cannot make without privileges).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(uintmax_t bytes) {
    std::signal(SIGXFSZ, SIG_IGN);  // an error from write(), not a signal
    ::getrlimit(RLIMIT_FSIZE, &m_old);
    rlimit limited = m_old;
    limited.rlim_cur = static_cast<rlim_t>(bytes);
    ::setrlimit(RLIMIT_FSIZE, &limited);
  }
  ~FileSizeLimit() { ::setrlimit(RLIMIT_FSIZE, &m_old); }

 private:
  rlimit m_old{};
};

// What a writer leaves behind: temporary files and unfinished or moved-aside checkpoint folders.
std::vector<std::string> leftovers(const std::string& runDir) {
  std::vector<std::string> found;
  for (const std::string& dir : {runDir, run::checkpointsPath(runDir)})
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (name.find(".tmp-") != std::string::npos || run::isUnfinishedCheckpointName(name))
        found.push_back(entry.path().string());
    }
  return found;
}

// A valid model folder's config.json with one field changed (a JSON pointer) or removed (null value).
std::string configWith(const TempDir& dir, const std::string& pointer, const json& value) {
  const std::string folder = dir.path("model");
  if (!fs::exists(folder)) {
    CausalLM model = randomModel(smallConfig());
    model->norms().at({SiteKind::V, 1}) = {NormKind::FakeLN, 1.25, 1.0, false, false};
    saveModel(*model, folder);
  }
  json config = json::parse(readTextFile(folder + "/config.json"));
  if (value.is_null())
    config.at(json::json_pointer(pointer).parent_pointer()).erase(json::json_pointer(pointer).back());
  else
    config[json::json_pointer(pointer)] = value;
  return config.dump();
}

ModelConfig parsedWith(const TempDir& dir, const std::string& pointer, const json& value) {
  return parseConfigJson(configWith(dir, pointer, value), "config.json");
}

// smallRun's settings for a run of `steps` steps: its schedule without the events past them.
RunConfig shortRun(const TempDir& dir, int64_t steps) {
  RunConfig config = smallRun(dir);
  config.optimizer.maxSteps = steps;
  auto& events = config.schedule.events;
  events.erase(std::remove_if(events.begin(), events.end(), [&](const auto& e) { return e.step >= steps; }),
               events.end());
  return config;
}

}  // namespace

// --- storage faults ---------------------------------------------------------------------------------------

TEST_CASE(a_full_disk_during_checkpoints_is_a_clean_error_that_loses_nothing) {
  TempDir dir;
  RunConfig config = shortRun(dir, 12);
  config.checkpointInterval = 4;
  const std::string runDir = dir.path("run");
  auto trainer = Trainer::start(runDir, config);
  // Once the checkpoint of step 4 is written, files may grow to 1.5× its weights: the weights still fit,
  // optimizer.pt (AdamW's two moments, twice their size) does not — the write that used to abort the
  // process inside LibTorch's serializer.
  std::unique_ptr<FileSizeLimit> limit;
  std::string error;
  try {
    trainer->run([&](const Progress& p) {
      if (p.done != 4 || limit) return;
      const uintmax_t weights = fs::file_size(run::checkpointPath(runDir, 4) + "/model.safetensors");
      REQUIRE(fs::file_size(run::metricsPath(runDir)) < weights);  // the log itself keeps fitting
      limit = std::make_unique<FileSizeLimit>(weights + weights / 2);
    });
  } catch (const FileError& e) {
    error = e.what();
  }
  limit.reset();
  // The checkpoint of step 8 failed and training went on (a warning says so); that of the last step,
  // which the end of the run needs, ended run() with an error naming the file, the problem and what is kept:
  // the trained model too, whose weights fit where the optimizer's moments did not.
  REQUIRE_MSG(
      error.find("optimizer.pt") != std::string::npos && error.find("File too large") != std::string::npos &&
          error.find("newest intact checkpoint is " + run::checkpointPath(runDir, 4)) != std::string::npos &&
          error.find("The trained model was saved all the same: " + run::finalModelPath(runDir)) !=
              std::string::npos,
      error);
  const std::string trained = readTextFile(run::finalModelPath(runDir) + "/model.safetensors");
  REQUIRE(trained != readTextFile(run::checkpointPath(runDir, 4) + "/model.safetensors"));
  std::vector<nlohmann::json> warnings = records(runDir, "warning");
  REQUIRE_EQ(warnings.at(0)["code"], "sites_kept");  // the short schedule leaves LN_v and LN_f alone
  warnings.erase(warnings.begin());
  REQUIRE_EQ(warnings.size(), 1u);
  REQUIRE_EQ(warnings[0]["code"], "checkpoint_failed");
  REQUIRE_EQ(warnings[0]["step"].get<int64_t>(), int64_t{8});
  REQUIRE(warnings[0]["message"].get<std::string>().find("training goes on") != std::string::npos);
  REQUIRE_EQ(records(runDir, "step").size(), 12u);
  // The previous checkpoint is newest and intact, and nothing of the failed ones is left on the disk.
  REQUIRE_EQ(run::latestCheckpoint(runDir), run::checkpointPath(runDir, 4));
  REQUIRE_EQ(readTrainingState(run::latestCheckpoint(runDir)).stepsDone, int64_t{4});
  REQUIRE(loadModel(run::latestCheckpoint(runDir))->config() == smallConfig());
  REQUIRE(leftovers(runDir).empty());
  // Space is back: the run resumes from step 4 and finishes, once the trained model is moved aside (training
  // from step 4 would leave it out of date; it is not replaced unasked).
  trainer.reset();
  REQUIRE_THROWS_WITH(Trainer::resume(runDir), run::finalModelPath(runDir), "move it elsewhere to keep it");
  fs::rename(run::finalModelPath(runDir), dir.path("trained"));
  auto resumed = Trainer::resume(runDir);
  REQUIRE_EQ(resumed->stepsDone(), int64_t{4});
  REQUIRE(resumed->run());
  REQUIRE(fs::exists(run::finalModelPath(runDir) + "/model.safetensors"));
  REQUIRE(leftovers(runDir).empty());
}

// A record that did not fit (a full disk) is cut off again: its part had run into the next record once
// space came back, and readers lost both (a served run's edit and the continue after it).
TEST_CASE(a_metrics_record_that_does_not_fit_leaves_no_part_behind) {
  TempDir dir;
  const std::string runDir = dir.path("run");
  fs::create_directories(runDir);
  MetricsWriter writer(runDir, 0);
  writer.write(metricsStartRecord());
  const uintmax_t fits = fs::file_size(run::metricsPath(runDir));
  {
    FileSizeLimit limit(fits + 10);
    REQUIRE_THROWS_WITH(writer.write({{"type", "edit"}, {"at_step", 40}, {"changes", json::array()}}),
                        "write failed");
  }
  REQUIRE_EQ(fs::file_size(run::metricsPath(runDir)), fits);
  writer.write({{"type", "continue"}, {"step", 40}});
  const auto kept = records(runDir, "continue");
  REQUIRE_EQ(kept.size(), 1u);
  REQUIRE_EQ(writer.bytesWritten(), static_cast<int64_t>(fs::file_size(run::metricsPath(runDir))));
}

// An edit whose record does not fit in the log is made all the same (schedule.json holds it): it had been
// answered as failed, so that a retry made it twice or was refused as clashing with itself.
TEST_CASE(an_edit_is_made_when_its_record_does_not_fit_in_the_log) {
  TempDir dir;
  const std::string runDir = dir.path("run");
  auto trainer = Trainer::start(runDir, shortRun(dir, 12));
  trainer->run([&](const Progress& p) {  // a log longer than the schedule; event 2 (step 7) still to come
    if (p.done == 3) trainer->requestStop();
  });
  const uintmax_t log = fs::file_size(run::metricsPath(runDir));
  REQUIRE(fs::file_size(run::schedulePath(runDir)) + 200 < log);  // a schedule with one more event fits
  EditResult moved;
  {
    FileSizeLimit limit(log + 10);
    moved = trainer->moveEvent(2, 9);
  }
  REQUIRE(moved.accepted);
  REQUIRE_EQ(fs::file_size(run::metricsPath(runDir)), log);  // no part of the record
  for (const Schedule& s : {trainer->schedule(), readScheduleFile(run::schedulePath(runDir))}) {
    const auto e = std::find_if(s.events.begin(), s.events.end(), [](const auto& e) { return e.id == 2; });
    REQUIRE(e != s.events.end() && e->step == 9);
  }
}

// A run's checkpoints belong to it: `latest` may only name a step folder beside it, and a checkpoint's state
// must be of the step its folder says; a lost pointer is recovered from the newest complete checkpoint.
TEST_CASE(a_run_resumes_only_from_its_own_checkpoints_and_survives_a_lost_pointer) {
  TempDir dir;
  RunConfig config = shortRun(dir, 4);
  config.checkpointInterval = 2;
  const std::string runDir = dir.path("run"), other = dir.path("other");
  REQUIRE(Trainer::start(runDir, config)->run());
  REQUIRE(Trainer::start(other, config)->run());
  const std::string pointer = run::latestPointerPath(runDir);
  writeFileAtomic(pointer, "../../other/checkpoints/" + run::checkpointName(4) + "\n");
  REQUIRE_THROWS_WITH(run::latestCheckpoint(runDir), pointer, "not a checkpoint of this run");
  REQUIRE_THROWS_WITH(Trainer::resume(runDir), pointer, "not a checkpoint of this run");

  fs::remove(pointer);
  REQUIRE_EQ(run::latestCheckpoint(runDir), run::checkpointPath(runDir, 4));
  fs::remove(run::checkpointStatePath(run::checkpointPath(runDir, 4)));  // step 4 incomplete: not chosen
  REQUIRE(run::latestCheckpoint(runDir) != run::checkpointPath(runDir, 4));

  // The weights or optimizer state of another run's checkpoint (same shapes, same step) copied in: refused
  // by name, never trained on (both runs' files are alike in everything but their checkpoint id).
  const std::string mine = run::checkpointPath(runDir, 2), theirs = run::checkpointPath(other, 2);
  const std::string weights = mine + "/model.safetensors", optimizerState = run::optimizerStatePath(mine);
  fs::copy_file(weights, dir.path("weights.keep"));
  fs::copy_file(theirs + "/model.safetensors", weights, fs::copy_options::overwrite_existing);
  REQUIRE_THROWS_WITH(readTrainingState(mine), weights, "not the weight file written with");
  REQUIRE_THROWS_WITH(Trainer::resume(runDir), weights, "another checkpoint or run");
  fs::copy_file(dir.path("weights.keep"), weights, fs::copy_options::overwrite_existing);
  fs::copy_file(run::optimizerStatePath(theirs), optimizerState, fs::copy_options::overwrite_existing);
  REQUIRE_THROWS_WITH(Trainer::resume(runDir), optimizerState, "not the optimizer state written with");

  // steps_done lowered by hand in a complete checkpoint: refused, not retrained from step 1.
  const std::string kept = run::checkpointPath(other, 4), state = run::checkpointStatePath(kept);
  json edited = json::parse(readTextFile(state));
  edited["steps_done"] = 1;
  writeFileAtomic(state, edited.dump());
  REQUIRE_THROWS_WITH(readTrainingState(kept), state, "says steps_done 1", run::checkpointName(4));
  REQUIRE_THROWS_WITH(Trainer::resume(other), "says steps_done 1");

  // A whole checkpoint folder of a run of another model copied in: refused by the shape it holds (its files
  // agree with each other, so no checkpoint id tells).
  RunConfig wider = config;
  wider.model = dir.path("wider");
  ModelShape shape = loadConfigFile(config.model + "/config.json").shape;
  shape.nEmbd *= 2;
  saveModel(*randomModel(shape), wider.model);
  const std::string third = dir.path("third");
  REQUIRE(Trainer::start(third, wider)->run());
  fs::remove_all(kept);
  fs::copy(run::checkpointPath(third, 4), kept, fs::copy_options::recursive);
  REQUIRE_THROWS_WITH(Trainer::resume(other), kept, "was not written by this run", "source/config.json");

  // That wider model's optimizer state stamped with this run's checkpoint id: LibTorch's load pairs saved
  // states with parameters by order and checks nothing, and the resume had trained on towards a step that
  // failed; now refused by name before any step.
  const std::string widerCheckpoint = run::checkpointPath(third, 4);
  CausalLM widerModel = loadModel(widerCheckpoint);
  const auto widerOptimizer = makeOptimizer(*widerModel, wider.optimizer);
  loadOptimizerState(*widerOptimizer, widerCheckpoint, readTrainingState(widerCheckpoint));
  torch::serialize::OutputArchive archive;
  archive.write(kCheckpointIdKey, c10::IValue(readTrainingState(mine).id));
  widerOptimizer->save(archive);
  archive.save_to(optimizerState);
  REQUIRE_THROWS_WITH(Trainer::resume(runDir), optimizerState, "cannot be trained on", "another model's");
  // (That archive had no format of ours, as before optimizer.pt had one: read as version 1.) One of a newer
  // layout is refused by its version, before LibTorch reads it.
  torch::serialize::OutputArchive newer;
  newer.write("normfree_format", c10::IValue(std::string("normfree-optimizer")));
  newer.write("normfree_version", c10::IValue(int64_t{2}));
  newer.write(kCheckpointIdKey, c10::IValue(readTrainingState(mine).id));
  newer.save_to(optimizerState);
  REQUIRE_THROWS_WITH(Trainer::resume(runDir), optimizerState, "normfree-optimizer version 2");
}

// A rollback to a checkpoint written before the first step (asked for while paused there) loads an optimizer
// state with no moments into the live optimizer: LibTorch's load had kept the diverged stretch's moments.
TEST_CASE(an_optimizer_state_of_step_0_leaves_no_moments_behind) {
  TempDir dir;
  const RunConfig config = smallRun(dir);
  CausalLM model = loadModel(config.model);
  const auto optimizer = makeOptimizer(*model, config.optimizer);
  fs::create_directories(run::checkpointsPath(dir.path("run")));
  const std::string folder = writeCheckpoint(dir.path("run"), *model, *optimizer, TrainingState{}, 2).folder;
  for (torch::Tensor& p : model->parameters()) p.mutable_grad() = torch::ones_like(p);
  optimizer->step();
  REQUIRE(!optimizer->state().empty());
  loadOptimizerState(*optimizer, folder, readTrainingState(folder));
  REQUIRE(optimizer->state().empty());
}

TEST_CASE(leftovers_of_dead_writers_are_cleared_and_a_checkpoint_moved_aside_comes_back) {
  TempDir dir;
  RunConfig config = shortRun(dir, 4);
  config.checkpointInterval = 2;
  const std::string runDir = dir.path("run");
  REQUIRE(Trainer::start(runDir, config)->run());
  const std::string checkpoints = run::checkpointsPath(runDir);
  const long dead = deadProcess(), alive = ::getppid();
  // A writer that died between moving step 4 aside (to replace it) and renaming its replacement.
  fs::rename(run::checkpointPath(runDir, 4), checkpoints + "/" + run::replacedCheckpointName(4, dead));
  fs::create_directories(checkpoints + "/" + run::unfinishedCheckpointName(6, dead));
  writeFileAtomic(runDir + "/schedule.json.tmp-" + std::to_string(dead), "half");
  // Another process, alive, writing this run now: its files stay.
  fs::create_directories(checkpoints + "/" + run::unfinishedCheckpointName(6, alive));
  std::ofstream(runDir + "/notes.tmp-draft") << "not ours: not a process id";
  // Ones that died replacing final/ and source/: each moved aside, its successor half-written beside it,
  // and a file of source/ half-written by an older version (these had stayed for good, weights among them).
  const std::string final = run::finalModelPath(runDir), source = run::sourceModelPath(runDir),
                    deadSuffix = "-" + std::to_string(dead);
  writeFileAtomic(source + "/model.safetensors.tmp" + deadSuffix, "half");
  for (const std::string& folder : {final, source}) {
    fs::rename(folder, folder + ".old" + deadSuffix);
    fs::create_directories(folder + ".tmp" + deadSuffix);
    writeFileAtomic(folder + ".tmp" + deadSuffix + "/config.json", "{}");
  }

  // "latest" names a folder that is gone: the newest complete one stands in until step 4 is back.
  REQUIRE_EQ(run::latestCheckpoint(runDir), run::checkpointPath(runDir, 2));
  REQUIRE_EQ(clearDeadWriters(runDir), 8);
  REQUIRE(fs::exists(final + "/model.safetensors") && !fs::exists(final + ".tmp" + deadSuffix));
  REQUIRE(fs::exists(source + "/source.json") && !fs::exists(source + ".tmp" + deadSuffix));
  REQUIRE(!fs::exists(source + "/model.safetensors.tmp" + deadSuffix));
  REQUIRE_EQ(run::latestCheckpoint(runDir), run::checkpointPath(runDir, 4));
  REQUIRE(fs::exists(checkpoints + "/" + run::unfinishedCheckpointName(6, alive)));
  REQUIRE(fs::exists(runDir + "/notes.tmp-draft"));
  REQUIRE(!fs::exists(checkpoints + "/" + run::unfinishedCheckpointName(6, dead)));
  REQUIRE(!fs::exists(runDir + "/schedule.json.tmp-" + std::to_string(dead)));
}

// Outside a run directory (an export's --out, a tokenizer folder) a kill leaves the same leftovers: a full
// model copy each, which had stayed for good. The next writer there removes the dead ones' alone.
TEST_CASE(dead_writers_leftovers_go_wherever_they_were_left) {
  TempDir dir;
  const std::string dead = std::to_string(deadProcess()), alive = std::to_string(::getppid());
  // The user's own files stay whatever their names: only the writer's own names are its leftovers.
  for (const std::string& name :
       std::vector<std::string>{"folded.tmp-" + dead, "standard.old-" + dead, "vocab.json.tmp-" + dead,
                                "folded.tmp-" + alive, "notes.tmp-draft", "folded", "backup.old-" + dead})
    fs::create_directories(dir.path(name));
  REQUIRE_EQ(removeDeadWritersLeftovers(dir.path(), {"folded", "standard", "vocab.json"}), 3);
  for (const std::string& name :
       std::vector<std::string>{"folded.tmp-" + alive, "notes.tmp-draft", "folded", "backup.old-" + dead})
    REQUIRE_MSG(fs::exists(dir.path(name)), name);
  REQUIRE_EQ(std::distance(fs::directory_iterator(dir.path()), {}), 4);
}

// --- inputs that are not regular files --------------------------------------------------------------------

TEST_CASE(fifos_devices_and_directories_are_refused_by_name_without_blocking) {
  TempDir dir;
  CausalLM model = randomModel(smallConfig());
  saveModel(*model, dir.path("m"));
  // A FIFO in place of the weights blocked the reader forever; a link to /dev/zero was read without end.
  fs::remove(dir.path("m/model.safetensors"));
  REQUIRE(::mkfifo(dir.path("m/model.safetensors").c_str(), 0600) == 0);
  REQUIRE_THROWS_WITH(loadModel(dir.path("m")), "m/model.safetensors", "is a FIFO", "not a regular file");
  fs::remove(dir.path("m/config.json"));
  fs::create_symlink("/dev/zero", dir.path("m/config.json"));
  REQUIRE_THROWS_WITH(loadConfigFile(dir.path("m/config.json")), "m/config.json", "is a character device");
  fs::create_directories(dir.path("tok/merges.txt"));
  std::ofstream(dir.path("tok/vocab.json")) << "{\"a\": 0}";
  REQUIRE_THROWS_WITH(BpeTokenizer::load(dir.path("tok")), "tok/merges.txt", "is a directory");
  // A text file is read only up to a size that such a file can have.
  writeFileAtomic(dir.path("big.json"), std::string(2048, ' '));
  REQUIRE_THROWS_WITH(readTextFile(dir.path("big.json"), 1024), "big.json", "more than the");
}

// --- files that loaded wrongly ----------------------------------------------------------------------------

TEST_CASE(a_safetensors_header_length_lowered_into_its_padding_is_refused) {
  // The header's JSON followed by the spaces that pad it; its length lowered by 3 still parses, and every
  // tensor would be read 3 bytes early (all-NaN logits). The tensors must tile the data exactly.
  TempDir dir;
  const std::string header =
      R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})" + std::string(5, ' ');
  const uint64_t lowered = header.size() - 3;
  {
    std::ofstream out(dir.path("w.safetensors"), std::ios::binary);
    out.write(reinterpret_cast<const char*>(&lowered), 8);
    out << header << std::string(8, '\x01');
  }
  REQUIRE_THROWS_WITH(SafetensorsFile::open(dir.path("w.safetensors")), "w.safetensors",
                      "3 bytes after the last tensor", "wrong header length");
  // A gap between two tensors is refused the same way.
  const std::string gap =
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})";
  {
    std::ofstream out(dir.path("gap.safetensors"), std::ios::binary);
    const uint64_t n = gap.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << gap << std::string(12, '\0');
  }
  REQUIRE_THROWS_WITH(SafetensorsFile::open(dir.path("gap.safetensors")), "4 unused bytes before tensor 'b'");
  // The header must be UTF-8.
  const std::string latin1 = "{\"w\xe9\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}";
  {
    std::ofstream out(dir.path("latin1.safetensors"), std::ios::binary);
    const uint64_t n = latin1.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << latin1 << std::string(4, '\0');
  }
  REQUIRE_THROWS_WITH(SafetensorsFile::open(dir.path("latin1.safetensors")), "latin1.safetensors",
                      "not valid JSON");
}

TEST_CASE(fakeln_scales_and_mixes_are_checked_not_taken) {
  TempDir dir;
  REQUIRE_EQ(parsedWith(dir, "/normfree/sites/LN_v.1/scale", 1.25).norms.at({SiteKind::V, 1}).scale, 1.25);
  // 1e-320 is 0 as a float32: a division by zero in every forward pass.
  REQUIRE_THROWS_WITH(parsedWith(dir, "/normfree/sites/LN_v.1/scale", 1e-320), "config.json", "LN_v.1",
                      "scale must be a positive float32 number");
  REQUIRE_THROWS_WITH(parsedWith(dir, "/normfree/sites/LN_v.1/scale", 1e39), "positive float32 number");
  REQUIRE_THROWS_WITH(parsedWith(dir, "/normfree/sites/LN_v.1/real_mix", 1e308),
                      "real_mix must lie in [0, 1]");
  REQUIRE_THROWS_WITH(parsedWith(dir, "/normfree/sites/LN_v.1/real_mix", -3), "real_mix must lie in [0, 1]");
  // A FakeLN that lost its scale used to divide by 1.0, silently.
  REQUIRE_THROWS_WITH(parsedWith(dir, "/normfree/sites/LN_v.1/scale", nullptr), "config.json",
                      "'scale' is missing");
  REQUIRE_THROWS_WITH(parsedWith(dir, "/normfree/sites/LN_v.1/scale", "2"),
                      "'scale' is missing or not a number");
  REQUIRE_THROWS_WITH(parsedWith(dir, "/normfree/folded", 1), "'folded' is missing or not true or false");
}

TEST_CASE(shape_fields_are_whole_numbers_in_range_never_converted) {
  TempDir dir;
  REQUIRE_THROWS_WITH(parsedWith(dir, "/n_head", 1.5), "config.json", "n_head", "1.5");
  REQUIRE_THROWS_WITH(parsedWith(dir, "/n_head", true), "config.json", "n_head", "true");
  const uint64_t wraps = (uint64_t{1} << 32) + 2;  // was read as 2
  for (const char* field : {"/n_layer", "/vocab_size", "/n_embd"})
    REQUIRE_THROWS_WITH(parsedWith(dir, field, wraps), "config.json", field + 1, std::to_string(wraps));
  // A shape that fits 32 bits but no memory is refused before anything is allocated.
  REQUIRE_THROWS_WITH(parsedWith(dir, "/n_layer", 100000000), "config.json",
                      "n_layer = 100000000 is implausible");
  ModelShape huge = smallConfig();
  huge.nLayer = 2048;
  huge.nEmbd = 5120;
  huge.nHead = 40;
  huge.nPositions = 1024;
  huge.validate("huge");  // 6.4e11 parameters: a shape the engine takes, on a machine with the memory
  REQUIRE_THROWS_WITH(makeModel(huge), "parameters", "of memory available");
}

TEST_CASE(schedule_and_run_config_numbers_are_never_converted) {
  // One event {step 3, LN_mlp, layer 1} with `key` set to `value`, read as a schedule file.
  auto scheduleWith = [](const std::string& key, const json& value) {
    json event{{"step", 3}, {"site", "LN_mlp"}, {"layer", 1}};
    if (!key.empty()) event[key] = value;
    return scheduleFromJson(json{{"events", json::array({event})}}, "schedule.json");
  };
  REQUIRE_EQ(scheduleWith("", nullptr).events.at(0).layer, 1);
  REQUIRE_THROWS_WITH(scheduleWith("layer", (uint64_t{1} << 32) + 1), "schedule.json", "event 0", "'layer'",
                      "4294967297");                                         // was read as layer 1
  REQUIRE_THROWS_WITH(scheduleWith("layer", uint64_t{1} << 63), "'layer'");  // was read as layer 0
  REQUIRE_THROWS_WITH(scheduleWith("step", 2.7), "'step'", "2.7");           // was read as step 2
  REQUIRE_THROWS_WITH(scheduleWith("id", "7"), "'id'");
  TempDir dir;
  json config = toJson(smallRun(dir));
  config["optimizer"]["micro_batch"] = 1.5;
  REQUIRE_THROWS_WITH(runConfigFromJson(config, "config.json"), "config.json", "'optimizer.micro_batch'",
                      "1.5");
  config = toJson(smallRun(dir));
  config["removal"]["pos0_treatment"] = 1;
  REQUIRE_THROWS_WITH(runConfigFromJson(config, "config.json"), "'removal.pos0_treatment'");
  // A null by hand ("clip_norm": None, meant as no clipping) had trained with the default 1.0 unsaid.
  config = toJson(smallRun(dir));
  config["optimizer"]["clip_norm"] = nullptr;
  REQUIRE_THROWS_WITH(runConfigFromJson(config, "config.json"), "config.json",
                      "'optimizer.clip_norm' is null");
  // The builds of 2026-11-24 to 11-30 wrote --divergence-factor inf as null: a resume reads "never", not 3.
  config = toJson(smallRun(dir));
  config["divergence"]["factor"] = nullptr;
  REQUIRE_EQ(runConfigFromJson(config, "config.json").divergence.factor, 0.0);
  // The share of document windows: kept through the file, a share outside [0, 1] refused; a config from
  // before the setting reads as 0 (windows anywhere).
  config = toJson(smallRun(dir));
  config["optimizer"]["document_windows"] = 0.25;
  REQUIRE_EQ(runConfigFromJson(config, "config.json").optimizer.documentWindows, 0.25);
  config["optimizer"]["document_windows"] = 2;
  REQUIRE_THROWS_WITH(runConfigFromJson(config, "config.json"), "config.json", "document windows", "[0, 1]");
  config["optimizer"].erase("document_windows");
  REQUIRE_EQ(runConfigFromJson(config, "config.json").optimizer.documentWindows, 0.0);
  // A misspelt or misplaced setting, edited in by hand, would train with the default unsaid: refused,
  // naming the key and where it stands.
  config = toJson(smallRun(dir));
  config["optimizer"]["learning_rate"] = 1.0;
  REQUIRE_THROWS_WITH(runConfigFromJson(config, "config.json"), "config.json", "'optimizer'",
                      "unknown field \"learning_rate\"", "min_lr");
  config = toJson(smallRun(dir));
  config["clip_norm"] = 0.5;  // an optimizer setting at the top level
  REQUIRE_THROWS_WITH(runConfigFromJson(config, "config.json"), "config.json", "unknown field \"clip_norm\"");
  config = toJson(smallRun(dir));
  config["removal"]["emamomentum"] = 0.5;
  REQUIRE_THROWS_WITH(runConfigFromJson(config, "config.json"), "'removal'", "unknown field \"emamomentum\"");
  // AdamW's constants: a beta of 1 or more, or a non-positive eps, diverges or divides by zero.
  for (const auto& [key, value] :
       std::vector<std::pair<const char*, double>>{{"beta1", 1.5}, {"beta2", -1}, {"beta2", 1}, {"eps", 0}}) {
    config = toJson(smallRun(dir));
    config["optimizer"][key] = value;
    REQUIRE_THROWS_WITH(runConfigFromJson(config, "config.json"), "config.json", "betas", "eps");
  }
}

TEST_CASE(switching_off_a_treatment_that_cannot_be_on_is_refused) {
  TempDir dir;
  RunConfig config = smallRun(dir);
  // The treatment is not used by this run.
  config.schedule.events.push_back({0, 20, EventAction::EndPos0Treatment, SiteKind::Mlp, -1});
  REQUIRE_THROWS_WITH(Trainer::start(dir.path("a"), config), "does not use the position-0 treatment");
  config.removal.pos0Treatment = true;
  REQUIRE(Trainer::start(dir.path("b"), config) != nullptr);
  // LN_qk.1's treatment when LN_qk is never made fake (nor any site, here).
  config.schedule.events = {{0, 20, EventAction::EndPos0Treatment, SiteKind::Qk, 1}};
  REQUIRE_THROWS_WITH(Trainer::start(dir.path("c"), config), "LN_qk.1 is never made fake");
  // The same rule for live edits.
  config.schedule = smallRun(dir).schedule;
  config.removal.pos0Treatment = false;
  auto trainer = Trainer::start(dir.path("d"), config);
  const EditResult refused = trainer->addEvent({0, 25, EventAction::EndPos0Treatment, SiteKind::Mlp, 0});
  REQUIRE(!refused.accepted && refused.refusal);
  REQUIRE(refused.refusal->problems.at(0).code == ScheduleProblem::Code::TreatmentNotUsed);
  // And after a resume, live or in the schedule given to it (a resumed run had accepted any).
  runUntil(*trainer, 5);
  trainer.reset();
  trainer = Trainer::resume(dir.path("d"));
  const EditResult afterResume = trainer->addEvent({0, 25, EventAction::EndPos0Treatment, SiteKind::Mlp, 0});
  REQUIRE(!afterResume.accepted && afterResume.refusal);
  REQUIRE(afterResume.refusal->problems.at(0).code == ScheduleProblem::Code::TreatmentNotUsed);
  trainer.reset();
  ResumeOverrides withSwitchOff;
  withSwitchOff.schedule = config.schedule;
  withSwitchOff.schedule->events.push_back({99, 25, EventAction::EndPos0Treatment, SiteKind::Mlp, 0});
  REQUIRE_THROWS_WITH(Trainer::resume(dir.path("d"), std::nullopt, withSwitchOff), "event 99",
                      "does not use the position-0 treatment");
  // A site the starting model has made fake already cannot be made fake again.
  CausalLM partly = loadModel(config.model);
  partly->norms().at({SiteKind::V, 1}) = {NormKind::FakeLN, 1.25, 1.0, false, false};
  saveModel(*partly, dir.path("partly"));
  config.model = dir.path("partly");
  REQUIRE_THROWS_WITH(Trainer::start(dir.path("e"), config), "step 14: LN_v.1 → fake",
                      "LN_v.1 is fakeln already");
}

// A finetune measures no scales, so an event would stop its run with an internal error (and schedule.json,
// once rewritten, with every resume after it).
TEST_CASE(a_run_that_is_not_a_removal_takes_no_schedule_events) {
  TempDir dir;
  RunConfig config = smallRun(dir, TrainingMode::Finetune);
  config.schedule.events.clear();
  config.checkpointInterval = 5;
  auto trainer = Trainer::start(dir.path("ft"), config);
  const EditResult live = trainer->addEvent({0, 20, EventAction::MakeFake, SiteKind::Mlp, 0});
  REQUIRE(!live.accepted && live.refusal);
  REQUIRE(live.refusal->detail.find("finetune, not a removal") != std::string::npos);
  runUntil(*trainer, 5);
  trainer.reset();
  const std::string scheduleBefore = readTextFile(run::schedulePath(dir.path("ft")));
  ResumeOverrides withEvents;
  withEvents.schedule = smallRun(dir).schedule;
  withEvents.scheduleSource = dir.path("events.json");
  REQUIRE_THROWS_WITH(Trainer::resume(dir.path("ft"), std::nullopt, withEvents), "events.json",
                      "finetune, not a removal");
  REQUIRE_EQ(readTextFile(run::schedulePath(dir.path("ft"))), scheduleBefore);
  REQUIRE(Trainer::resume(dir.path("ft")) != nullptr);
}

TEST_CASE(an_evaluation_over_zero_tokens_is_an_error_not_a_loss_of_zero) {
  TempDir dir;
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c);
  const auto tokens = randomTokens(c, 1, 200, 3).flatten();
  writeTokens(dir.path("d.bin"),
              std::vector<int32_t>(tokens.data_ptr<int64_t>(), tokens.data_ptr<int64_t>() + 200),
              c.vocabSize);
  const std::vector<bool> none(c.vocabSize, false);
  EvalOptions options;
  options.allowedTokens = &none;
  REQUIRE_THROWS_WITH(evaluate(*model, TokenFile::open(dir.path("d.bin")), options), "d.bin",
                      "no token was evaluated", "filter excluded all");
  writeTokens(dir.path("short.bin"), {1, 2, 3}, c.vocabSize);
  REQUIRE_THROWS_WITH(evaluate(*model, TokenFile::open(dir.path("short.bin")), {}), "short.bin",
                      "fewer than one chunk");
}

// --- divergence -----------------------------------------------------------------------------------------

// The issue's learning rate of 50, given to a sane run through resume's override: within a step the weights
// are ruined and the loss is thousands of times what it was.
ResumeOverrides lrFarTooHigh() {
  ResumeOverrides far;
  far.lr = 50;
  far.minLr = 50;
  return far;
}

TEST_CASE(a_diverging_run_stops_before_its_update_and_keeps_its_last_sane_checkpoint) {
  TempDir dir;
  RunConfig config = smallRun(dir);
  config.checkpointInterval = 1;
  config.keepCheckpoints = 1;  // retention keeps only the newest… and the last sane one
  const std::string runDir = dir.path("run");
  runUntil(*Trainer::start(runDir, config), 6);
  const int64_t sane = readTrainingState(run::latestCheckpoint(runDir)).stepsDone;
  const double saneLoss = records(runDir, "step").at(static_cast<std::size_t>(sane) - 1)["loss"];

  auto trainer = Trainer::resume(runDir, std::nullopt, lrFarTooHigh());
  REQUIRE_THROWS_WITH(trainer->run(), "step " + std::to_string(sane + 2), "above 3 × ",
                      "stopped before updating the weights", run::checkpointPath(runDir, sane), "--lr");
  // Step sane+1 trained with the new rate and was checkpointed; step sane+2's loss showed the damage, so
  // that checkpoint is gone and the last sane one is newest again.
  const auto divergence = records(runDir, "divergence");
  REQUIRE_EQ(divergence.size(), 1u);
  REQUIRE_EQ(divergence[0]["action"], "stop");
  const json stop = allRecords(runDir).back();  // the log ends saying why, for whoever follows it
  REQUIRE(stop["type"] == "stop" && stop["error"].get<std::string>().find("above 3 × ") != std::string::npos);
  REQUIRE_EQ(run::latestCheckpoint(runDir), run::checkpointPath(runDir, sane));
  REQUIRE(!fs::exists(run::checkpointPath(runDir, sane + 1)));
  // Its weights are the sane ones: their loss on a training batch is the run's loss before the change.
  CausalLM kept = loadModel(run::latestCheckpoint(runDir));
  const EvalResult e = evaluate(*kept, TokenFile::open(config.trainData), {});
  REQUIRE_MSG(e.summary.meanLoss < 1.5 * saneLoss, e.summary.meanLoss << " against " << saneLoss);
  // The override is in the run's history and its config.
  const auto resumes = records(runDir, "resume");
  REQUIRE_EQ(resumes.back()["overrides"]["lr"].get<double>(), 50.0);
  REQUIRE_EQ(json::parse(readTextFile(run::configPath(runDir)))["optimizer"]["lr"].get<double>(), 50.0);
}

// The guard's memory is in each checkpoint: a run stopped after its first step, whose update ruined the
// weights, and resumed, diverges at the same step as the run left alone (an empty memory had let the
// resumed run train on unchecked).
TEST_CASE(a_resumed_run_is_watched_by_the_guard_its_checkpoint_remembers) {
  TempDir dir;
  RunConfig config = smallRun(dir, TrainingMode::Finetune);
  config.schedule = Schedule{};
  config.optimizer.lr = config.optimizer.minLr = 50;
  config.optimizer.warmupSteps = 0;
  config.optimizer.maxSteps = 4;
  REQUIRE_THROWS_WITH(Trainer::start(dir.path("straight"), config)->run(), "step 2: ", "above 3 × ");
  config.optimizer.maxSteps = 1;
  REQUIRE(Trainer::start(dir.path("stopped"), config)->run());
  ResumeOverrides more;
  more.maxSteps = 4;
  REQUIRE_THROWS_WITH(Trainer::resume(dir.path("stopped"), std::nullopt, more)->run(),
                      "step 2: ", "above 3 × ", "the last 1 steps");
}

TEST_CASE(a_diverging_run_rolls_back_with_a_lower_learning_rate_and_finishes_sane) {
  TempDir dir;
  RunConfig config = smallRun(dir);
  config.checkpointInterval = 2;
  config.divergence.action = DivergenceAction::Rollback;
  config.divergence.lrFactor = 0.01;  // 50 → 0.5 → 0.005: sane within the allowed rollbacks
  config.divergence.maxRollbacks = 3;
  const std::string runDir = dir.path("run");
  runUntil(*Trainer::start(runDir, config), 6);
  const int64_t resumedAt = readTrainingState(run::latestCheckpoint(runDir)).stepsDone;
  const double saneLoss = records(runDir, "step").at(static_cast<std::size_t>(resumedAt) - 1)["loss"];

  REQUIRE(Trainer::resume(runDir, std::nullopt, lrFarTooHigh())->run());
  const auto rollbacks = records(runDir, "rollback");
  REQUIRE(!rollbacks.empty() && rollbacks.size() <= 3);
  double lr = 50;
  for (const auto& r : rollbacks) {
    REQUIRE_MSG(std::abs(r["lr"].get<double>() - lr * 0.01) < 1e-9 * lr, r.dump());
    lr = r["lr"];
    REQUIRE(r["step"].get<int64_t>() >= resumedAt);  // never before the sane state it resumed
  }
  REQUIRE_EQ(json::parse(readTextFile(run::configPath(runDir)))["optimizer"]["lr"].get<double>(), lr);
  // Its checkpoints since say the rate it trained with (they said 50: a resume warned of a hand edit).
  REQUIRE_EQ(readTrainingState(run::latestCheckpoint(runDir)).settings["optimizer"]["lr"].get<double>(), lr);
  REQUIRE_EQ(records(runDir, "divergence").size(), rollbacks.size());
  // The history as it stands has every step once; the abandoned stretches stay in the file.
  const auto steps = records(runDir, "step");
  REQUIRE_EQ(steps.size(), static_cast<std::size_t>(config.optimizer.maxSteps));
  for (std::size_t i = 0; i < steps.size(); ++i) REQUIRE_EQ(steps[i]["step"].get<int64_t>(), int64_t(i + 1));
  std::size_t written = 0;
  for (const auto& r : allRecords(runDir)) written += r["type"] == "step";
  REQUIRE(written > steps.size());
  // The finished model is sane: its loss is finite and near the run's before the change.
  CausalLM final = loadModel(run::finalModelPath(runDir));
  const EvalResult e = evaluate(*final, TokenFile::open(config.trainData), {});
  REQUIRE_MSG(std::isfinite(e.summary.meanLoss) && e.summary.meanLoss < 1.5 * saneLoss,
              e.summary.meanLoss << " against " << saneLoss);
}

// A rollback to a step whose events fire again measures the tracked analyses there again: the measurement
// of the undone stretch is superseded, and the one after the rollback had been skipped as "already taken".
TEST_CASE(a_rollback_measures_the_tracked_analyses_of_the_events_that_fire_again) {
  TempDir dir;
  RunConfig config = smallRun(dir);  // events at steps 5, 7, 10, 12, 14, 16 of 30
  config.checkpointInterval = 2;
  config.divergence.action = DivergenceAction::Rollback;
  config.divergence.lrFactor = 0.01;
  config.tracking.analyses = {"val-ce"};
  config.tracking.every = 100;  // at the events, the first and the last step only
  config.tracking.sequences = 2;
  config.tracking.length = 16;
  const std::string runDir = dir.path("run");
  runUntil(*Trainer::start(runDir, config), 12);
  REQUIRE(Trainer::resume(runDir, std::nullopt, lrFarTooHigh())->run());
  const auto rollbacks = records(runDir, "rollback");
  REQUIRE(!rollbacks.empty());
  std::set<int64_t> tracked;
  for (const auto& r : records(runDir, "track")) tracked.insert(r["step"].get<int64_t>());
  for (const auto& e : records(runDir, "event"))
    REQUIRE_MSG(tracked.count(e["step"].get<int64_t>()) == 1, "no tracked measurement at the event of step "
                                                                  << e["step"] << " (rolled back to step "
                                                                  << rollbacks.front()["step"] << ")");
}

// The autopilot switched on (the workbench's or steer's switch) after a rollback keeps the rollback's lowered
// learning rate in config.json: it had written the run's first rate back, and the resume trained at it.
TEST_CASE(an_autopilot_switch_after_a_rollback_keeps_the_lowered_learning_rate) {
  TempDir dir;
  RunConfig config = smallRun(dir);
  config.checkpointInterval = 2;
  config.divergence.action = DivergenceAction::Rollback;
  config.divergence.lrFactor = 0.01;
  config.divergence.maxRollbacks = 3;
  const std::string runDir = dir.path("run");
  runUntil(*Trainer::start(runDir, config), 6);
  auto t = Trainer::resume(runDir, std::nullopt, lrFarTooHigh());
  std::atomic<bool> returned{false};
  std::thread stopper([&] {  // at the first rollback (or the run's end)
    while (records(runDir, "rollback").empty() && !returned)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    t->requestStop();
  });
  t->run();
  returned = true;
  stopper.join();
  REQUIRE(!records(runDir, "rollback").empty());
  REQUIRE(t->setAutopilot(true));
  t->run();  // the switch is applied at its first step, or at its end
  REQUIRE(!records(runDir, "autopilot").empty());
  const double lowered = records(runDir, "rollback").back()["lr"];
  REQUIRE(lowered < 1);
  REQUIRE_EQ(json::parse(readTextFile(run::configPath(runDir)))["optimizer"]["lr"].get<double>(), lowered);
  REQUIRE_EQ(t->settingsNow().optimizer.lr, lowered);
  // The switch is in config.json and settingsNow(), and not written into config(), which the steering
  // endpoint's threads read while the training thread applies a switch.
  REQUIRE(json::parse(readTextFile(run::configPath(runDir)))["autopilot"]["enabled"].get<bool>());
  REQUIRE(t->settingsNow().autopilot.enabled && !t->config().autopilot.enabled);
}

// A small run stopped after step 7 or later, with a checkpoint every 5 steps: what the resume tests resume.
std::string stoppedRun(TempDir& dir, RunConfig* used = nullptr) {
  RunConfig config = smallRun(dir);
  config.checkpointInterval = 5;
  const std::string runDir = dir.path("run");
  runUntil(*Trainer::start(runDir, config), 7);
  if (used) *used = config;
  return runDir;
}

TEST_CASE(a_resumed_run_keeps_every_record_of_its_history) {
  TempDir dir;
  RunConfig config;
  const std::string runDir = stoppedRun(dir, &config);
  const int64_t stopped = readTrainingState(run::latestCheckpoint(runDir)).stepsDone;
  const std::size_t before = allRecords(runDir).size();
  REQUIRE(Trainer::resume(runDir)->run());
  const auto all = allRecords(runDir);
  REQUIRE(all.size() > before);  // appended, nothing cut
  // The checkpoint the resume started from keeps its own record (it used to be cut with its tail).
  bool found = false;
  for (const auto& r : records(runDir, "checkpoint")) found = found || r["step"].get<int64_t>() == stopped;
  REQUIRE(found);
  REQUIRE_EQ(records(runDir, "stop").size(), 1u);
  REQUIRE_EQ(records(runDir, "step").size(), static_cast<std::size_t>(config.optimizer.maxSteps));
}

// Records lost from the log between a stop and its resume (cut, or the file deleted) are said to be lost:
// the run went on without a word, its history short of them.
TEST_CASE(a_resume_says_when_records_were_cut_from_its_log) {
  TempDir dir;
  const std::string runDir = stoppedRun(dir);
  const std::string log = readTextFile(run::metricsPath(runDir));
  const std::size_t kept = log.find('\n', log.find('\n') + 1) + 1;  // two records: the steps' are gone
  fs::resize_file(run::metricsPath(runDir), kept);
  auto resumed = Trainer::resume(runDir);
  const std::vector<nlohmann::json> warnings = records(runDir, "warning");
  REQUIRE(!warnings.empty());
  REQUIRE_EQ(warnings.back()["code"], "metrics_lost");
  const std::string said = "metrics.jsonl holds " + formatBytes(static_cast<int64_t>(kept)) + ", but held ";
  REQUIRE_MSG(warnings.back()["message"].get<std::string>().find(said) != std::string::npos,
              warnings.back()["message"]);
  resumed.reset();
  fs::remove(run::metricsPath(runDir));  // deleted: the same
  Trainer::resume(runDir).reset();
  REQUIRE_EQ(records(runDir, "warning").back()["code"], "metrics_lost");
}

// A tracked scale edited or corrupted in a checkpoint's state.json is refused at the resume, naming the file
// (it was taken, and refused only when its site turned fake, as a divergence).
TEST_CASE(a_checkpoints_tracked_scales_are_checked_when_it_is_resumed) {
  TempDir dir;
  const std::string runDir = stoppedRun(dir);
  const std::string state = run::checkpointStatePath(run::latestCheckpoint(runDir));
  nlohmann::json j = nlohmann::json::parse(readTextFile(state));
  bool edited = false;
  for (auto& [site, tracker] : j["trackers"].items())
    if (!edited && tracker["has_value"].get<bool>()) tracker["tracked"] = -0.42, edited = true;
  REQUIRE_MSG(edited, "no site's scale was measured by the checkpoint: the test lost its point");
  writeFileAtomic(state, j.dump());
  REQUIRE_THROWS_WITH(Trainer::resume(runDir), state, "tracked scale (-0.42", "is not a positive number");
}

// config.json edited by hand between a stop and its resume: the edit is used, and the resume record and a
// warning name each changed setting with its value at the checkpoint and now (they used to go unrecorded).
TEST_CASE(a_resume_names_the_settings_edited_since_its_checkpoint) {
  TempDir dir;
  RunConfig config = smallRun(dir);
  config.checkpointInterval = 5;
  const std::string runDir = dir.path("run");
  runUntil(*Trainer::start(runDir, config), 5);
  nlohmann::json edited = readJsonFile(run::configPath(runDir));
  edited["optimizer"]["micro_batch"] = 2;
  edited["eval"]["interval"] = 3;
  writeFileAtomic(run::configPath(runDir), edited.dump());
  ResumeOverrides newLr;
  newLr.lr = 1e-3;
  auto resumed = Trainer::resume(runDir, std::nullopt, newLr);
  REQUIRE_EQ(resumed->config().optimizer.microBatch, 2);
  const nlohmann::json overrides = records(runDir, "resume").back()["overrides"];
  REQUIRE_EQ(overrides["lr"].get<double>(), 1e-3);  // the resume's own override, named as before
  const nlohmann::json& changed = overrides["config.json"];
  REQUIRE_EQ(changed.size(), 2u);  // nothing else: the lr given to resume is not a hand edit
  REQUIRE_EQ(changed["optimizer.micro_batch"]["from"], config.optimizer.microBatch);
  REQUIRE_EQ(changed["optimizer.micro_batch"]["to"], 2);
  REQUIRE_EQ(changed["eval.interval"]["to"], 3);
  const auto warnings = records(runDir, "warning");
  REQUIRE(!warnings.empty());
  REQUIRE(warnings.back()["message"].get<std::string>().find("optimizer.micro_batch 4 → 2") !=
          std::string::npos);
  // The mode is what the run is, not a setting: refused, naming the file, and nothing written.
  resumed.reset();
  edited = readJsonFile(run::configPath(runDir));
  edited["mode"] = "finetune";
  writeFileAtomic(run::configPath(runDir), edited.dump());
  const auto metricsBefore = fs::file_size(run::metricsPath(runDir));
  REQUIRE_THROWS_WITH(Trainer::resume(runDir), "config.json", "mode \"remove\" at the checkpoint",
                      "\"finetune\" now");
  REQUIRE_EQ(fs::file_size(run::metricsPath(runDir)), metricsBefore);
  edited["mode"] = "remove";
  // Nor are the seed (the data is drawn where the checkpoint left off) and the model (the checkpoint is
  // trained): each edit was reported as used while it changed nothing.
  edited["optimizer"]["seed"] = 12345;
  writeFileAtomic(run::configPath(runDir), edited.dump());
  REQUIRE_THROWS_WITH(Trainer::resume(runDir), "config.json", "optimizer.seed", "12345 now");
  edited["optimizer"]["seed"] = config.optimizer.seed;
  edited["model"] = dir.path("elsewhere");
  writeFileAtomic(run::configPath(runDir), edited.dump());
  REQUIRE_THROWS_WITH(Trainer::resume(runDir), "config.json", "model \"", "elsewhere\" now");
  REQUIRE_EQ(fs::file_size(run::metricsPath(runDir)), metricsBefore);
  edited["model"] = config.model;
  // config.json's schedule is the one the run started with, kept for the record: an edit there changed
  // nothing, unsaid. The run follows schedule.json, and a resume names it when it differs from the
  // checkpoint's.
  const json started = edited["schedule"];
  edited["schedule"]["events"].back()["step"] = 18;
  writeFileAtomic(run::configPath(runDir), edited.dump());
  REQUIRE_THROWS_WITH(Trainer::resume(runDir), "config.json", "\"schedule\" changed", "schedule.json");
  edited["schedule"] = started;
  writeFileAtomic(run::configPath(runDir), edited.dump());
  json live = readJsonFile(run::schedulePath(runDir));
  live["events"].back()["step"] = 18;
  writeFileAtomic(run::schedulePath(runDir), live.dump());
  resumed = Trainer::resume(runDir);
  REQUIRE_EQ(records(runDir, "resume").back()["overrides"]["schedule.json"]["events"].back()["step"], 18);
  resumed.reset();
  resumed = Trainer::resume(runDir);
  // A listener that asks for them gets the resume's records first (the CLI prints its warnings).
  std::vector<std::string> replayed = resumed->subscribe(true)->drain();
  REQUIRE(!replayed.empty() && json::parse(replayed.front())["type"] == "resume");
  REQUIRE(resumed->subscribe()->drain().empty());
  // Unedited, a resume records no such change.
  REQUIRE(runUntil(*resumed, 10) >= 10);
  resumed.reset();  // its lock goes with it
  Trainer::resume(runDir);
  REQUIRE(!records(runDir, "resume").back().contains("overrides"));
}

// The removal's masks leave out the model's end-of-text id; data whose documents end with another (an
// instruct model's config names its turn end) would have its separators counted as text, unsaid.
TEST_CASE(a_removal_says_when_its_data_ends_documents_with_another_id_than_the_model) {
  TempDir dir;
  RunConfig config = smallRun(dir);
  const TokenFile train = TokenFile::open(config.trainData);
  std::vector<int32_t> ids(static_cast<std::size_t>(train.size()));
  train.read(0, train.size(), ids.data(), 0);
  const int64_t modelEnd = smallConfig().eotTokenId;
  auto startOn = [&](const std::string& name, int64_t separator) {
    TokenFileMeta meta;
    meta.dtype = tokenDTypeFor(smallConfig().vocabSize);
    meta.vocabSize = smallConfig().vocabSize;
    meta.eotTokenId = separator;
    TokenFileWriter writer(dir.path(name + ".bin"), meta);
    writer.append(ids.data(), ids.size());
    writer.finish();
    RunConfig c = config;
    c.trainData = dir.path(name + ".bin");
    Trainer::start(dir.path(name), c);
    std::vector<json> said;
    for (const json& w : records(dir.path(name), "warning"))
      if (w["code"] == "end_of_text_differs") said.push_back(w);
    return said;
  };
  REQUIRE(startOn("same", modelEnd).empty());
  const auto said = startOn("other", modelEnd - 1);
  REQUIRE_EQ(said.size(), 1u);
  REQUIRE_MSG(said[0]["message"].get<std::string>().find("ends its documents with id " +
                                                         std::to_string(modelEnd - 1)) != std::string::npos,
              said[0].dump());
}

// A run keeps what it needs of its source model (RUN/source/: config.json, tokenizer files, a fingerprint
// of the weights): the source folder replaced or stripped after the start is named when the run resumes,
// and final/ still ships the tokenizer the run trained with (it used to ship the replacement's, or none).
TEST_CASE(a_run_keeps_its_source_models_tokenizer_and_names_a_changed_source) {
  TempDir dir;
  RunConfig config = smallRun(dir);
  config.checkpointInterval = 5;
  writeFileAtomic(config.model + "/vocab.json", "{\"a\": 0}\n");
  writeFileAtomic(config.model + "/merges.txt", "#version: 0.2\n");
  const std::string runDir = dir.path("run");
  runUntil(*Trainer::start(runDir, config), 5);
  REQUIRE_EQ(readTextFile(run::sourceModelPath(runDir) + "/vocab.json"), "{\"a\": 0}\n");
  REQUIRE_EQ(run::sourceModelChange(runDir), "");
  // Replaced by another model of the same shape, without tokenizer files.
  saveModel(*randomModel(smallConfig(), 2), config.model);
  fs::remove(config.model + "/vocab.json");
  fs::remove(config.model + "/merges.txt");
  REQUIRE(run::sourceModelChange(runDir).find("its weights changed since the run started") !=
          std::string::npos);
  REQUIRE(Trainer::resume(runDir)->run());
  const auto warnings = records(runDir, "warning");
  REQUIRE(std::any_of(warnings.begin(), warnings.end(), [](const nlohmann::json& w) {
    return w["code"] == "source_changed" &&
           w["message"].get<std::string>().find("weights changed") != std::string::npos;
  }));
  REQUIRE_EQ(readTextFile(run::finalModelPath(runDir) + "/vocab.json"), "{\"a\": 0}\n");
  fs::remove_all(config.model);
  REQUIRE(run::sourceModelChange(runDir).find("is gone") != std::string::npos);
}

TEST_MAIN()

// The divergence guard on its own, row by row: a run's step losses, and the first step (0-based) that
// diverges, or -1. Each expectation is counted by hand from the rule in train/divergence.h: not finite, or
// above factor × the median (the upper middle of an even count) of the previous `window` remembered losses.
TEST_CASE(the_divergence_guard_row_by_row) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  struct Row {
    const char* what;
    double factor;
    std::size_t window;
    std::vector<double> losses;
    int firstDiverged;
  };
  const std::vector<Row> rows = {
      {"a spike above 3 × the median", 3, 5, {2, 2, 2, 2, 2, 7}, 5},
      {"just under the factor", 3, 5, {2, 2, 2, 5.9}, -1},
      {"a doubling loss is caught on its third rise", 3, 4, {1, 2, 4, 8}, 3},
      {"a slow drift (×1.5 a step) never crosses 3 × the median",
       3,
       4,
       {1, 1.5, 2.25, 3.375, 5.06, 7.59, 11.4},
       -1},
      {"NaN at the first step", 3, 5, {nan}, 0},
      {"infinity later", 3, 5, {2, 2, inf}, 2},
      {"factor 0: any finite loss is accepted", 0, 5, {1, 1000}, -1},
      {"factor 0: NaN still diverges", 0, 5, {1, nan}, 1},
      {"a short window forgets the calm start", 3, 2, {1, 1, 2.9, 2.9, 8, 20}, -1},
      {"a long window remembers it", 3, 50, {1, 1, 2.9, 2.9, 8, 20}, 5},
      {"a diverged loss is not remembered", 3, 5, {2, 2, 7, 6.5}, 2},
  };
  for (const Row& row : rows) {
    DivergenceGuard guard(row.factor, row.window);
    int first = -1;
    std::vector<int> diverged;
    for (std::size_t i = 0; i < row.losses.size(); ++i)
      if (guard.checkStep(row.losses[i])) diverged.push_back(static_cast<int>(i));
    if (!diverged.empty()) first = diverged.front();
    REQUIRE_MSG(first == row.firstDiverged,
                std::string(row.what) + ": first diverged " + std::to_string(first));
  }
  // The last row: 6.5 diverges too, since the 7 before it was not remembered (median still 2).
  DivergenceGuard guard(3, 5);
  for (double loss : {2.0, 2.0}) REQUIRE(!guard.checkStep(loss));
  REQUIRE(guard.checkStep(7).has_value());
  REQUIRE(guard.checkStep(6.5).has_value());
  REQUIRE(!guard.checkStep(5.9).has_value());
}

// Evaluations are compared per file with the lowest that file had; the first one only sets the mark.
TEST_CASE(the_divergence_guard_on_evaluations) {
  DivergenceGuard guard(2);
  REQUIRE(!guard.checkEvaluation("a.bin", 3.0));
  REQUIRE(!guard.checkEvaluation("a.bin", 2.5));         // the new lowest
  REQUIRE(!guard.checkEvaluation("b.bin", 10));          // another file's first: no mark yet
  const auto why = guard.checkEvaluation("a.bin", 5.1);  // above 2 × 2.5
  REQUIRE(why && why->find("a.bin") != std::string::npos && why->find("2.5") != std::string::npos);
  REQUIRE(!guard.checkEvaluation("a.bin", 4.9));
  REQUIRE(!guard.checkEvaluation("b.bin", 19));
  REQUIRE(guard.checkEvaluation("b.bin", std::nan("")).has_value());
}

// Which checkpoint a rollback may go to: only one that a later step's loss vouched for.
TEST_CASE(a_checkpoint_is_sane_once_the_step_after_it_passed) {
  SaneCheckpoints c;
  REQUIRE_EQ(c.sane(), -1);
  c.written(10);  // checkpoint of 10 steps
  c.stepPassed(9);
  REQUIRE_EQ(c.sane(), -1);  // a step before it vouches for nothing
  c.stepPassed(10);          // step 11 trained from its weights and passed
  REQUIRE_EQ(c.sane(), 10);
  c.written(20);
  REQUIRE_EQ(c.sane(), 10);  // the newer one is not vouched for yet: a divergence at step 21 goes to 10
  c.forgetUnconfirmed();     // rewound after a divergence: checkpoint 20 is gone
  c.stepPassed(20);
  REQUIRE_EQ(c.sane(), 10);
  c.written(20);
  c.stepPassed(20);
  REQUIRE_EQ(c.sane(), 20);
}

// One writer per run: while a trainer holds the run, a second one — here in this process, and a
// `normfree-cli resume` in another — is refused by name with the holder, and writes nothing; once the
// holder is gone (its process closes the lock, also when it dies) the run resumes.
TEST_CASE(a_run_has_one_trainer_at_a_time) {
  TempDir dir;
  RunConfig config = shortRun(dir, 4);
  config.checkpointInterval = 2;
  const std::string runDir = dir.path("run");
  auto first = Trainer::start(runDir, config);
  REQUIRE_EQ(runUntil(*first, 2), int64_t{2});
  const auto metricsBefore = fs::file_size(run::metricsPath(runDir));
  REQUIRE_THROWS_WITH(Trainer::resume(runDir), runDir,
                      "is being trained by process " + std::to_string(::getpid()),
                      "one run has one trainer at a time");
  const auto r = cli("resume " + runDir);
  REQUIRE_MSG(r.status == 1 && r.err.find("is being trained by process " + std::to_string(::getpid())) !=
                                   std::string::npos,
              r.err);
  REQUIRE_EQ(fs::file_size(run::metricsPath(runDir)), metricsBefore);  // the refused ones wrote nothing
  first.reset();
  auto second = Trainer::resume(runDir);
  REQUIRE(second->run());
}

// A served run that was killed leaves serve.json behind; its resume removes it (a new --serve writes a new
// one), so nobody keeps steering an address that no longer serves the run.
TEST_CASE(a_resume_removes_the_serve_file_a_killed_run_left) {
  TempDir dir;
  RunConfig config = shortRun(dir, 4);
  config.checkpointInterval = 2;
  const std::string runDir = dir.path("run");
  REQUIRE_EQ(runUntil(*Trainer::start(runDir, config), 2), int64_t{2});
  const std::string staleServeFile =
      R"({"format": "normfree-serve", "version": 1, "host": "127.0.0.1", "port": 9, "token": "stale", "pid": 1})";
  writeFileAtomic(run::servePath(runDir), staleServeFile);
  // Steering tells such a file by the trainer its lock file names being gone (test_serve): this process
  // trained it and lives; a child that has exited and been reaped is gone.
  REQUIRE(!goneTrainer(runDir));
  const pid_t child = deadProcess();
  nlohmann::json lock = readJsonFile(run::lockPath(runDir));
  lock["pid"] = child;
  writeFileAtomic(run::lockPath(runDir), lock.dump());
  REQUIRE_EQ(goneTrainer(runDir).value_or(-1), static_cast<long>(child));
  lock["host"] = "elsewhere";  // a run on a shared disk, trained on another machine: not known
  writeFileAtomic(run::lockPath(runDir), lock.dump());
  REQUIRE(!goneTrainer(runDir));
  auto resumed = Trainer::resume(runDir);
  REQUIRE(!fs::exists(run::servePath(runDir)));
  resumed.reset();
  // Started again in place (its first start was killed before a checkpoint): the same.
  const std::string again = dir.path("again");
  Trainer::start(again, config).reset();
  writeFileAtomic(run::servePath(again), staleServeFile);
  Trainer::start(again, config).reset();
  REQUIRE(!fs::exists(run::servePath(again)));
}

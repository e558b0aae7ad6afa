// Multi-worker runs: who a worker is, read from the torchrun environment the way torchrun and Slurm set it;
// and whole runs through `normfree-cli … --nproc 2` (Gloo over loopback) against the one-process run.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <map>
#include <thread>

#include "check.h"
#include "cli_process.h"
#include "distributed/worker_environment.h"
#include "distributed/worker_sync.h"
#include "io/atomic_file.h"
#include "model/hf_checkpoint.h"
#include "run_fixtures.h"

using namespace nf;
using namespace nf::test;
using json = nlohmann::json;

namespace {

EnvironmentLookup environment(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    const auto found = values.find(name);
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

const std::map<std::string, std::string> kTwoNodesOfFour = {{"RANK", "5"},
                                                            {"WORLD_SIZE", "8"},
                                                            {"LOCAL_RANK", "1"},
                                                            {"LOCAL_WORLD_SIZE", "4"},
                                                            {"MASTER_ADDR", "node-a"},
                                                            {"MASTER_PORT", "29500"}};

std::map<std::string, std::string> with(std::string name, std::string value) {
  auto values = kTwoNodesOfFour;
  values[name] = value;
  return values;
}

}  // namespace

TEST_CASE(no_torchrun_variables_is_a_one_process_run) {
  REQUIRE(!readWorkerEnvironment(environment({{"PATH", "/usr/bin"}})).has_value());
}

TEST_CASE(a_torchrun_worker_reads_its_rank_and_the_rendezvous) {
  const WorkerEnvironment w = *readWorkerEnvironment(environment(kTwoNodesOfFour));
  REQUIRE_EQ(w.rank, 5);
  REQUIRE_EQ(w.worldSize, 8);
  REQUIRE_EQ(w.localRank, 1);
  REQUIRE_EQ(w.localWorldSize, 4);
  REQUIRE_EQ(w.masterAddress, "node-a");
  REQUIRE_EQ(w.masterPort, 29500);
  REQUIRE(!w.isMain());
  REQUIRE(!w.launcherHostsStore);
  auto agent = with("TORCHELASTIC_USE_AGENT_STORE", "True");
  agent["TORCHELASTIC_RESTART_COUNT"] = "2";
  const WorkerEnvironment restarted = *readWorkerEnvironment(environment(agent));
  REQUIRE(restarted.launcherHostsStore);
  REQUIRE_EQ(restarted.launcherAttempt, 2);
  // One GPU per worker on its machine; an explicit device and the CPU stay.
  REQUIRE_EQ(workerDevice("cuda", w), "cuda:1");
  REQUIRE_EQ(workerDevice("cuda:3", w), "cuda:3");
  REQUIRE_EQ(workerDevice("cpu", w), "cpu");
  // Without LOCAL_*: all workers on one machine.
  auto oneMachine = kTwoNodesOfFour;
  oneMachine.erase("LOCAL_RANK"), oneMachine.erase("LOCAL_WORLD_SIZE");
  const WorkerEnvironment local = *readWorkerEnvironment(environment(oneMachine));
  REQUIRE_EQ(local.localRank, 5);
  REQUIRE_EQ(local.localWorldSize, 8);
}

TEST_CASE(malformed_torchrun_variables_are_named) {
  REQUIRE_THROWS_WITH(readWorkerEnvironment(environment(with("RANK", "8"))), "RANK='8'", "0 to 7");
  REQUIRE_THROWS_WITH(readWorkerEnvironment(environment(with("RANK", "1x"))), "RANK='1x'");
  // Blanks and signs a shell quoting slip leaves are not numbers (std::stol had taken " 1" and "+1").
  REQUIRE_THROWS_WITH(readWorkerEnvironment(environment(with("RANK", " 1"))), "RANK=' 1'");
  REQUIRE_THROWS_WITH(readWorkerEnvironment(environment(with("RANK", "+1"))), "RANK='+1'");
  REQUIRE_THROWS_WITH(readWorkerEnvironment(environment(with("RANK", "99999999999999999999"))), "RANK='9");
  REQUIRE_THROWS_WITH(readWorkerEnvironment(environment(with("WORLD_SIZE", "0"))), "WORLD_SIZE='0'");
  REQUIRE_THROWS_WITH(readWorkerEnvironment(environment(with("MASTER_PORT", "70000"))), "MASTER_PORT='70000'",
                      "65535");
  REQUIRE_THROWS_WITH(readWorkerEnvironment(environment(with("LOCAL_RANK", "4"))), "LOCAL_RANK='4'");
  REQUIRE_THROWS_WITH(readWorkerEnvironment(environment(with("LOCAL_WORLD_SIZE", "9"))),
                      "LOCAL_WORLD_SIZE='9'");
  auto noAddress = kTwoNodesOfFour;
  noAddress.erase("MASTER_ADDR");
  REQUIRE_THROWS_WITH(readWorkerEnvironment(environment(noAddress)), "MASTER_ADDR is not set");
  REQUIRE_THROWS_WITH(readWorkerEnvironment(environment({{"WORLD_SIZE", "2"}})), "RANK is not set");
}

TEST_CASE(a_micro_batch_splits_into_equal_consecutive_shares) {
  WorkerEnvironment w;
  w.worldSize = 4;
  w.rank = 2;
  const BatchShare share = batchShare(32, w);
  REQUIRE_EQ(share.first, 16);
  REQUIRE_EQ(share.count, 8);
  REQUIRE_THROWS_WITH(batchShare(6, w), "6 sequences", "4 workers");
}

namespace {

// `normfree-cli remove` arguments over smallRun's model and data: a global micro-batch of 16 (8 per worker
// with two), a removal of every site within the first 16 steps, evaluations and checkpoints.
std::string removeArguments(const TempDir& dir, int64_t steps) {
  const RunConfig config = smallRun(dir);
  writeFileAtomic(dir.path("schedule.json"), toJson(config.schedule).dump());
  return " --model " + config.model + " --train " + config.trainData + " --eval " + config.trainData +
         " --schedule " + dir.path("schedule.json") + " --steps " + std::to_string(steps) +
         " --micro-batch 16 --accumulation 1 --context 16 --lr 1e-3 --warmup 3 --ema 0.8 --eval-interval 10 "
         "--eval-tokens 1600 --checkpoint-interval 5";
}

Finished runCli(const std::string& arguments, const TempDir& dir) {
  const std::string err = dir.path("stderr.txt");
  return finish(startCli(arguments, err), err);
}

// The worker of rank `rank` that the launcher `launcher` started: its child whose environment says so.
pid_t workerOf(pid_t launcher, int rank) {
  const std::string wanted = "RANK=" + std::to_string(rank);
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string pid, command, state;
    pid_t parent = 0;
    if (!(stat >> pid >> command >> state >> parent) || parent != launcher) continue;
    std::ifstream environ(entry.path() / "environ");
    for (std::string variable; std::getline(environ, variable, '\0');)
      if (variable == wanted) return std::stoi(name);
  }
  return -1;
}

// Waits until the run's metrics log holds a checkpoint record (polling: it waits for the event, not for a
// time), or the process ends first (false).
bool waitForCheckpoint(const std::string& runDir, pid_t launcher) {
  int status = 0;
  while (::waitpid(launcher, &status, WNOHANG) == 0) {
    std::ifstream in(run::metricsPath(runDir));
    for (std::string line; std::getline(in, line);)
      if (line.find("\"type\":\"checkpoint\"") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // polling interval, not a deadline
  }
  return false;
}

// A stopped run lost nothing: one stop record and the newest checkpoint, both at the last step trained.
// `said`: what the processes wrote on stderr, shown if not.
void requireStoppedAtLastStep(const std::string& run, const std::string& said) {
  const auto stops = records(run, "stop"), steps = records(run, "step");
  REQUIRE_MSG(stops.size() == 1u, said);
  REQUIRE_EQ(stops[0]["step"].get<int64_t>(), static_cast<int64_t>(steps.size()));
  REQUIRE_EQ(run::latestCheckpoint(run), run::checkpointPath(run, static_cast<int64_t>(steps.size())));
}

// Whether a process has ended: gone, or a zombie its new parent has not reaped yet.
bool ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string id, command, state;
  return !(stat >> id >> command >> state) || state == "Z";
}

double relativeDifference(double a, double b) { return std::abs(a - b) / std::max(std::abs(a), 1e-12); }

// Every step record of `run` (from step `from` on) matches the one-process run `reference`: the losses,
// the gradient norm and every site's tracked and frozen scale, to 1e-5 relative.
void requireSameSteps(const std::string& run, const std::string& reference, int64_t expectedSteps) {
  const auto steps = records(run, "step"), expected = records(reference, "step");
  REQUIRE_EQ(steps.size(), static_cast<std::size_t>(expectedSteps));
  REQUIRE_EQ(expected.size(), steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    REQUIRE_EQ(steps[i]["step"], expected[i]["step"]);
    for (const char* key : {"loss", "ce", "aux", "grad_norm"})
      REQUIRE_MSG(relativeDifference(steps[i][key], expected[i][key]) <= 1e-5,
                  "step " << steps[i]["step"] << " " << key << ": " << steps[i][key] << " vs one process "
                          << expected[i][key]);
    for (auto& [site, scale] : expected[i]["scales"].items())
      for (const char* which : {"tracked", "frozen"}) {
        const json& mine = steps[i]["scales"][site][which];
        REQUIRE_EQ(mine.is_null(), scale[which].is_null());
        if (!mine.is_null())
          REQUIRE_MSG(relativeDifference(mine, scale[which]) <= 1e-5,
                      "step " << steps[i]["step"] << " " << site << " " << which);
      }
  }
}

}  // namespace

TEST_CASE(two_workers_make_the_one_process_run) {
  TempDir dir;
  const std::string arguments = removeArguments(dir, 30);
  Finished one = runCli("remove " + dir.path("one") + arguments, dir);
  REQUIRE_MSG(one.status == 0, one.err);
  Finished two = runCli("remove " + dir.path("two") + arguments + " --nproc 2", dir);
  REQUIRE_MSG(two.status == 0, two.err);
  requireSameSteps(dir.path("two"), dir.path("one"), 30);
  // The step records say who trained: two workers and each one's pace.
  const json last = records(dir.path("two"), "step").back();
  REQUIRE_EQ(last["world_size"], 2);
  REQUIRE_EQ(last["worker_tokens_per_second"].size(), 2u);
  for (double pace : last["worker_tokens_per_second"]) REQUIRE(pace > 0);
  // Evaluations: each worker evaluated its half of the chunks; together they are the one-process result.
  const auto evals = records(dir.path("two"), "eval"), expectedEvals = records(dir.path("one"), "eval");
  REQUIRE_EQ(evals.size(), 4u);
  REQUIRE_EQ(evals.size(), expectedEvals.size());
  for (std::size_t i = 0; i < evals.size(); ++i) {
    REQUIRE_EQ(evals[i]["tokens"], expectedEvals[i]["tokens"]);
    REQUIRE(relativeDifference(evals[i]["mean_loss"], expectedEvals[i]["mean_loss"]) <= 1e-5);
  }
  // The final models: the same frozen scales and weights (each tensor's difference, relative to its norm).
  CausalLM a = loadModel(dir.path("one/final")), b = loadModel(dir.path("two/final"));
  REQUIRE(b->norms().isLayerNormFree());
  for (const SiteId& site : a->norms().sites())
    REQUIRE(relativeDifference(a->norms().at(site).scale, b->norms().at(site).scale) <= 1e-5);
  const auto pa = a->named_parameters(), pb = b->named_parameters();
  for (std::size_t i = 0; i < pa.size(); ++i) {
    const double difference =
        ((pa[i].value() - pb[i].value()).norm() / pa[i].value().norm().clamp_min(1e-12)).item<double>();
    REQUIRE_MSG(difference <= 1e-5, pa[i].key() << ": " << difference);
  }
  // Only worker 0 wrote the run directory: one metrics log, one start record.
  REQUIRE_EQ(records(dir.path("two"), "start").size(), 1u);
}

TEST_CASE(a_killed_worker_stops_the_other_by_name_and_the_run_resumes_with_one) {
  TempDir dir;
  const int64_t steps = 400;
  const std::string arguments = removeArguments(dir, steps);
  const std::string run = dir.path("run"), err = dir.path("launcher.txt");
  const pid_t launcher = startCli("remove " + run + arguments + " --nproc 2 --worker-timeout 60", err);
  REQUIRE_MSG(waitForCheckpoint(run, launcher), "the run ended before its first checkpoint");
  const pid_t second = workerOf(launcher, 1);
  REQUIRE(second > 0);
  ::kill(second, SIGKILL);
  const Finished launched = finish(launcher, err);
  REQUIRE_EQ(launched.status, 1);
  REQUIRE_MSG(launched.err.find("worker 1 of 2 stopped answering") != std::string::npos, launched.err);
  REQUIRE_MSG(launched.err.find("is intact: 'normfree-cli resume") != std::string::npos, launched.err);
  REQUIRE_MSG(launched.err.find("worker 1 of 2 was killed by signal 9") != std::string::npos, launched.err);
  const std::string checkpoint = run::latestCheckpoint(run);
  REQUIRE(!checkpoint.empty());

  // One worker continues from the checkpoint two made; the whole run is the one-process run.
  Finished resumed = runCli("resume " + run, dir);
  REQUIRE_MSG(resumed.status == 0, resumed.err);
  Finished reference = runCli("remove " + dir.path("one") + arguments, dir);
  REQUIRE_MSG(reference.status == 0, reference.err);
  requireSameSteps(run, dir.path("one"), steps);
}

// SIGTERM, what a cluster's scheduler sends before it kills, ends a run as Ctrl-C does: the step finishes,
// a checkpoint is written and the exit status is 3 — for one process and for a launcher's workers alike.
TEST_CASE(sigterm_stops_a_run_with_a_checkpoint_like_ctrl_c) {
  TempDir dir;
  const std::string arguments = removeArguments(dir, 100000);
  for (const std::string workers : {"", " --nproc 2 --worker-timeout 60"}) {
    const std::string run = dir.path(workers.empty() ? "one" : "two"), err = dir.path("stderr.txt");
    const pid_t pid = startCli("remove " + run + arguments + workers, err);
    REQUIRE_MSG(waitForCheckpoint(run, pid), "the run ended before its first checkpoint");
    ::kill(pid, SIGTERM);
    const Finished f = finish(pid, err);
    REQUIRE_MSG(f.status == 3, "exit " << f.status << workers << ": " << f.err);
    requireStoppedAtLastStep(run, f.err);
  }
  // Ctrl-C in a terminal signals the whole foreground job: the launcher and its workers, which then get
  // the launcher's copy too. Once, not twice (a pair had killed them, their steps since the checkpoint lost).
  const std::string run = dir.path("ctrl-c"), err = dir.path("stderr.txt");
  const pid_t job = startCli("remove " + run + arguments + " --nproc 2 --worker-timeout 60", err, "/dev/null",
                             /*ownGroup=*/true);
  REQUIRE_MSG(waitForCheckpoint(run, job), "the run ended before its first checkpoint");
  ::kill(-job, SIGINT);
  const Finished f = finish(job, err);
  REQUIRE_MSG(f.status == 3, "exit " << f.status << ": " << f.err);
  requireStoppedAtLastStep(run, f.err);
}

// A launcher killed outright (SIGKILL, an OOM kill) takes its workers down with it, gracefully: the kernel
// sends them SIGHUP and they stop with a checkpoint, instead of training on as orphans.
TEST_CASE(workers_stop_with_a_checkpoint_when_their_launcher_is_killed) {
  TempDir dir;
  const std::string arguments = removeArguments(dir, 100000);
  const std::string run = dir.path("run"), err = dir.path("launcher.txt");
  const pid_t launcher = startCli("remove " + run + arguments + " --nproc 2 --worker-timeout 60", err);
  REQUIRE_MSG(waitForCheckpoint(run, launcher), "the run ended before its first checkpoint");
  const pid_t first = workerOf(launcher, 0), second = workerOf(launcher, 1);
  REQUIRE(first > 0 && second > 0);
  ::kill(launcher, SIGKILL);
  REQUIRE_EQ(finish(launcher, err).status, 128 + SIGKILL);
  for (const pid_t worker : {first, second})
    while (!ended(worker))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling, no deadline
  std::ifstream said(err);
  requireStoppedAtLastStep(run, std::string(std::istreambuf_iterator<char>(said), {}));
}

TEST_CASE(a_hanging_worker_is_named_within_the_timeout) {
  TempDir dir;
  const std::string arguments = removeArguments(dir, 100000);
  const std::string run = dir.path("run"), err = dir.path("launcher.txt");
  const pid_t launcher = startCli("remove " + run + arguments + " --nproc 2 --worker-timeout 30", err);
  REQUIRE_MSG(waitForCheckpoint(run, launcher), "the run ended before its first checkpoint");
  const pid_t first = workerOf(launcher, 0), second = workerOf(launcher, 1);
  REQUIRE(first > 0 && second > 0);
  ::kill(second, SIGSTOP);  // hangs: alive, but answers nothing
  // Worker 0 gives up after the timeout (long enough that a loaded machine never trips it before the
  // stop), names worker 1 and exits; the launcher then ends the stopped one (it had waited out the timeout
  // again before doing so).
  const Finished launched = finish(launcher, err);
  REQUIRE_EQ(launched.status, 1);
  REQUIRE_MSG(launched.err.find("worker 1 of 2 stopped answering") != std::string::npos, launched.err);
  REQUIRE_MSG(launched.err.find("worker 0 of 2 exited with status 1") != std::string::npos, launched.err);
  REQUIRE_MSG(
      launched.err.find("worker 0 ended the run; killing the workers still running") != std::string::npos,
      launched.err);
  REQUIRE(ended(second));
}

// A worker that stops on an error of its own is named with that error by the others, not only as one that
// stopped answering. Here two workers resume a run by a relative path, each from its own folder, as on
// machines without a shared file system: worker 1's copy of the run has its config.json but not the
// checkpoint worker 0 resumes from. Worker 0's message is where a user looks first (the other's stderr may
// be on another machine).
TEST_CASE(a_worker_that_fails_on_its_own_is_named_with_its_error_by_the_others) {
  TempDir dir;
  Finished trained = runCli("remove " + dir.path("run") + removeArguments(dir, 30), dir);
  REQUIRE_MSG(trained.status == 0, trained.err);
  std::filesystem::create_directories(dir.path("elsewhere/run"));
  std::filesystem::copy_file(dir.path("run/config.json"), dir.path("elsewhere/run/config.json"));
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", std::to_string(20000 + (::getpid() + 5000) % 10000).c_str(), 1);
  const std::filesystem::path here = std::filesystem::current_path();
  std::filesystem::current_path(dir.path(""));  // a worker starts in the folder it is spawned from
  ::setenv("RANK", "0", 1);
  const std::string resume = "resume run --steps 40 --worker-timeout 60";
  const pid_t worker0 = startCli(resume, dir.path("w0.txt"));
  std::filesystem::current_path(dir.path("elsewhere"));
  ::setenv("RANK", "1", 1);
  const pid_t worker1 = startCli(resume, dir.path("w1.txt"));
  std::filesystem::current_path(here);
  for (const char* name : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) ::unsetenv(name);
  const Finished second = finish(worker1, dir.path("w1.txt")), first = finish(worker0, dir.path("w0.txt"));
  const std::string itsError = "run/checkpoints/step-0000030";
  REQUIRE_MSG(second.status == 1 && second.err.find(itsError) != std::string::npos, second.err);
  REQUIRE_EQ(first.status, 1);
  REQUIRE_MSG(first.err.find("worker 1 of 2: " + itsError) != std::string::npos, first.err);
  REQUIRE_MSG(first.err.find("stopped answering") == std::string::npos, first.err);
}

// A divergence ends every worker with status 4, and the launcher says it for the run, as one process does
// (scripts retry with a lower learning rate on 4); it had said 1.
TEST_CASE(a_diverged_run_of_several_workers_exits_4) {
  TempDir dir;
  std::string arguments = removeArguments(dir, 30);
  arguments.replace(arguments.find("--lr 1e-3"), 9, "--lr 50");
  Finished one = runCli("remove " + dir.path("one") + arguments, dir);
  REQUIRE_MSG(one.status == 4, one.err);
  Finished two = runCli("remove " + dir.path("two") + arguments + " --nproc 2", dir);
  REQUIRE_MSG(two.status == 4, two.err);
}

// A resume trains with worker 0's settings, as a start does: a worker given other settings (another command
// line, a config.json of its own) had taken a step of another size from the same averaged gradients.
TEST_CASE(workers_resume_with_worker_0s_settings) {
  TempDir dir;
  const std::string run = dir.path("run"), one = dir.path("one");
  Finished trained = runCli("remove " + run + removeArguments(dir, 30), dir);
  REQUIRE_MSG(trained.status == 0, trained.err);
  std::filesystem::copy(run, one, std::filesystem::copy_options::recursive);
  Finished alone = runCli("resume " + one + " --steps 40 --lr 2e-3", dir);
  REQUIRE_MSG(alone.status == 0, alone.err);
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", std::to_string(20000 + (::getpid() + 2500) % 10000).c_str(), 1);
  ::setenv("RANK", "0", 1);
  const pid_t worker0 =
      startCli("resume " + run + " --steps 40 --lr 2e-3 --worker-timeout 60", dir.path("w0.txt"));
  ::setenv("RANK", "1", 1);
  const pid_t worker1 =
      startCli("resume " + run + " --steps 50 --lr 9e-3 --worker-timeout 60", dir.path("w1.txt"));
  for (const char* name : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) ::unsetenv(name);
  const Finished second = finish(worker1, dir.path("w1.txt")), first = finish(worker0, dir.path("w0.txt"));
  REQUIRE_MSG(first.status == 0 && second.status == 0, first.err << second.err);
  requireSameSteps(run, one, 40);
}

// Workers pair worker 0's answers by their order alone: one joining a new run beside a worker 0 that
// resumes had read a checkpoint's path as the run's settings and died of a JSON parse error.
TEST_CASE(a_worker_started_with_another_command_than_worker_0s_is_told_so) {
  TempDir dir;
  const std::string run = dir.path("run");
  Finished first = runCli("remove " + run + removeArguments(dir, 30), dir);
  REQUIRE_MSG(first.status == 0, first.err);
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", std::to_string(20000 + ::getpid() % 10000).c_str(), 1);
  ::setenv("RANK", "0", 1);
  const pid_t worker0 = startCli("resume " + run + " --steps 40 --worker-timeout 30", dir.path("w0.txt"));
  ::setenv("RANK", "1", 1);
  const Finished joined = runCli("join " + run + " --worker-timeout 30", dir);
  for (const char* name : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) ::unsetenv(name);
  ::kill(worker0, SIGKILL);  // it would wait out the timeout for the worker that left
  finish(worker0, dir.path("w0.txt"));
  REQUIRE(joined.status != 0);
  REQUIRE_MSG(
      joined.err.find("worker 0 is at finding the checkpoint to resume from, this worker at the start "
                      "of the run") != std::string::npos,
      joined.err);
}

// The workers' agreement check compares what their data files hold: a worker on a machine without a shared
// file system read its own train.bin under the same name and trained another run, unsaid (the averaged
// gradients kept the weights equal).
TEST_CASE(the_data_fingerprint_sees_other_contents_under_the_same_name_and_size) {
  TempDir dir;
  const std::string path = dir.path("train.bin");
  std::string bytes(3 << 20, 'a');
  writeFileAtomic(path, bytes);
  const uint64_t first = sampledFilesFingerprint({path});
  REQUIRE_EQ(sampledFilesFingerprint({path}), first);
  for (const std::size_t at : {std::size_t{10}, bytes.size() - 10}) {  // in the first and in the last MiB
    std::string other = bytes;
    other[at] = 'b';
    writeFileAtomic(path, other);
    REQUIRE(sampledFilesFingerprint({path}) != first);
  }
  REQUIRE(sampledFilesFingerprint({path, path}) != sampledFilesFingerprint({path}));
}

TEST_CASE(nproc_is_refused_inside_a_launched_worker) {
  TempDir dir;
  const std::string arguments = removeArguments(dir, 30);  // the schedule's events fit
  ::setenv("RANK", "0", 1);
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", "29999", 1);
  Finished f = runCli("remove " + dir.path("run") + arguments + " --nproc 2", dir);
  for (const char* name : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) ::unsetenv(name);
  REQUIRE_EQ(f.status, 2);
  REQUIRE_MSG(f.err.find("leave --nproc out") != std::string::npos, f.err);
}

TEST_MAIN()

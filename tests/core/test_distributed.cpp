// Multi-worker runs: who a worker is, read from the torchrun environment the way torchrun and Slurm set it.
#include <map>

#include "check.h"
#include "distributed/worker_environment.h"

using namespace nf;

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
  REQUIRE(
      readWorkerEnvironment(environment(with("TORCH_ELASTIC_USE_AGENT_STORE", "True")))->launcherHostsStore);
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

TEST_MAIN()

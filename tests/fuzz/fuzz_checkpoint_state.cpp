// A checkpoint's state.json as the run directory reads it (run/run_directory.h): its format and version,
// then the optimizer steps it was written after (checkpointStep, which resume and retention rely on).
#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "run/run_directory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& checkpoint = nf::fuzz::scratchDir();
  const std::string path = nf::fuzz::writeInput("state.json", nf::fuzz::asText(data, size));
  nf::fuzz::require(path == nf::run::checkpointStatePath(checkpoint),
                    "state.json is not where the reader looks");
  nf::fuzz::expectOnlyParseErrors([&] {
    nf::fuzz::keep(nf::run::readCheckpointState(checkpoint).size());
    nf::fuzz::require(nf::run::checkpointStep(checkpoint) >= -1, "a checkpoint step below -1");
  });
  return 0;
}

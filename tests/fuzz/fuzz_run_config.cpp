// A run's config.json (train/settings.h): mode, data, optimizer, removal and evaluation settings and the
// schedule. An accepted config is validated as a run validates it and must read back the same.
#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "train/settings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j = nlohmann::json::parse(nf::fuzz::asText(data, size), nullptr, false);
  if (j.is_discarded()) return 0;
  nf::fuzz::expectOnlyParseErrors([&] {
    const nf::RunConfig config = nf::runConfigFromJson(j, "config.json");
    const nlohmann::json written = nf::toJson(config);
    nf::fuzz::require(nf::toJson(nf::runConfigFromJson(written, "written back")) == written,
                      "an accepted run config reads back differently");
    nf::validate(config, "config.json");
  });
  return 0;
}

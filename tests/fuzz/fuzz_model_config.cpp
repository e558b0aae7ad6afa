// A model's config.json (model/config.h): the family's shape fields and the "normfree" block with every
// site's norm state (FakeLN scales, treatments, real_mix). An accepted config must write out and read
// back to the same file.
#include "fuzz_support.h"
#include "model/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(nf::fuzz::asText(data, size));
  nf::fuzz::expectOnlyParseErrors([&] {
    const nf::ModelConfig config = nf::parseConfigJson(text, "config.json");
    const std::string written = nf::configToJson(config);
    nf::ModelConfig reread;
    try {
      reread = nf::parseConfigJson(written, "config.json (written back)");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "finding: an accepted config does not read back: %s\n", e.what());
      std::abort();
    }
    nf::fuzz::require(reread.shape == config.shape, "an accepted config reads back with another shape");
    nf::fuzz::require(nf::configToJson(reread) == written, "an accepted config reads back differently");
  });
  return 0;
}

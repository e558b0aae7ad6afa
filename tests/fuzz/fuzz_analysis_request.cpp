// Analysis requests (analysis/analysis_request.h): what `normfree-cli analyze` and the steering endpoint's
// POST /v1/analyze read — possibly from the network, so every value is type- and range-checked. An accepted
// request must pass the bounds check and read back the same.
#include <nlohmann/json.hpp>

#include "analysis/analysis_request.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j = nlohmann::json::parse(nf::fuzz::asText(data, size), nullptr, false);
  if (j.is_discarded()) return 0;
  nf::fuzz::expectOnlyParseErrors([&] {
    const nf::AnalysisRequest request = nf::analysisRequestFromJson(j);
    nf::checkAnalysisRequest(request);
    const nlohmann::json written = nf::toJson(request);
    nf::fuzz::require(nf::toJson(nf::analysisRequestFromJson(written)) == written,
                      "an accepted analysis request reads back differently");
  });
  return 0;
}

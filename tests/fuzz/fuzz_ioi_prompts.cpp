// IOI prompt sets (data/ioi.h): the prompts, their token ids and the shared name positions that patching
// indexes with. An accepted set must read back the same.
#include <nlohmann/json.hpp>

#include "data/ioi.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j = nlohmann::json::parse(nf::fuzz::asText(data, size), nullptr, false);
  if (j.is_discarded()) return 0;
  nf::fuzz::expectOnlyParseErrors([&] {
    const nf::IoiPromptSet set = nf::ioiPromptSetFromJson(j, "prompts.json");
    // Patching indexes every prompt's activations with these positions.
    for (int64_t position :
         {set.firstNamePosition, set.secondNamePosition, set.subjectPosition, set.endPosition})
      nf::fuzz::require(position >= 0 && position < set.length,
                        "an accepted prompt set has a position outside its prompts");
    for (const nf::IoiPrompt& prompt : set.prompts)
      nf::fuzz::require(static_cast<int64_t>(prompt.clean.size()) == set.length &&
                            static_cast<int64_t>(prompt.corrupted.size()) == set.length,
                        "an accepted prompt set has prompts of another length than it says");
    const nlohmann::json written = nf::toJson(set);
    nf::fuzz::require(nf::toJson(nf::ioiPromptSetFromJson(written, "written back")) == written,
                      "an accepted prompt set reads back differently");
  });
  return 0;
}

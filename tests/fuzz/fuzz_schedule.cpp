// Removal schedules (schedule/schedule.h: schedule.json, a bare list of events too) and the answers to
// schedule edits (schedule/editable_schedule.h: editResultFromJson, what a steering client reads). Both
// readers see every input; an accepted schedule is checked as a run would check it and must read back.
#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "schedule/editable_schedule.h"
#include "schedule/schedule.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j = nlohmann::json::parse(nf::fuzz::asText(data, size), nullptr, false);
  if (j.is_discarded()) return 0;  // nlohmann's own parser is not ours to fuzz
  nf::fuzz::expectOnlyParseErrors([&] {
    const nf::Schedule schedule = nf::scheduleFromJson(j, "schedule.json");
    for (const nf::ScheduleProblem& problem : schedule.problems(12, 1000)) {
      const std::string text = nf::describe(problem);
      nf::fuzz::touch(text.data(), text.size());
    }
    nf::fuzz::require(nf::scheduleFromJson(nf::toJson(schedule), "written back") == schedule,
                      "an accepted schedule reads back differently");
  });
  nf::fuzz::expectOnlyParseErrors([&] {
    const nf::EditResult result = nf::editResultFromJson(j);
    const nf::EditResult reread = nf::editResultFromJson(nf::toJson(result));
    nf::fuzz::require(reread.accepted == result.accepted && reread.eventId == result.eventId &&
                          reread.reason == result.reason,
                      "an accepted edit result reads back differently");
  });
  return 0;
}

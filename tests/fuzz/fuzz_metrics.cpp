// A run's metrics.jsonl (run/metrics_log.h): MetricsFollower cuts the file into lines, in pages of any size,
// refusing (FileError) a log whose first line is a start record of another format or a newer version; each
// line is checked as a record (checkMetricsRecord) and ingested as the workbench plots it (MetricsStore,
// widgets/logic). Paging must change neither the lines nor whether the log is refused.
#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "io/atomic_file.h"
#include "logic/MetricsStore.h"
#include "run/metrics_log.h"
#include "run/run_directory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& runDir = nf::fuzz::scratchDir();
  nf::fuzz::writeInput("metrics.jsonl", nf::fuzz::asText(data, size));
  std::vector<std::string> lines;
  bool refused = false, pagedRefused = false;
  try {
    lines = nf::MetricsFollower(runDir).read().lines;
  } catch (const nf::FileError&) {
    refused = true;
  }

  nf::MetricsFollower paged(runDir);
  std::vector<std::string> pagedLines;
  const int64_t page = 1 + static_cast<int64_t>(size % 61);
  try {
    for (int pass = 0; pass <= static_cast<int>(size); ++pass) {
      const nf::MetricsFollower::NewLines got = paged.read(page);
      if (got.lines.empty()) break;
      pagedLines.insert(pagedLines.end(), got.lines.begin(), got.lines.end());
    }
  } catch (const nf::FileError&) {
    pagedRefused = true;
  }
  nf::fuzz::require(refused == pagedRefused, "reading metrics.jsonl in pages refuses it otherwise");
  if (refused) return 0;
  nf::fuzz::require(pagedLines == lines, "reading metrics.jsonl in pages gives other lines");

  MetricsStore store;
  for (const std::string& line : lines) {
    nf::fuzz::expectOnlyParseErrors([&] {
      const nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
      if (!record.is_discarded()) nf::checkMetricsRecord(record, nf::run::metricsPath(runDir));
    });
    nf::fuzz::expectOnlyParseErrors([&] { store.ingest(line); });
  }
  nf::fuzz::keep(store.steps.step.size() + (store.recentTokensPerSecond() > 0));
  return 0;
}

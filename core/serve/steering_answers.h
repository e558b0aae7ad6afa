// What a run's steering endpoint answers, read as the client reads it (docs/STEERING.md): a metrics page,
// the metrics stream's events, an analysis request's job (serve.json: serve/serve_address.h). Plain C++
// without cpp-httplib, so the fuzz build reaches every reader of what an endpoint — or whatever answers in
// its place — may send.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nf {

struct MetricsPage {
  std::vector<nlohmann::json> records;  // complete records of metrics.jsonl, in order
  int64_t nextOffset = 0;               // where to ask from next
  bool restarted = false;               // the log became shorter (a new run) and is sent from its start
};
// GET /v1/metrics's answer; std::invalid_argument says what is malformed.
MetricsPage metricsPageFromJson(const nlohmann::json& j);

// GET /v1/metrics/stream, read as its pieces arrive: "data: RECORD" events gather into a page, which an
// "id: OFFSET" event completes; "event: restarted" starts the page again from the log's start. Records
// that are not JSON are skipped (a partial line is never sent); comments keep the connection alive.
class MetricsStreamReader {
 public:
  explicit MetricsStreamReader(int64_t offset) { m_page.nextOffset = offset; }
  // Reads the next piece; `onPage` gets each completed page and returns false to stop reading. Returns
  // false once it did. std::invalid_argument for an event id that is no offset.
  bool feed(const char* data, std::size_t size, const std::function<bool(const MetricsPage&)>& onPage);

 private:
  std::string m_text;  // the start of an event not complete yet
  MetricsPage m_page;
};

// POST /v1/analyze's answer: the job's number; std::invalid_argument when it names none.
int64_t analysisJobNumber(const nlohmann::json& answer);

}  // namespace nf

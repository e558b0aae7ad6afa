#include "serve/steering_answers.h"

#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "io/atomic_file.h"
#include "run/metrics_log.h"
#include "util/whole_number.h"

namespace nf {

using json = nlohmann::json;

namespace {
// A served run's log of a newer build is refused at its start record, as one read from disk is.
json checkedRecord(json record) {
  try {
    checkMetricsRecord(record, "its metrics.jsonl");
  } catch (const FileError& e) {
    throw std::invalid_argument(e.what());
  }
  return record;
}
}  // namespace

MetricsPage metricsPageFromJson(const json& j) {
  // Each type checked before it is read: nlohmann::json converts a number like 4e26 to an integer by a
  // plain cast, which is undefined (fuzz_steering_answers found it in "next_offset").
  if (!j.is_object() || !j.contains("records") || !j["records"].is_array())
    throw std::invalid_argument("metrics malformed: no \"records\" list");
  if (!j.contains("next_offset") || !j["next_offset"].is_number_integer() ||
      (j["next_offset"].is_number_unsigned() && j["next_offset"].get<uint64_t>() > INT64_MAX) ||
      j["next_offset"].get<int64_t>() < 0)
    throw std::invalid_argument("metrics malformed: \"next_offset\" is no byte offset");
  if (j.contains("restarted") && !j["restarted"].is_boolean())
    throw std::invalid_argument("metrics malformed: \"restarted\" is not true or false");
  MetricsPage page;
  for (const json& record : j["records"]) page.records.push_back(checkedRecord(record));
  page.nextOffset = j["next_offset"].get<int64_t>();
  page.restarted = j.value("restarted", false);
  return page;
}

bool MetricsStreamReader::feed(const char* data, std::size_t size,
                               const std::function<bool(const MetricsPage&)>& onPage) {
  m_text.append(data, size);
  std::size_t start = 0;
  for (std::size_t end; (end = m_text.find("\n\n", start)) != std::string::npos; start = end + 2) {
    const std::string_view event(m_text.data() + start, end - start);
    if (event.rfind("data: ", 0) == 0) {
      json record = json::parse(event.substr(6), nullptr, false);
      if (!record.is_discarded()) m_page.records.push_back(checkedRecord(std::move(record)));
    } else if (event.rfind("event: restarted", 0) == 0) {
      m_page.records.clear();
      m_page.restarted = true;
    } else if (event.rfind("id: ", 0) == 0) {
      const std::string_view offsetText = event.substr(4);
      const std::optional<int64_t> next = wholeNumber(offsetText);
      if (!next || *next < 0)
        throw std::invalid_argument("an event id that is no offset: '" +
                                    std::string(offsetText.substr(0, 40)) + "'");
      m_page.nextOffset = *next;
      if (!onPage(m_page)) {
        m_text.erase(0, end + 2);
        return false;
      }
      m_page.records.clear();
      m_page.restarted = false;
    }
  }
  m_text.erase(0, start);
  return true;
}

int64_t analysisJobNumber(const json& answer) {
  if (!answer.is_object() || !answer.contains("job") || !answer["job"].is_number_integer())
    throw std::invalid_argument("an analysis request answered without a job");
  return answer["job"].get<int64_t>();
}

}  // namespace nf

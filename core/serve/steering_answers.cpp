#include "serve/steering_answers.h"

#include <charconv>
#include <stdexcept>

namespace nf {

using json = nlohmann::json;

MetricsPage metricsPageFromJson(const json& j) {
  MetricsPage page;
  try {
    page.records = j.at("records").get<std::vector<json>>();
    page.nextOffset = j.at("next_offset").get<int64_t>();
    page.restarted = j.value("restarted", false);
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("metrics malformed: ") + e.what());
  }
  if (page.nextOffset < 0) throw std::invalid_argument("metrics malformed: a negative next_offset");
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
      if (!record.is_discarded()) m_page.records.push_back(std::move(record));
    } else if (event.rfind("event: restarted", 0) == 0) {
      m_page.records.clear();
      m_page.restarted = true;
    } else if (event.rfind("id: ", 0) == 0) {
      const std::string_view offsetText = event.substr(4);
      int64_t next = -1;
      const auto [stop, error] =
          std::from_chars(offsetText.data(), offsetText.data() + offsetText.size(), next);
      if (error != std::errc() || stop != offsetText.data() + offsetText.size() || next < 0)
        throw std::invalid_argument("an event id that is no offset: '" +
                                    std::string(offsetText.substr(0, 40)) + "'");
      m_page.nextOffset = next;
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

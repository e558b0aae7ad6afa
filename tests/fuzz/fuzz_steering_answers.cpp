// What a steering client reads from whatever answers at a run's address (serve/steering_answers.h): the
// input as serve.json, a metrics page and an analysis answer, and as the metrics stream — whole, and in
// pieces of 1–61 bytes, which must give the same pages.
#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "serve/serve_address.h"
#include "serve/steering_answers.h"

namespace {

struct Read {
  std::vector<nf::MetricsPage> pages;
  bool failed = false;
};

bool samePages(const std::vector<nf::MetricsPage>& a, const std::vector<nf::MetricsPage>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].records != b[i].records || a[i].nextOffset != b[i].nextOffset ||
        a[i].restarted != b[i].restarted)
      return false;
  return true;
}

// The stream in pieces of `piece` bytes (0: whole); at most 8 pages are taken, then reading stops.
Read readStream(std::string_view text, std::size_t piece) {
  Read read;
  nf::MetricsStreamReader reader(0);
  auto onPage = [&](const nf::MetricsPage& page) {
    read.pages.push_back(page);
    return read.pages.size() < 8;
  };
  try {
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t n = piece == 0 ? text.size() : std::min(piece, text.size() - at);
      if (!reader.feed(text.data() + at, n, onPage)) break;
      at += n;
    }
  } catch (const std::invalid_argument&) {
    read.failed = true;
  }
  return read;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = nf::fuzz::asText(data, size);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_discarded()) {
    nf::fuzz::expectOnlyParseErrors([&] {
      const nf::ServeAddress address = nf::serveAddressFromJson(j, "serve.json");
      nf::fuzz::require(address.port > 0 && address.port <= 65535, "an accepted serve.json has no port");
    });
    nf::fuzz::expectOnlyParseErrors([&] {
      const nf::MetricsPage page = nf::metricsPageFromJson(j);
      nf::fuzz::require(page.nextOffset >= 0, "an accepted metrics page points before the log");
    });
    nf::fuzz::expectOnlyParseErrors([&] { nf::fuzz::keep(nf::analysisJobNumber(j)); });
  }
  const Read whole = readStream(text, 0), pieces = readStream(text, 1 + size % 61);
  nf::fuzz::require(whole.failed == pieces.failed && samePages(whole.pages, pieces.pages),
                    "the metrics stream read in pieces gives other pages");
  return 0;
}

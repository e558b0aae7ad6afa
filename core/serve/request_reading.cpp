#include "serve/request_reading.h"

#include <httplib.h>

#include <limits>

#include "io/file_format.h"
#include "io/json_read.h"
#include "util/whole_number.h"

namespace nf::serve_request {

using json = nlohmann::json;

namespace {
constexpr std::size_t kMaxRequestId = 128;  // a client's id for an edit, so a retry is applied once
}  // namespace

// A query string is read as strictly as a body: `POST /v1/edit?dry_run=true` had been applied, and
// `?ofset=5000` answered from 0. Each request takes its one parameter, once, or none.
static std::string queryProblem(const httplib::Request& req) {
  const std::string takes = req.path == "/v1/metrics" || req.path == "/v1/metrics/stream" ? "offset"
                            : req.path == "/v1/analysis"                                  ? "job"
                                                                                          : "";
  for (const auto& [name, value] : req.params) {
    if (name != takes)
      return "unknown query parameter '" + name + "' (" +
             (takes.empty() ? std::string("this request takes none") : "this request takes '" + takes + "'") +
             ")";
    if (req.params.count(name) > 1) return "query parameter '" + name + "' given twice";
  }
  return "";
}

std::optional<HeadProblem> headProblem(const httplib::Request& req, uint64_t maxBody) {
  const std::string type = req.get_header_value("Content-Type");
  const uint64_t length = req.get_header_value<uint64_t>("Content-Length");
  if (req.has_header("Transfer-Encoding"))
    return HeadProblem{411, "send the body with a Content-Length (at most 64 KiB), not chunked"};
  if (req.method == "POST" && !req.has_header("Content-Length"))
    return HeadProblem{411, "a POST needs a Content-Length: 0 without a body (curl: -d '')"};
  if (req.path != "/v1/analyze" && length > maxBody)
    return HeadProblem{413, "the request body is too large (at most 64 KiB here)"};
  if (type.rfind("multipart/", 0) == 0)
    return HeadProblem{415, "send the body as JSON (Content-Type: application/json), not multipart"};
  if (type.rfind("application/x-www-form-urlencoded", 0) == 0 &&
      length > CPPHTTPLIB_FORM_URL_ENCODED_PAYLOAD_MAX_LENGTH)
    return HeadProblem{
        413,
        "a body sent as a form (curl -d without -H 'Content-Type: application/json') may be at "
        "most 8 KiB: send it as application/json"};
  if (std::string problem = queryProblem(req); !problem.empty()) return HeadProblem{400, std::move(problem)};
  return std::nullopt;
}

int64_t queryNumber(const httplib::Request& req, const char* name, int64_t otherwise) {
  if (!req.has_param(name)) return otherwise;
  const std::optional<int64_t> value = wholeNumber(req.get_param_value(name));
  if (!value || *value < 0) throw BadRequest(std::string("\"") + name + "\" must be a whole number ≥ 0");
  return *value;
}

std::string requestId(const json& body) {
  const auto id = body.find("request_id");
  if (id == body.end() || !id->is_string() || id->get<std::string>().empty() ||
      id->get<std::string>().size() > kMaxRequestId)
    throw BadRequest("\"request_id\" must be a string of 1 to 128 characters, new for each request");
  return *id;
}

// A request body: one JSON object, whose keys are unique at every level (parseJsonUniqueKeys).
json objectBody(const httplib::Request& req) {
  json body;
  try {
    body = parseJsonUniqueKeys(req.body);
  } catch (const json::exception&) {
    throw BadRequest("the body must be a JSON object");
  } catch (const std::invalid_argument& e) {
    throw BadRequest(e.what());
  }
  if (!body.is_object()) throw BadRequest("the body must be a JSON object");
  return body;
}

int64_t integerField(const json& j, const char* name) {
  const auto it = j.find(name);
  // JSON text holds whole numbers past 2^63 as unsigned; read as int64_t they would wrap to negatives.
  if (it == j.end() || !it->is_number_integer() ||
      (it->is_number_unsigned() && it->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
    throw BadRequest(std::string("\"") + name + "\" must be a whole number below 2^63");
  return it->get<int64_t>();
}

void requireKnownFields(const json& object, std::initializer_list<const char*> known, const char* what) {
  try {
    JsonIn(object, what).requireKnown(known);
  } catch (const std::invalid_argument& e) {
    throw BadRequest(e.what());
  }
}

ScheduleEvent eventToAdd(const json& e) {
  if (!e.is_object()) throw BadRequest("\"add\" must be an event object");
  if (e.contains("id")) throw BadRequest("\"add\": the run gives the new event its id; leave \"id\" out");
  requireKnownFields(e, {"step", "action", "site", "layer"}, "\"add\"");
  integerField(e, "step");
  if (e.contains("layer") && !e["layer"].is_number_integer() && e["layer"] != "all")
    throw BadRequest("\"add\": \"layer\" must be a block index or \"all\"");
  try {
    return scheduleFromJson(json{{"events", json::array({e})}}, "the request").events.at(0);
  } catch (const std::exception& error) {
    throw BadRequest(std::string("\"add\": ") + error.what());
  }
}

}  // namespace nf::serve_request

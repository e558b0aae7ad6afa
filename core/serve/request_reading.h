// What the steering endpoint reads from a request, each field checked: a malformed one is a BadRequest
// (400) naming it, never a default or a guess. Engine-internal (the server's own file and its tests).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

#include "schedule/schedule.h"

namespace httplib {
struct Request;
}

namespace nf::serve_request {

// A malformed request: 400 with the reason.
struct BadRequest : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What is wrong with a request's head, found before its body is read: a status and the reason.
struct HeadProblem {
  int status;
  std::string error;
};
// Its size and kind, and its query: a chunked body (no size to check before it is read: httplib's limit
// holds for Content-Length only), a POST without Content-Length, a body over `maxBody` (an analysis's
// may be larger: the server's own limit), a multipart body (httplib parses it into parts, leaving none to
// read), a form over httplib's compiled limit (a body is JSON whatever its type says: curl -d calls it a
// form), a query parameter the request does not take or takes twice. nullopt when none is.
std::optional<HeadProblem> headProblem(const httplib::Request& req, uint64_t maxBody);
// A request's byte offset or job number (`name` in the query): a whole number ≥ 0 written in decimal, or
// `otherwise` when it is not given.
int64_t queryNumber(const httplib::Request& req, const char* name, int64_t otherwise);
// The client's id of a request that must be applied once however often it is sent (1 to 128 characters).
std::string requestId(const nlohmann::json& body);
// A request body: one JSON object, whose keys are unique at every level.
nlohmann::json objectBody(const httplib::Request& req);
// j[name] as a whole number.
int64_t integerField(const nlohmann::json& j, const char* name);
// Every key of `object` (named `what`) is one of `known`; else the first other one is named.
void requireKnownFields(const nlohmann::json& object, std::initializer_list<const char*> known,
                        const char* what);
// The event of an "add" edit: the schedule file's event form, without an id (the run gives it one).
ScheduleEvent eventToAdd(const nlohmann::json& e);

}  // namespace nf::serve_request

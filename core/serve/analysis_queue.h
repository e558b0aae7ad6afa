// The steering endpoint's bookkeeping, plain C++ without a network so it is tested alone: the answers it
// remembers for retried requests, and its queue of analysis jobs with their states. The server holds its
// own lock around both.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "analysis/analysis_request.h"
#include "util/fnv1a.h"

namespace nf {

// An id sent again with another request: a client bug (an id reused) that a retry's answer would hide.
struct RequestIdReused : std::runtime_error {
  explicit RequestIdReused(const std::string& id)
      : std::runtime_error("the request_id \"" + id +
                           "\" was sent before with another request; a new request needs a new id") {}
};

// What the last `capacity` request ids were answered with, so that a retried request (its answer lost)
// gets that answer again instead of being applied again. The oldest id is forgotten first. Each id keeps
// its request's fingerprint: the same id with another request is refused, not answered as the first. A
// fingerprint, not the text: an analysis request carries up to 32 MiB of benchmark items, and 10,000 ids
// of them had held the serving process's memory for good. (FNV-1a tells a client's mistake, not a forgery:
// a client with the token could do worse than collide.)
template <class Answer>
class RememberedRequests {
 public:
  explicit RememberedRequests(std::size_t capacity) : m_capacity(capacity) {}
  // The answer to `id`, or null when it is new; throws RequestIdReused when it came with another request.
  const Answer* find(const std::string& id, const std::string& request) const {
    const auto it = m_answers.find(id);
    if (it == m_answers.end()) return nullptr;
    if (it->second.first != fingerprint(request)) throw RequestIdReused(id);
    return &it->second.second;
  }
  void remember(const std::string& id, const std::string& request, Answer answer) {
    if (m_answers.insert_or_assign(id, std::make_pair(fingerprint(request), std::move(answer))).second)
      m_order.push_back(id);
    if (m_order.size() > m_capacity) {
      m_answers.erase(m_order.front());
      m_order.pop_front();
    }
  }

 private:
  using Fingerprint = std::pair<std::size_t, uint64_t>;  // the text's length and FNV-1a
  static Fingerprint fingerprint(const std::string& request) {
    Fnv1a f;
    f.add(request);
    return {request.size(), f.hash};
  }
  std::size_t m_capacity;
  std::map<std::string, std::pair<Fingerprint, Answer>> m_answers;  // id → (request's fingerprint, answer)
  std::deque<std::string> m_order;
};

enum class JobState { Queued, Running, Done, Failed };
const char* jobStateName(JobState state);  // "queued", "running", "done", "failed"

// One analysis request and what became of it.
struct AnalysisJob {
  int64_t id = 0;
  std::string model, data;  // model: "now" or "start"; data: the token file's role ("train" or a number)
  AnalysisRequest request;
  JobState state = JobState::Queued;
  std::string task;  // progress: the task, its units done of total, the model's step
  int64_t done = 0, total = 0, step = -1;
  nlohmann::json result;         // when Done
  std::string error;             // when Failed
  bool cancelRequested = false;  // its client no longer wants it: it ends at its next progress report
  bool finished() const { return state == JobState::Done || state == JobState::Failed; }
  nlohmann::json describe() const;  // as GET /v1/analysis answers
};

class AnalysisQueue {
 public:
  // At most maxOpen jobs queued or running; finished ones beyond keepFinished forgotten, oldest first;
  // request ids remembered for retries (longer than the jobs: a late retry is never computed twice).
  AnalysisQueue(std::size_t maxOpen, std::size_t keepFinished, std::size_t rememberedRequests)
      : m_maxOpen(maxOpen), m_keepFinished(keepFinished), m_requests(rememberedRequests) {}

  enum class Outcome { Added, Retried, Forgotten, Full };
  struct Submitted {
    Outcome outcome;
    AnalysisJob job;  // the new job, or the retried request's (Added, Retried)
  };
  // Queues `job` (its id is given here) for request `requestId` (whose text is `request`); a request id
  // seen before gets its job back, or Forgotten once that job is no longer kept; RequestIdReused when it
  // came with another request.
  Submitted submit(const std::string& requestId, const std::string& request, AnalysisJob job);
  AnalysisJob* find(int64_t id);
  // The oldest queued job, now Running (a copy to compute without the lock); none when none is queued.
  std::optional<AnalysisJob> start();
  // A job's end: Done with its result, or Failed with the error (a job forgotten meanwhile is ignored).
  void finish(int64_t id, nlohmann::json result, const std::string& error);
  // Its client no longer wants it: a queued job fails now (kCancelled), a running one is asked to end
  // (cancelRequested, seen at its next progress report), a finished one stays as it is. Null when not kept.
  static constexpr const char* kCancelled = "cancelled by its client";
  const AnalysisJob* cancel(int64_t id);
  bool hasQueued() const;

 private:
  std::size_t m_maxOpen, m_keepFinished;
  std::map<int64_t, AnalysisJob> m_jobs;
  RememberedRequests<int64_t> m_requests;
  int64_t m_lastId = 0;
};

}  // namespace nf

#include "serve/analysis_queue.h"

#include <algorithm>

namespace nf {

const char* jobStateName(JobState state) {
  switch (state) {
    case JobState::Queued:
      return "queued";
    case JobState::Running:
      return "running";
    case JobState::Done:
      return "done";
    case JobState::Failed:
      return "failed";
  }
  return "unknown";
}

nlohmann::json AnalysisJob::describe() const {
  nlohmann::json j{{"job", id},      {"state", jobStateName(state)},
                   {"model", model}, {"data", data},
                   {"task", task},   {"done", done},
                   {"total", total}, {"step", step}};
  if (state == JobState::Done) j["result"] = result;
  if (state == JobState::Failed) j["error"] = error;
  return j;
}

AnalysisQueue::Submitted AnalysisQueue::submit(const std::string& requestId, const std::string& request,
                                               AnalysisJob job) {
  if (const int64_t* seen = m_requests.find(requestId, request)) {
    const auto kept = m_jobs.find(*seen);
    if (kept == m_jobs.end()) return {Outcome::Forgotten, {}};
    return {Outcome::Retried, kept->second};
  }
  const auto open =
      std::count_if(m_jobs.begin(), m_jobs.end(), [](const auto& j) { return !j.second.finished(); });
  if (static_cast<std::size_t>(open) >= m_maxOpen) return {Outcome::Full, {}};
  job.id = ++m_lastId;
  job.state = JobState::Queued;
  m_requests.remember(requestId, request, job.id);
  m_jobs.emplace(job.id, job);
  std::size_t finished = 0;
  for (const auto& [id, j] : m_jobs) finished += j.finished();
  for (auto it = m_jobs.begin(); finished > m_keepFinished && it != m_jobs.end();) {
    if (it->second.finished()) {
      it = m_jobs.erase(it);
      --finished;
    } else {
      ++it;
    }
  }
  return {Outcome::Added, job};
}

AnalysisJob* AnalysisQueue::find(int64_t id) {
  const auto it = m_jobs.find(id);
  return it == m_jobs.end() ? nullptr : &it->second;
}

std::optional<AnalysisJob> AnalysisQueue::start() {
  for (auto& [id, job] : m_jobs)
    if (job.state == JobState::Queued) {
      job.state = JobState::Running;
      return job;
    }
  return std::nullopt;
}

bool AnalysisQueue::hasQueued() const {
  return std::any_of(m_jobs.begin(), m_jobs.end(),
                     [](const auto& j) { return j.second.state == JobState::Queued; });
}

void AnalysisQueue::finish(int64_t id, nlohmann::json result, const std::string& error) {
  AnalysisJob* job = find(id);
  if (!job) return;
  job->state = error.empty() ? JobState::Done : JobState::Failed;
  job->result = std::move(result);
  job->error = error;
  job->request.benchmark.reset();  // a task's items (up to 32 MiB), needed no more once computed
}

const AnalysisJob* AnalysisQueue::cancel(int64_t id) {
  AnalysisJob* job = find(id);
  if (!job || job->finished()) return job;
  if (job->state == JobState::Queued)
    finish(id, nullptr, kCancelled);
  else
    job->cancelRequested = true;
  return job;
}

}  // namespace nf

// A client of a run's steering endpoint (docs/STEERING.md), for the workbench and the tests: typed calls,
// each a blocking request with a timeout (the workbench makes them off its GUI thread). An edit or an
// analysis carries a fresh request id and, when its answer is lost, is sent again with the same id, so the
// run applies it once. Plain C++ header.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "analysis/analysis_request.h"
#include "schedule/editable_schedule.h"
#include "serve/serve_address.h"
#include "serve/steering_answers.h"
#include "util/progress.h"

namespace nf {

// A run's serve.json, written while the run serves. FileError names the file when it is not one.
ServeAddress readServeFile(const std::string& path);
// Where a user says a served run is: its run directory (its serve.json), a serve.json (a copy, for a
// tunnel), or HOST:PORT with `token`. std::invalid_argument says which it is not.
ServeAddress serveAddressOf(const std::string& target, const std::string& token);

// A request the endpoint did not answer as asked: `status` is the HTTP status, 0 when the endpoint could
// not be reached (or went away mid-answer); the message says which address and what it said.
struct SteeringError : std::runtime_error {
  SteeringError(int status, const std::string& what) : std::runtime_error(what), status(status) {}
  int status;
  // The run did not take the request, and may later: no answer (0), or a token it no longer knows (401: a
  // run restarted with a new one). An edit or a control waits; any other answer refuses it.
  bool notTaken() const { return status == 0 || status == 401; }
};

class SteeringClient {
 public:
  // Each request may wait timeoutSeconds to connect and between two pieces of its answer, and at most
  // kTotalTimeoutFactor × as long in all; an answer larger than kMaxAnswerBytes is abandoned. Both end in a
  // SteeringError (status 0) naming the address: an endpoint that trickles or floods never holds us.
  static constexpr double kTotalTimeoutFactor = 6;
  static constexpr std::size_t kMaxAnswerBytes = std::size_t{64} << 20;
  explicit SteeringClient(ServeAddress address, double timeoutSeconds = 10);
  ~SteeringClient();
  SteeringClient(const SteeringClient&) = delete;
  SteeringClient& operator=(const SteeringClient&) = delete;
  const ServeAddress& address() const { return m_address; }

  nlohmann::json status();
  using MetricsPage = nf::MetricsPage;
  MetricsPage metrics(int64_t offset);
  // Follows the metrics stream from `offset`: `onPage` gets each batch of records as the run writes them,
  // until it returns false (then this returns) or the connection ends (SteeringError; reconnect from the
  // last page's nextOffset and nothing is missed).
  void followMetrics(int64_t offset, const std::function<bool(const MetricsPage&)>& onPage);

  // Ends a followMetrics() in progress on another thread (it returns, as if onPage said so), and makes
  // every later one return at once: for a client that is going away.
  void stopFollowing();

  Schedule schedule(int64_t* stepsDone = nullptr);
  // Edits. A caller that may send the same edit again much later (after a reconnect) passes the id of its
  // first try (newRequestId()), so the run applies it once; "" takes a fresh id.
  EditResult add(ScheduleEvent event, const std::string& requestId = {});
  EditResult moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep,
                        const std::string& requestId = {});
  EditResult remove(int64_t id, const std::string& requestId = {});
  std::string newRequestId();

  // Each answers the run's status after the request was taken.
  nlohmann::json pause();
  nlohmann::json continueRun();
  nlohmann::json checkpoint();
  nlohmann::json stop();
  nlohmann::json setAutopilot(bool on);  // the autopilot times the pending removals, or stops

  // An analysis job on the server (model "now" or "start"; data: an evaluation set's number or "train",
  // null for the run's default); returns the job's number. analysisJob() gives its state and result.
  int64_t analyze(const AnalysisRequest& request, const std::string& model = "now",
                  const nlohmann::json& data = nullptr);
  nlohmann::json analysisJob(int64_t job);
  nlohmann::json cancelAnalysis(int64_t job);  // the job's state after: failed, or running until it sees it
  // Polls the job until it is done and returns its result, passing its progress on; throws when it failed
  // (SteeringError naming the address and the server's reason), and Cancelled once `abandoned` says nobody
  // wants it, after asking the server to cancel the job (best effort: it need not compute for no one). A poll
  // that reaches no one is asked again for up to kUnreachableSeconds in a row: the job stays on the server,
  // so a tunnel that drops for a moment costs neither it nor its result.
  static constexpr double kUnreachableSeconds = 120;
  nlohmann::json awaitAnalysis(int64_t job, const ProgressFn& progress = {},
                               const std::function<bool()>& abandoned = {});

 private:
  struct Connection;
  nlohmann::json call(const std::string& method, const std::string& path,
                      const nlohmann::json& body = nullptr);
  // A request that changes the run, sent again with the same id while its answer is lost.
  nlohmann::json once(const std::string& path, nlohmann::json body, const std::string& requestId = {});
  EditResult edit(nlohmann::json body, const std::string& requestId);

  ServeAddress m_address;
  double m_timeoutSeconds;
  std::unique_ptr<Connection> m_connection;
  std::mutex m_streamMutex;        // guards the two below
  Connection* m_stream = nullptr;  // followMetrics()'s connection while it reads
  bool m_stopFollowing = false;
  std::string m_idPrefix;
  std::atomic<int64_t> m_requests{0};
};

}  // namespace nf

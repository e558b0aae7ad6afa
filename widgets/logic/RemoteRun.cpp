#include "logic/RemoteRun.h"

#include <chrono>

namespace {
constexpr double kTimeoutSeconds = 5;
constexpr auto kStatusEvery = std::chrono::seconds(1);
constexpr auto kReconnectAfter = std::chrono::seconds(1);
}  // namespace

RemoteRun::RemoteRun(nf::ServeAddress address)
    : m_address(address), m_stream(address, kTimeoutSeconds), m_control(address, kTimeoutSeconds) {
  m_streamThread = std::thread([this] { streamLoop(); });
  m_controlThread = std::thread([this] { controlLoop(); });
}

RemoteRun::~RemoteRun() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_closing = true;
  }
  m_wake.notify_all();
  m_stream.stopFollowing();
  m_streamThread.join();
  m_controlThread.join();
}

void RemoteRun::request(Control control) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_controls.push_back(control);
  }
  m_wake.notify_all();
}

RemoteRun::News RemoteRun::take() {
  std::lock_guard<std::mutex> lock(m_mutex);
  News news = std::move(m_news);
  m_news = News{};
  m_news.problem = news.problem;  // a state, not an event: it stays until the run answers again
  return news;
}

void RemoteRun::updateProblem() {
  m_news.problem = !m_streamProblem.empty() ? m_streamProblem : m_statusProblem;
}

void RemoteRun::streamLoop() {
  int64_t offset = 0;
  for (;;) {
    try {
      m_stream.followMetrics(offset, [&](const nf::SteeringClient::MetricsPage& page) {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (page.restarted) {
          m_news.restarted = true;
          m_news.lines.clear();
        }
        for (const nlohmann::json& record : page.records) m_news.lines.push_back(record.dump());
        offset = page.nextOffset;
        m_streamProblem.clear();
        updateProblem();
        return !m_closing;
      });
    } catch (const std::exception& e) {  // a SteeringError, or a stream the client could not read
      std::lock_guard<std::mutex> lock(m_mutex);
      m_streamProblem = e.what();
      updateProblem();
    }
    std::unique_lock<std::mutex> lock(m_mutex);
    if (m_wake.wait_for(lock, kReconnectAfter, [&] { return m_closing; })) return;
  }
}

nlohmann::json RemoteRun::send(Control control) {
  switch (control) {
    case Control::Pause:
      return m_control.pause();
    case Control::Continue:
      return m_control.continueRun();
    case Control::Stop:
      return m_control.stop();
    case Control::AutopilotOn:
    case Control::AutopilotOff:
      return m_control.setAutopilot(control == Control::AutopilotOn);
    case Control::Checkpoint:
      break;
  }
  return m_control.checkpoint();
}

void RemoteRun::controlLoop() {
  std::unique_lock<std::mutex> lock(m_mutex);
  for (;;) {
    m_wake.wait_for(lock, kStatusEvery, [&] { return m_closing || !m_controls.empty(); });
    if (m_closing) return;
    const bool asked = !m_controls.empty();  // a control, else the status
    const Control control = asked ? m_controls.front() : Control::Checkpoint;
    if (asked) m_controls.pop_front();
    lock.unlock();
    nlohmann::json status;
    std::string problem, failure;
    try {
      status = asked ? send(control) : m_control.status();
    } catch (const std::exception& e) {
      // A status not had is a problem shown until one comes (it had been dropped unsaid); a control the run
      // did not take waits, and one it answered otherwise failed.
      const auto* steering = dynamic_cast<const nf::SteeringError*>(&e);
      if (!asked || (steering && steering->notTaken()))
        problem = e.what();
      else
        failure = e.what();  // the run answered, only not as asked
    }
    lock.lock();
    // A control the run could not be asked is asked again (each means the same however often it comes).
    if (asked && !problem.empty()) {
      m_controls.push_front(control);
      m_wake.wait_for(lock, kReconnectAfter, [&] { return m_closing; });
    }
    if (status.is_object() && status.contains("stop_requested") && status["stop_requested"] == true)
      m_news.stopRequested = true;
    if (!status.is_null()) m_news.status = std::move(status);
    if (!failure.empty()) m_news.failures.push_back(failure);
    m_statusProblem = problem;
    updateProblem();
  }
}

// A run another process trains and serves (--serve, docs/STEERING.md), as the workbench follows it: the
// metrics stream is read on a thread of its own and re-opened from the last offset whenever it breaks (no
// record is missed or read twice); the run's status is asked for every second on another thread, which
// also sends the controls (pause, continue, stop, checkpoint), so neither a slow stream nor an unreachable
// run ever blocks the caller. The GUI thread collects what arrived with take(). Plain C++: no Qt.
#pragma once
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "serve/steering_client.h"

class RemoteRun {
 public:
  enum class Control { Pause, Continue, Stop, Checkpoint, AutopilotOn, AutopilotOff };

  explicit RemoteRun(nf::ServeAddress address);
  ~RemoteRun();  // ends both threads at once (the stream's socket is closed)
  RemoteRun(const RemoteRun&) = delete;
  RemoteRun& operator=(const RemoteRun&) = delete;
  const nf::ServeAddress& address() const { return m_address; }

  // Queued; its answer is the next status. One the run cannot be asked now is asked once it can.
  void request(Control control);

  struct News {
    bool restarted = false;          // the log became shorter (a new run): drop what came before `lines`
    std::vector<std::string> lines;  // new metrics.jsonl records, in order
    std::optional<nlohmann::json> status;  // the newest status, when one arrived
    bool stopRequested = false;            // one of the statuses since the last take() said so
    std::string problem;                   // why the run cannot be reached or asked now ("" when it can)
    std::vector<std::string> failures;     // controls the run refused or never got, why
  };
  News take();

 private:
  void streamLoop();
  void controlLoop();
  nlohmann::json send(Control control);  // on the control thread: the run's answer, its status
  void updateProblem();                  // News::problem from the two threads' own; caller holds m_mutex

  nf::ServeAddress m_address;
  nf::SteeringClient m_stream, m_control;
  std::mutex m_mutex;  // guards everything below
  std::condition_variable m_wake;
  bool m_closing = false;
  News m_news;
  std::string m_streamProblem, m_statusProblem;
  std::deque<Control> m_controls;
  std::thread m_streamThread, m_controlThread;
};

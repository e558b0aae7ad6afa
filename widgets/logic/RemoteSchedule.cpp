#include "logic/RemoteSchedule.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace {
constexpr double kTimeoutSeconds = 5;  // one request; a lost answer is asked again twice
constexpr auto kRefreshEvery = std::chrono::seconds(1);

struct Edit {
  enum Kind { Add, Move, Delete } kind;
  nf::ScheduleEvent event;                         // Add
  std::vector<std::pair<int64_t, int64_t>> moves;  // Move
  int64_t id = 0;                                  // Delete; Add: the id the local copy gave it
  std::string requestId;
};
}  // namespace

struct RemoteSchedule::Shared {
  Shared(nf::ServeAddress address, nf::Schedule schedule, int layers, int64_t maxSteps, nf::Treatments used,
         Callbacks callbacks)
      : client(std::move(address), kTimeoutSeconds),
        layers(layers),
        maxSteps(maxSteps),
        used(used),
        callbacks(std::move(callbacks)),
        local(std::move(schedule), layers, maxSteps, used) {}

  void sendLoop();
  nf::EditResult send(Edit edit);  // with the ids the run knows (runIds)
  void refresh();                  // the run's schedule replaces the copy, unless an edit came meanwhile
  template <class Call>
  void tell(Call call) {  // a callback, unless the editor is gone
    std::lock_guard<std::mutex> lock(callbackMutex);
    if (!closing) call(callbacks);
  }

  nf::SteeringClient client;
  const int layers;
  const int64_t maxSteps;
  const nf::Treatments used;  // the run's: ending another is refused here as there
  std::mutex callbackMutex;   // held while a callback runs; the editor's destructor clears `closing` under it
  Callbacks callbacks;
  std::atomic<bool> closing{false};

  mutable std::mutex mutex;  // guards everything below
  std::condition_variable wake;
  nf::EditableSchedule local;
  std::deque<Edit> waiting;           // front: in flight
  int64_t edits = 0;                  // edits taken so far: a refresh started before the last one is stale
  std::map<int64_t, int64_t> runIds;  // an added event's local id → the id the run gave it
  std::vector<std::pair<int64_t, int64_t>> renamed;  // runIds the copy has taken, not yet reported
  std::string problem;
};

RemoteSchedule::RemoteSchedule(nf::ServeAddress address, nf::Schedule schedule, int layers, int64_t maxSteps,
                               std::function<int64_t()> stepsDone, Callbacks callbacks, nf::Treatments used)
    : m(std::make_shared<Shared>(std::move(address), std::move(schedule), layers, maxSteps, used,
                                 std::move(callbacks))),
      m_layers(layers),
      m_maxSteps(maxSteps),
      m_stepsDone(std::move(stepsDone)) {
  std::thread([shared = m] { shared->sendLoop(); }).detach();
}

RemoteSchedule::~RemoteSchedule() { close(); }

void RemoteSchedule::close() {
  {
    std::lock_guard<std::mutex> lock(m->callbackMutex);  // no callback runs now or later
    m->closing = true;
  }
  m->wake.notify_all();
}

nf::Schedule RemoteSchedule::schedule() const {
  std::lock_guard<std::mutex> lock(m->mutex);
  return m->local.schedule();
}

std::vector<std::pair<int64_t, int64_t>> RemoteSchedule::takeRenamedIds() {
  std::lock_guard<std::mutex> lock(m->mutex);
  return std::exchange(m->renamed, {});
}

int RemoteSchedule::waitingEdits() const {
  std::lock_guard<std::mutex> lock(m->mutex);
  return static_cast<int>(m->waiting.size());
}

std::string RemoteSchedule::problem() const {
  std::lock_guard<std::mutex> lock(m->mutex);
  return m->problem;
}

nf::EditResult RemoteSchedule::noLongerConnected() const {
  nf::EditRefusal why{nf::EditRefusal::Code::Failed};
  why.detail = "the run at " + m->client.address().text() + " is no longer connected";
  return nf::EditResult::refuse(why);
}

// Checked and made on the local copy (as the run would, at the step the metrics show), queued when taken.
template <class Change>
nf::EditResult RemoteSchedule::edit(Change change, int kind, std::vector<std::pair<int64_t, int64_t>> moves,
                                    nf::ScheduleEvent event, int64_t id) {
  if (m->closing) return noLongerConnected();
  const int64_t done = m_stepsDone();
  std::lock_guard<std::mutex> lock(m->mutex);
  m->local.lockBefore(done);
  const nf::EditResult result = change(m->local);
  if (!result.accepted) return result;
  Edit pending{static_cast<Edit::Kind>(kind), event, std::move(moves), id, m->client.newRequestId()};
  if (pending.kind == Edit::Add) pending.id = result.eventId;
  m->waiting.push_back(std::move(pending));
  ++m->edits;
  m->wake.notify_all();
  return result;
}

nf::EditResult RemoteSchedule::add(nf::ScheduleEvent event) {
  return edit([&](nf::EditableSchedule& s) { return s.add(event); }, Edit::Add, {}, event);
}

nf::EditResult RemoteSchedule::check(const nf::ScheduleEvent& event) const {
  if (m->closing) return noLongerConnected();
  const int64_t done = m_stepsDone();
  std::lock_guard<std::mutex> lock(m->mutex);
  nf::EditableSchedule atRunStep = m->local;  // locked as edit() locks the copy before an add
  atRunStep.lockBefore(done);
  return atRunStep.checkAdd(event);
}

nf::EditResult RemoteSchedule::moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep) {
  return edit([&](nf::EditableSchedule& s) { return s.moveEvents(idAndStep); }, Edit::Move, idAndStep);
}

nf::EditResult RemoteSchedule::remove(int64_t id) {
  return edit([&](nf::EditableSchedule& s) { return s.remove(id); }, Edit::Delete, {}, {}, id);
}

nf::EditResult RemoteSchedule::Shared::send(Edit edit) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto runId = [&](int64_t id) {
      const auto it = runIds.find(id);
      return it == runIds.end() ? id : it->second;
    };
    for (auto& move : edit.moves) move.first = runId(move.first);
    if (edit.kind == Edit::Delete) edit.id = runId(edit.id);
  }
  if (edit.kind == Edit::Add) return client.add(edit.event, edit.requestId);
  if (edit.kind == Edit::Move) return client.moveEvents(edit.moves, edit.requestId);
  return client.remove(edit.id, edit.requestId);
}

void RemoteSchedule::Shared::sendLoop() {
  bool outOfStep = false;  // the copy took something the run did not: show the run's schedule
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    wake.wait_for(lock, kRefreshEvery, [&] { return closing || !waiting.empty(); });
    if (waiting.empty()) {
      if (closing) return;
      lock.unlock();
      refresh();
      outOfStep = false;
      lock.lock();
      continue;
    }
    const Edit pending = waiting.front();
    lock.unlock();
    nf::EditResult answer;
    std::string unreachable;
    try {
      answer = send(pending);
    } catch (const std::exception& e) {
      // Not taken (unreachable, or a token the run no longer knows): sent again later with the same request
      // id, so it is applied once. Any other answer (a malformed edit, a run that cannot write its schedule)
      // refuses it.
      const auto* steering = dynamic_cast<const nf::SteeringError*>(&e);
      if (steering && steering->notTaken()) unreachable = e.what();
      nf::EditRefusal why{nf::EditRefusal::Code::Failed};
      why.detail = e.what();
      answer = nf::EditResult::refuse(why);
    }
    lock.lock();
    if (!unreachable.empty()) {
      problem = unreachable;
      if (closing) return;  // the editor is gone and the run cannot be reached: nothing more to do
      wake.wait_for(lock, kRefreshEvery, [&] { return closing.load(); });
      continue;
    }
    problem.clear();
    waiting.pop_front();
    if (!answer.accepted) {
      // The edits made after it were checked against a copy the run does not hold (one may name the event
      // an add refused here): they are dropped, and the run's schedule is shown instead.
      waiting.clear();
      outOfStep = true;
      lock.unlock();
      tell([&](Callbacks& c) {
        if (c.refused) c.refused(answer);
      });
      lock.lock();
    } else if (pending.kind == Edit::Add && answer.eventId != pending.id) {
      runIds[pending.id] = answer.eventId;  // later edits of this event use the run's id
      outOfStep = true;
    }
    if (outOfStep && waiting.empty()) {
      lock.unlock();
      refresh();
      outOfStep = false;
      lock.lock();
    }
  }
}

void RemoteSchedule::Shared::refresh() {
  int64_t editsBefore;
  {
    std::lock_guard<std::mutex> lock(mutex);
    editsBefore = edits;
  }
  nf::Schedule runs;
  try {
    runs = client.schedule();
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(mutex);
    problem = e.what();
    return;
  }
  bool changed;
  {
    std::lock_guard<std::mutex> lock(mutex);
    problem.clear();
    if (edits != editsBefore || !waiting.empty()) return;  // an edit came meanwhile: ask again later
    changed = !(runs == local.schedule());
    if (changed) {
      const int64_t lockedBefore = local.lockedBefore();
      local = nf::EditableSchedule(runs, layers, maxSteps, used);
      local.lockBefore(lockedBefore);
      renamed.insert(renamed.end(), runIds.begin(), runIds.end());  // the copy now has the run's ids
      runIds.clear();
    }
  }
  if (changed)
    tell([](Callbacks& c) {
      if (c.changed) c.changed();
    });
}

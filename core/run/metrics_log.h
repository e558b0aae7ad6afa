// A run's metrics.jsonl: one JSON record per line — "start"/"resume" (the first carries the format and
// version), "step" (every optimizer step), "event", "edit", "eval", "checkpoint", "warning", "divergence",
// "rollback", "track", "stop"/"finish". A resumed or rolled-back run appends: nothing is ever cut
// (currentHistory). Written by the trainer (MetricsWriter, which also hands each record to in-process
// listeners) and read by the CLI and the GUI as it grows (MetricsFollower). Plain C++ (no torch).
#pragma once
#include <cstdint>
#include <cstdio>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace nf {

// Metric records (one JSON object per string, as in metrics.jsonl) for a listener on another thread.
// The writer only appends under a short lock; the listener drains whenever it likes.
class MetricsQueue {
 public:
  void push(std::string record);
  std::vector<std::string> drain();

 private:
  std::mutex m_mutex;
  std::deque<std::string> m_records;
};

class MetricsWriter {
 public:
  // Appends to runDir's metrics.jsonl, first cutting it to keepBytes; keepBytes < 0 keeps everything (a
  // log of a newer build is refused: FileError).
  MetricsWriter(const std::string& runDir, int64_t keepBytes);
  ~MetricsWriter();
  MetricsWriter(const MetricsWriter&) = delete;
  MetricsWriter& operator=(const MetricsWriter&) = delete;

  // Stamps the record with the time, appends it as one line (one write: a crash leaves at most a partial
  // last line, which readers skip) and hands it to every listener. Throws FileError when the write fails
  // (disk full), with what it wrote of the line cut off again.
  void write(nlohmann::json record);
  // A listener gets every record written from now on; with `replay`, first those this writer wrote
  // before (a run's start and resume warnings are written before anyone can subscribe).
  std::shared_ptr<MetricsQueue> subscribe(bool replay = false);
  int64_t bytesWritten() const;  // the file's length after the last record (kept in checkpoints)
  int64_t bytesFound() const { return m_openedAt; }  // its length when this writer opened it

 private:
  std::string m_path;
  std::FILE* m_file = nullptr;
  int64_t m_openedAt = 0;       // the file's length when this writer opened it
  std::mutex m_listenersMutex;  // also orders writes with subscriptions: no record is missed or repeated
  std::vector<std::weak_ptr<MetricsQueue>> m_listeners;
};

// A run's history as it stands now, from its records in file order. The file keeps every record: a
// "resume" or "rollback" record at step S says the run went on from S steps done, so the trajectory records
// before it that lie beyond S — "step", "eval", "checkpoint" after S, "event" and "track" at or after S: a
// stretch that was trained again — are left out here. Every other record (warnings, the divergence that led
// to a rollback, edits) stays.
std::vector<nlohmann::json> currentHistory(const std::vector<nlohmann::json>& records);

// The fields a "start" record begins with: {"type": "start", "format": …, "version": …}.
nlohmann::json metricsStartRecord();
// Throws FileError(path, …) when a "start" record names another format or a newer version.
void checkMetricsRecord(const nlohmann::json& record, const std::string& path);

// Reads the lines a run's metrics.jsonl has gained since the last call; a file that became shorter (a new
// run in the folder: a resume only appends) is read again from its start. The log's first line, when read,
// is checked (checkMetricsRecord): read() throws FileError for a log of a newer build.
class MetricsFollower {
 public:
  // From byte `offset` of the file on (a line boundary: what completeOffset() said before).
  explicit MetricsFollower(std::string runDir, int64_t offset = 0);
  struct NewLines {
    bool restarted = false;          // the file was truncated: forget what was read before
    std::vector<std::string> lines;  // complete lines only; a partial last line waits for its end
  };
  // At most maxBytes of the file (but a whole line when one is longer), so a long log is read in pages.
  NewLines read(int64_t maxBytes = std::numeric_limits<int64_t>::max());
  int64_t completeOffset() const;  // the byte after the last complete line read
  // Whether the offset it was made with starts a line (0, a byte after a newline, or past the end: that
  // file is read from its start). One inside a line would read a record's tail as a damaged line.
  bool startsAtLine() const;

 private:
  std::string m_path;
  int64_t m_offset = 0;
  std::string m_partial;
  std::string m_tail;  // the last bytes of the complete lines read: a log cut back to them goes on, not anew
  bool m_startChecked = false;  // the first line was read and checked (or lies before where it started)
};

}  // namespace nf

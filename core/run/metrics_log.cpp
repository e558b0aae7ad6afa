#include "run/metrics_log.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/file_format.h"
#include "run/metrics_records.h"
#include "run/run_directory.h"

namespace fs = std::filesystem;

namespace nf {

void MetricsQueue::push(std::string record) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_records.push_back(std::move(record));
}

std::vector<std::string> MetricsQueue::drain() {
  std::lock_guard<std::mutex> lock(m_mutex);
  std::vector<std::string> out(std::make_move_iterator(m_records.begin()),
                               std::make_move_iterator(m_records.end()));
  m_records.clear();
  return out;
}

MetricsWriter::MetricsWriter(const std::string& runDir, int64_t keepBytes)
    : m_path(run::metricsPath(runDir)) {
  if (keepBytes >= 0 && fs::exists(m_path)) fs::resize_file(m_path, static_cast<uintmax_t>(keepBytes));
  if (keepBytes != 0) MetricsFollower(runDir).read(4096);  // never appends to a newer build's log: checked
  m_file = std::fopen(m_path.c_str(), "ab");
  if (!m_file) throw FileError(m_path, "cannot open for appending");
  // Unbuffered: each record is one write(), and the part of one that failed is not left in a buffer to
  // reach the file before the next (write() cuts such a part off again).
  std::setvbuf(m_file, nullptr, _IONBF, 0);
  // A writer killed mid-line left a partial last line: end it, so that it stays one unreadable line
  // (readers skip it) instead of swallowing the next record.
  std::error_code error;
  const auto size = fs::file_size(m_path, error);
  if (!error && size > 0) {
    std::ifstream in(m_path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(size) - 1);
    if (in.get() != '\n' && (std::fputc('\n', m_file) == EOF || std::fflush(m_file) != 0))
      throw FileError(m_path, "cannot be appended to");
  }
  m_openedAt = bytesWritten();
}

MetricsWriter::~MetricsWriter() {
  if (m_file) std::fclose(m_file);
}

void MetricsWriter::write(nlohmann::json record) {
  record["time"] = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string withNewline = line + "\n";
  std::lock_guard<std::mutex> lock(m_listenersMutex);
  const int64_t before = bytesWritten();
  if (std::fwrite(withNewline.data(), 1, withNewline.size(), m_file) != withNewline.size() ||
      std::fflush(m_file) != 0) {
    // The part written would run into the next record, losing both to readers: cut it off.
    std::clearerr(m_file);
    if (::ftruncate(::fileno(m_file), static_cast<off_t>(before)) == 0) std::fseek(m_file, 0, SEEK_END);
    throw FileError(m_path, "write failed (disk full?)");
  }
  for (auto it = m_listeners.begin(); it != m_listeners.end();) {
    if (auto queue = it->lock()) {
      queue->push(line);
      ++it;
    } else {
      it = m_listeners.erase(it);
    }
  }
}

std::shared_ptr<MetricsQueue> MetricsWriter::subscribe(bool replay) {
  auto queue = std::make_shared<MetricsQueue>();
  std::lock_guard<std::mutex> lock(m_listenersMutex);
  if (replay) {  // read back from the file: nothing is kept in memory for a listener that may never come
    std::ifstream in(m_path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(m_openedAt));
    std::string line;
    for (int64_t at = m_openedAt, end = bytesWritten(); at < end && std::getline(in, line);)
      if (at += static_cast<int64_t>(line.size()) + 1; !line.empty()) queue->push(line);
  }
  m_listeners.push_back(queue);
  return queue;
}

int64_t MetricsWriter::bytesWritten() const { return static_cast<int64_t>(std::ftell(m_file)); }

nlohmann::json metricsStartRecord() {
  return {
      {record::kType, record::kStart}, {"format", kMetricsFormat.name}, {"version", kMetricsFormat.version}};
}

void checkMetricsRecord(const nlohmann::json& record, const std::string& path) {
  // Logs written before the format was versioned have a start record without "format": version 1.
  if (record.is_object() && record.contains(record::kType) && record[record::kType] == record::kStart)
    checkFileFormat(record, kMetricsFormat, path, WhenUnmarked::IsVersion1);
}

MetricsFollower::MetricsFollower(std::string runDir, int64_t offset)
    : m_path(run::metricsPath(runDir)), m_offset(offset), m_startChecked(offset > 0) {}

int64_t MetricsFollower::completeOffset() const { return m_offset - static_cast<int64_t>(m_partial.size()); }

bool MetricsFollower::startsAtLine() const {
  if (m_offset == 0) return true;
  std::error_code error;
  const auto size = static_cast<int64_t>(fs::file_size(m_path, error));
  if (error || size < m_offset) return true;
  std::ifstream in(m_path, std::ios::binary);
  in.seekg(m_offset - 1);
  return in.get() == '\n';
}

MetricsFollower::NewLines MetricsFollower::read(int64_t maxBytes) {
  NewLines out;
  std::error_code error;
  const auto size = static_cast<int64_t>(fs::file_size(m_path, error));
  if (error) return out;
  // The file still ends its complete lines with the bytes read there (a new run in the folder, grown past
  // them, would not — or only by chance of 64 bytes).
  auto stillHoldsTail = [&] {
    std::string bytes(m_tail.size(), '\0');
    std::ifstream in(m_path, std::ios::binary);
    in.seekg(completeOffset() - static_cast<int64_t>(m_tail.size()));
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return in.gcount() == static_cast<std::streamsize>(bytes.size()) && bytes == m_tail;
  };
  if (size < m_offset && size >= completeOffset() && stillHoldsTail()) {
    // Only the partial line read went: a record that did not fit, cut off by its writer
    // (MetricsWriter::write).
    m_offset = completeOffset();
    m_partial.clear();
  } else if (size < m_offset) {  // shorter: a new run in the folder (a resume only appends)
    out.restarted = true;
    m_offset = 0;
    m_partial.clear();
    m_tail.clear();
    m_startChecked = false;
  }
  if (size == m_offset) return out;
  const int64_t offsetBefore = m_offset;  // a refused log is read again, and refused again, next time
  const std::string partialBefore = m_partial, tailBefore = m_tail;
  std::ifstream in(m_path, std::ios::binary);
  if (!in) return out;
  in.seekg(m_offset);
  while (m_offset < size && out.lines.empty()) {  // a page, or more until one line is complete
    std::string bytes(static_cast<size_t>(std::min(size - m_offset, std::max<int64_t>(maxBytes, 1))), '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    bytes.resize(static_cast<size_t>(in.gcount()));
    if (bytes.empty()) break;
    m_offset += static_cast<int64_t>(bytes.size());
    m_partial += bytes;
    size_t start = 0;
    for (size_t newline; (newline = m_partial.find('\n', start)) != std::string::npos; start = newline + 1)
      out.lines.push_back(m_partial.substr(start, newline - start));
    m_tail += m_partial.substr(0, start);
    m_tail.erase(0, m_tail.size() > 64 ? m_tail.size() - 64 : 0);
    m_partial.erase(0, start);
  }
  if (!m_startChecked && !out.lines.empty()) {  // the log's first line: a newer build's log is refused
    try {
      checkMetricsRecord(nlohmann::json::parse(out.lines.front(), nullptr, false), m_path);
    } catch (...) {
      m_offset = offsetBefore;
      m_partial = partialBefore;
      m_tail = tailBefore;
      throw;
    }
    m_startChecked = true;
  }
  return out;
}

std::vector<nlohmann::json> currentHistory(const std::vector<nlohmann::json>& records) {
  std::vector<nlohmann::json> kept;
  // A damaged record (a field of another type) counts as none of the kinds, at step 0, never as an error.
  const auto typeOf = [](const nlohmann::json& r) {
    const auto type = r.is_object() ? r.find(record::kType) : r.end();
    return type != r.end() && type->is_string() ? type->get<std::string>() : std::string();
  };
  const auto stepOf = [](const nlohmann::json& r) {
    const auto step = r.is_object() ? r.find("step") : r.end();
    return step != r.end() && step->is_number_integer() ? step->get<int64_t>() : int64_t{0};
  };
  for (const nlohmann::json& r : records) {
    const std::string type = typeOf(r);
    if (type == record::kResume || type == record::kRollback) {
      const int64_t from = stepOf(r);
      std::vector<nlohmann::json> before;
      for (nlohmann::json& k : kept) {
        const std::string t = typeOf(k);
        const int64_t step = stepOf(k);
        const bool abandoned =
            ((t == record::kStep || t == record::kEval || t == record::kCheckpoint) && step > from) ||
            ((t == record::kEvent || t == record::kTrack) && step >= from);
        if (!abandoned) before.push_back(std::move(k));
      }
      kept = std::move(before);
    }
    kept.push_back(r);
  }
  return kept;
}

}  // namespace nf

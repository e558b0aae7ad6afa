// Parses metrics.jsonl records into the training view's series (see MetricsStore.h).
#include "logic/MetricsStore.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

#include "run/metrics_records.h"
namespace {
double number(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
}
// A whole-number field, or `otherwise` when it is missing, not whole or out of range (a step of 1e40 in a
// damaged line is no step).
int64_t whole(const nlohmann::json& j, const char* key, int64_t otherwise) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return otherwise;
  if (it->is_number_unsigned() && it->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    return otherwise;
  return it->get<int64_t>();
}
// A text field, or `otherwise` when it is missing or not text.
std::string text(const nlohmann::json& j, const char* key, const std::string& otherwise) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : otherwise;
}
std::string baseName(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
}  // namespace

bool MetricsStore::ingest(const std::string& line) {
  nlohmann::json r = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  using namespace nf;
  if (!r.is_object() || !r.contains(record::kType) || !r[record::kType].is_string()) return false;
  const std::string type = r[record::kType];
  if (type == record::kStep) {
    const double step = number(r, "step");
    // Steps after a resume or rollback come after a rewind; a followed file can be re-read: keep steps
    // increasing.
    if (!steps.step.empty() && step <= steps.step.back()) return false;
    steps.step.push_back(step);
    steps.ce.push_back(number(r, "ce"));
    steps.aux.push_back(number(r, "aux"));
    steps.loss.push_back(number(r, "loss"));
    steps.lr.push_back(number(r, "lr"));
    steps.gradNorm.push_back(number(r, "grad_norm"));
    steps.tokensPerSecond.push_back(number(r, "tokens_per_second"));
    const int64_t workers = whole(r, "world_size", 1);
    worldSize = workers >= 1 && workers <= 1 << 20 ? static_cast<int>(workers) : 1;
    workerTokensPerSecond.clear();
    if (auto it = r.find("worker_tokens_per_second"); it != r.end() && it->is_array())
      for (const auto& pace : *it)
        workerTokensPerSecond.push_back(pace.is_number() ? pace.get<double>() : 0.0);
    if (auto it = r.find("scales"); it != r.end() && it->is_object())
      for (const auto& [site, s] : it->items())
        scales[site].push_back({step, number(s, "tracked"), number(s, "frozen")});
  } else if (type == record::kEval) {
    const std::string file = text(r, "file", "eval");
    std::string series = baseName(file);  // else its path, else its path and a number: a name of its own
    for (int n = 2;; ++n) {
      if (const auto [it, first] = evalFiles.emplace(series, file); first || it->second == file) break;
      series = n == 2 ? file : file + " (" + std::to_string(n) + ")";
    }
    evals[series].push_back({number(r, "step"), number(r, "mean_loss")});
  } else if (type == record::kEvent) {
    events.push_back({whole(r, "step", 0), text(r, "description", "")});
  } else if (type == record::kTrack) {
    const double step = number(r, "step");
    const auto values = r.find("values");
    if (std::isnan(step) || values == r.end() || !values->is_object()) return false;
    const auto event = r.find("event");
    const bool atEvent = event != r.end() && event->is_boolean() && event->get<bool>();
    for (const auto& [name, value] : values->items()) {
      if (!value.is_number()) continue;
      TrackedSeries& series = tracked[name];
      if (const auto data = r.find("data"); data != r.end() && data->is_object())
        series.data = text(*data, name.c_str(), series.data);
      // A step measured again (a followed file read twice, a stretch trained again) replaces the old.
      while (!series.points.empty() && series.points.back().step >= step) series.points.pop_back();
      TrackedPoint point{step, atEvent, value.get<double>(), {}};
      if (auto layers = r.find("per_layer"); layers != r.end() && layers->is_object()) {
        const auto perLayer = layers->find(name);
        if (perLayer != layers->end() && perLayer->is_array())
          for (const auto& v : *perLayer)
            point.perLayer.push_back(v.is_number() ? v.get<double>()
                                                   : std::numeric_limits<double>::quiet_NaN());
      }
      series.points.push_back(std::move(point));
      if (auto seconds = r.find("seconds"); seconds != r.end() && seconds->is_object()) {
        const double took = number(*seconds, name.c_str());
        if (std::isfinite(took) && took >= 0) {
          series.totalSeconds += took;
          ++series.measured;
        }
      }
    }
  } else if (type == record::kCheckpoint) {
    lastCheckpointStep = whole(r, "step", -1);
    lastCheckpointBytes = number(r, "bytes");
  } else if (type == record::kWarning) {
    lastWarning = text(r, "message", "");
    lastWarningCode = text(r, "code", "");
  } else if (type == record::kRollback) {
    rewindTo(whole(r, "step", 0));
  } else if (record::isRunStatus(type)) {
    lastStatus = type;
    finishReason = type == record::kFinish ? text(r, "reason", "") : "";
    if (type == record::kResume) {
      rewindTo(whole(r, "step", 0));
      // `resume --steps N` gave the run a new budget: the resume record's overrides say so.
      if (auto it = r.find("overrides"); it != r.end() && it->is_object())
        if (const int64_t budget = whole(*it, "max_steps", 0); budget > 0) maxSteps = budget;
    }
    if (type == record::kStart) {
      mode = text(r, "mode", "");
      maxSteps = whole(r, "max_steps", 0);
    }
  }
  return true;
}

void MetricsStore::rewindTo(int64_t stepsDone) {
  const double last = static_cast<double>(stepsDone);
  std::size_t keep = 0;
  while (keep < steps.step.size() && steps.step[keep] <= last) ++keep;
  bool changed = keep < steps.step.size();
  for (std::vector<double>* series :
       {&steps.step, &steps.ce, &steps.aux, &steps.loss, &steps.lr, &steps.gradNorm, &steps.tokensPerSecond})
    series->resize(keep);
  auto dropWhile = [&changed](auto& points, auto undone) {
    for (; !points.empty() && undone(static_cast<double>(points.back().step)); changed = true)
      points.pop_back();
  };
  auto after = [last](double step) { return step > last; };
  for (auto& [file, points] : evals) dropWhile(points, after);
  for (auto& [site, points] : scales) dropWhile(points, after);
  // An event fires before its step's batch: those at or after stepsDone fire again, and are measured again.
  // Also when no step after stepsDone was logged (a resume at the step the run was stopped or killed at).
  auto atOrAfter = [last](double step) { return step >= last; };
  dropWhile(events, atOrAfter);
  for (auto& [name, series] : tracked) dropWhile(series.points, atOrAfter);
  lastCheckpointStep = std::min(lastCheckpointStep, stepsDone);  // the next one may be of an undone step
  if (changed) ++generation;                                     // else the plots stay as they are
}

void MetricsStore::clear() {
  const int64_t next = generation + 1;
  *this = MetricsStore();
  generation = next;
}

double MetricsStore::recentTokensPerSecond(size_t window) const {
  const auto& t = steps.tokensPerSecond;
  if (t.empty()) return 0;
  const size_t n = std::min(window, t.size());
  double sum = 0;
  for (size_t i = t.size() - n; i < t.size(); ++i) sum += t[i];
  return sum / static_cast<double>(n);
}

std::map<std::string, double> MetricsStore::frozenScales() const {
  std::map<std::string, double> frozen;
  for (const auto& [site, points] : scales)
    for (auto it = points.rbegin(); it != points.rend(); ++it)
      if (!std::isnan(it->frozen)) {
        frozen[site] = it->frozen;
        break;
      }
  return frozen;
}

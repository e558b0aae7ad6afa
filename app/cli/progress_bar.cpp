#include "progress_bar.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

namespace nf::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::string amount(double value, const std::string& unit) {
  char text[64];
  if (unit == "B")
    std::snprintf(text, sizeof text, "%.1f MB", value / 1e6);
  else if (value >= 1e6)
    std::snprintf(text, sizeof text, "%.2fM %s", value / 1e6, unit.c_str());
  else
    std::snprintf(text, sizeof text, "%.0f %s", value, unit.c_str());
  return text;
}

std::string duration(double seconds) {
  char text[32];
  const auto s = static_cast<long>(seconds + 0.5);
  std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  return text;
}

struct BarState {
  std::string task;
  Clock::time_point start, lastDraw;
  int lastDecile = -1;
};

}  // namespace

ProgressFn progressBar() {
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  auto state = std::make_shared<BarState>();
  return [terminal, state](const Progress& p) {
    const auto now = Clock::now();
    if (p.task != state->task) *state = {p.task, now, now - std::chrono::seconds(1), -1};
    const double fraction = p.total > 0 ? std::min(1.0, static_cast<double>(p.done) / p.total) : 0.0;
    const int decile = static_cast<int>(fraction * 10);
    if (!p.finished) {
      if (terminal && now - state->lastDraw < std::chrono::milliseconds(100)) return;
      if (!terminal && decile == state->lastDecile) return;
    }
    state->lastDraw = now;
    state->lastDecile = decile;
    const double elapsed = std::chrono::duration<double>(now - state->start).count();
    const double rate = elapsed > 0 ? p.done / elapsed : 0;
    std::string line = p.task;
    if (p.total > 0) {
      constexpr int kWidth = 24;
      const int filled = static_cast<int>(fraction * kWidth);
      line += " [" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] ";
      line += std::to_string(static_cast<int>(fraction * 100)) + "%  " + amount(p.done, p.unit) + " / " +
              amount(p.total, p.unit);
    } else {
      line += "  " + amount(p.done, p.unit);
    }
    if (rate > 0) line += "  " + amount(rate, p.unit) + "/s";
    if (!p.detail.empty()) line += "  " + p.detail;
    if (p.finished)
      line += "  done in " + duration(elapsed);
    else if (rate > 0 && p.total > 0)
      line += "  ETA " + duration((p.total - p.done) / rate);
    std::fprintf(stderr, terminal ? "\r\033[K%s%s" : "%s%s", line.c_str(),
                 (p.finished || !terminal) ? "\n" : "");
    std::fflush(stderr);
  };
}

}  // namespace nf::cli

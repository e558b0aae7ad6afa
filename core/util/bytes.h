// A byte count for people: "512 B", "3.42 MiB", "71.3 GiB" (binary units, three significant digits).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace nf {

inline std::string formatBytes(int64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (std::abs(value) >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(text, sizeof text,
                  std::abs(value) >= 100  ? "%.0f %s"
                  : std::abs(value) >= 10 ? "%.1f %s"
                                          : "%.2f %s",
                  value, units[unit]);
  return text;
}

}  // namespace nf

#include "logic/WindowPlacement.h"

#include <algorithm>

namespace {
constexpr int kFirstWidth = 1500, kFirstHeight = 950;
}  // namespace

ScreenRect firstWindowRect(const ScreenRect& available) {
  const int width = std::min(kFirstWidth, available.width), height = std::min(kFirstHeight, available.height);
  // Centred in the available area.
  return {available.x + (available.width - width) / 2, available.y + (available.height - height) / 2, width,
          height};
}

ScreenRect fitWindowRect(const ScreenRect& wanted, const ScreenRect& available) {
  ScreenRect r = wanted;
  r.width = std::clamp(r.width, 1, std::max(1, available.width));
  r.height = std::clamp(r.height, 1, std::max(1, available.height));
  r.x = std::clamp(r.x, available.x, available.x + available.width - r.width);
  r.y = std::clamp(r.y, available.y, available.y + available.height - r.height);
  return r;
}

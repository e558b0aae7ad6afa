// How long-running engine work (tokenizing, training a tokenizer, evaluating) reports progress without
// knowing who listens: the CLI draws a bar on stderr, the GUI a progress bar.
#pragma once
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace nf {

struct Progress {
  std::string task;   // e.g. "tokenize train.txt"
  int64_t done = 0;   // units finished so far
  int64_t total = 0;  // units in all; 0 when unknown
  std::string unit;   // "B" (bytes, shown as MB), "tokens", "merges", "chunks" …
  bool finished = false;
  std::string detail = {};  // shown after the bar, e.g. "loss 3.21  next: step 90 LN_qk.0 → fake"
};

using ProgressFn = std::function<void(const Progress&)>;

// Thrown from a ProgressFn (or a wait) to abandon work nobody wants any more: the window closed, another
// model was opened, the server stops. Whoever started the work catches it; it is never an error to show.
class Cancelled : public std::runtime_error {
 public:
  explicit Cancelled(const std::string& why = "cancelled") : std::runtime_error(why) {}
};

}  // namespace nf

// A progress bar on stderr for long commands: redrawn in place on a terminal, a line per ~10% in logs.
#pragma once
#include "util/progress.h"

namespace nf::cli {

// A ProgressFn that draws; stdout stays clean for the JSON result.
ProgressFn progressBar();

}  // namespace nf::cli

// Downstream benchmarks as lm-evaluation-harness poses them (zero-shot; `lm_eval/tasks/*`): each task's file,
// as researchers have it, read into the log-likelihood requests the harness would send a model. Torch-free;
// eval/benchmark.h scores them.
//
// A multiple-choice item asks one log-likelihood per choice — of a continuation (" " + the choice) after a
// context (HellaSwag, PIQA, BoolQ, ARC), or of one shared continuation after a context per choice
// (WinoGrande's partial scoring); the highest sum wins (acc), or the highest sum per character of the choice
// (acc_norm). LAMBADA asks one: the last word after the rest of the text (acc: every token the greedy
// choice; perplexity).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nf {

enum class BenchmarkTask { HellaSwag, Piqa, WinoGrande, BoolQ, ArcEasy, ArcChallenge, Lambada };

const std::vector<BenchmarkTask>& allBenchmarkTasks();
const char* benchmarkTaskName(BenchmarkTask task);  // "hellaswag", "piqa", …, "arc_easy", "lambada"
// Throws std::invalid_argument listing the names for an unknown one.
BenchmarkTask parseBenchmarkTask(const std::string& name);
// Whether the harness reports acc_norm for the task (HellaSwag, PIQA, ARC; not BoolQ, WinoGrande, LAMBADA).
bool reportsAccNorm(BenchmarkTask task);
// The tasks whose file `folder` holds under one of its distributed names (docs/DOWNSTREAM.md), in
// allBenchmarkTasks()'s order.
std::vector<BenchmarkTask> benchmarkTasksIn(const std::string& folder);

// One log-likelihood request: log p(continuation | context), both as text.
struct LoglikelihoodRequest {
  std::string context, continuation;
};

struct BenchmarkItem {
  std::vector<LoglikelihoodRequest> requests;  // one per choice (LAMBADA: one)
  std::vector<std::size_t> choiceLengths;      // characters of each choice, without the delimiter
  int gold = 0;                                // the right choice's index
  int64_t line = 0;                            // where it was read, for messages and per-item output
};

struct BenchmarkData {
  BenchmarkTask task = BenchmarkTask::HellaSwag;
  std::string file;
  std::vector<BenchmarkItem> items;
};

// A file holds one task's items: several tasks need a folder. Throws std::invalid_argument naming the tasks
// when `path` is a file and `tasks` names more than one (arc_easy and arc_challenge would otherwise
// both be scored on the one file).
void requireOneTaskPerFile(const std::vector<BenchmarkTask>& tasks, const std::string& path);

// Reads the task's file: `path` is the file itself or a folder holding it under one of its distributed
// names (PIQA's labels: valid-labels.lst beside valid.jsonl, unless every line has "label"). limit > 0
// keeps the first `limit` items. Strict: a line that is not JSON, a missing or mistyped field, a label
// outside the choices, a WinoGrande sentence without "_" — FileError naming the file and line.
BenchmarkData readBenchmark(BenchmarkTask task, const std::string& path, int64_t limit = 0);

// The harness's text rules, exposed for tests.
// Python's str.isspace() of one code point: the Unicode White_Space characters and U+001C…U+001F.
bool pythonIsSpace(char32_t codePoint);
// Python's str.strip() and str.rstrip() without arguments, on UTF-8: the code points pythonIsSpace
// accepts (U+00A0, U+3000, …), not ASCII whitespace alone.
std::string pythonStrip(const std::string& text);
std::string pythonRstrip(const std::string& text);
// Python's str.capitalize() on ASCII: the first character upper case, the rest lower case (other bytes
// are kept as they are).
std::string pythonCapitalize(const std::string& text);
// HellaSwag's preprocess: strip, " [title]" → ". ", every "[…]" removed (not across lines), "  " → " ".
std::string hellaswagPreprocess(const std::string& text);

}  // namespace nf

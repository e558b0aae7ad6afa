// What the analyze commands take on the command line — which model, where to run and write, which token
// data, which IOI prompts — and the analysis run from them, with what a user should know said on stderr.
// A room of its own: analyze_commands.cpp declares each analysis's own options and prints its result.
#pragma once
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "analysis/analysis_request.h"
#include "options.h"
#include "text/tokenizer.h"

namespace nf::cli {

// What every analysis takes: which model, where to run, where to write.
struct ModelOptions {
  std::string model, device = "cpu", out;
  std::optional<int64_t> step;
};

// What the analyses of a token file take.
struct DataOptions {
  std::string data;
  int64_t sequences = 32;
  std::optional<int64_t> length;
  bool documentStarts = false;
};

// What the analyses of an IOI prompt set take.
struct PromptOptions {
  std::string prompts;
  int64_t count = 96, seed = 0;
  int frame = 0;
};

void addModelOptions(CLI::App& command, ModelOptions& o);
// withSequences: the analysis reads several sequences (all but tokens, which reads one).
void addDataOptions(CLI::App& command, DataOptions& o, bool withSequences = true);
void addPromptOptions(CLI::App& command, PromptOptions& o);

AnalysisRequest requestFor(const std::string& kind, const PromptOptions& o);
AnalysisRequest requestFor(const std::string& kind, const DataOptions& o);  // the request's data settings
// --trace-sequence: one of the sequences read, from 0 (an option of dla and logit-lens).
void addTraceSequence(CLI::App& command, int64_t& traceSequence, const char* help);
void requireTraceSequenceRead(int64_t traceSequence, const DataOptions& o);
// The model asked for (a run's checkpoint with --step), on its device; UsageError for a missing checkpoint.
SnapshotPtr snapshotFrom(const ModelOptions& o);
// The tokenizer that goes with a model: its own folder's, or for a checkpoint, that of the model the run
// started from. Empty when there is none (results then carry token ids only).
std::shared_ptr<const Tokenizer> tokenizerFor(const ModelSnapshot& snapshot);
// The prompt set given, read here (a server reads no file a request names), or none: made from the tokenizer.
AnalysisSources sourcesFor(const PromptOptions& o, const ModelSnapshot& snapshot);

// The analysis, its errors of usage (a head or length the model does not have) said as such.
AnalysisOutput analyse(const AnalysisRequest& request, const ModelSnapshot& snapshot,
                       const AnalysisSources& sources);
// The same on a token file; a file shorter than asked (fewer sequences, narrower-looking intervals) is said.
AnalysisOutput analyse(const AnalysisRequest& request, const ModelSnapshot& snapshot, const DataOptions& o);
// The result on stdout, or atomically in --out.
void emit(const ModelOptions& o, const nlohmann::json& result);

}  // namespace nf::cli

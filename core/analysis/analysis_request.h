// One analysis of one model, as `normfree-cli analyze KIND` and the steering endpoint (POST /v1/analyze)
// ask for it: the settings are read and checked in one place and the answer is the same JSON
// (docs/ANALYSES.md), so what a server computes on its running model is what the CLI computes on the
// checkpoint of the same step. Plain C++ header.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "data/ioi.h"
#include "eval/benchmark_tasks.h"
#include "run/snapshot.h"
#include "text/tokenizer.h"
#include "util/progress.h"

namespace nf {

struct AnalysisRequest {
  std::string kind;  // one of analysisKinds()
  // The analyses of token sequences (all but patching): consecutive chunks from the start of the data.
  int64_t sequences = 32;
  int64_t length = 0;                 // tokens per sequence; 0: the model's context
  bool documentStarts = false;        // each sequence starts at a document, with the end-of-text before it
  int bins = 40;                      // norms: histogram bins per site
  double threshold = 0.3;             // sinks: attention to position 0 that makes a sink
  int traceLayer = 0, traceHead = 0;  // dla: the head whose per-position values are reported,
  int64_t traceSequence = 0;          //      on this sequence (logit-lens: the sequence traced),
  bool tracePattern = false;          //      with its attention pattern there (length ≤ 512)
  int bootstrap = 1000;               // dla: resamples of the sequences for the overall NMAE's interval
  uint64_t seed = 0;                  // dla's bootstrap, patching's prompts, calibration's sampling
  int64_t ioiCount = 96;              // patching: IOI prompts to make (a multiple of 4)
  int ioiFrame = 0;                   //           from this sentence frame
  bool headPositions = true;          //           and the (layer, head) × position grid
  std::string method = "eap";         // circuit: "eap" or "eap-ig" (on the patching analysis's prompts)
  int steps = 5;                      //          eap-ig's interpolation steps
  int64_t edges = 0;                  //          the circuit's top edges (0: the fewest that keep `keep`)
  double keep = 0.8;                  //          the faithfulness such a circuit reaches
  int64_t check = 32;                 //          top edges whose score is checked by patching each alone
  // tokens: the attention patterns of these heads (layer, head) on the traced sequence, whole.
  std::vector<std::pair<int, int>> heads;
  int top = 10;  // neurons: the neurons to ablate and compare; logit-lens: the top tokens per
                 // (layer, position) of the traced sequence, kLensTop unless asked
  static constexpr int kLensTop = 5;
  std::vector<std::string> prompts{"Once upon a time", "Mary and John went to the"};  // calibration
  int64_t newTokens = 30;
  double temperature = 1.0;
  // benchmark: one task's items, carried whole — a server never reads a file named in a request.
  std::shared_ptr<const BenchmarkData> benchmark;
};

// Bounds of one request: generous for a researcher, finite for a server. The CLI's options show the same.
struct AnalysisLimits {
  static constexpr int64_t kSequences = 4096, kPrompts = 4096, kNewTokens = 1024;
  static constexpr int kBins = 1000, kBootstrap = 100'000, kTop = 65536, kIgSteps = 100;
  static constexpr int kMinBootstrap = 20;  // resamples, unless none
  static constexpr int kLensTop = 50;  // the logit lens's trace holds points × modes × positions × top
};

// "norms", "sinks", "dla", "patching", "neurons", "calibration", "benchmark", "logit-lens", "circuit",
// "tokens".
const std::vector<std::string>& analysisKinds();

// The settings `kind` reads, by their JSON names (none for an unknown kind). A request naming another is
// refused, and toJson writes these alone.
const std::vector<std::string>& analysisSettings(const std::string& kind);

// Bounds that keep one request's work finite (a request may come from the network). std::invalid_argument
// names the setting and its range; what depends on the model (the trace head, the length) is checked
// when the analysis runs.
void checkAnalysisRequest(const AnalysisRequest& request);
// {"analysis": KIND, …settings by their JSON names (docs/STEERING.md)}: every value type-checked (whole
// numbers must be whole, no silent conversion) and range-checked, unknown settings and those of another kind
// refused.
AnalysisRequest analysisRequestFromJson(const nlohmann::json& j);
nlohmann::json toJson(const AnalysisRequest& request);

// What an analysis reads besides the model.
struct AnalysisSources {
  std::string tokenFile;                        // the sequences of every analysis but patching
  std::shared_ptr<const Tokenizer> tokenizer;   // null: results carry token ids only
  std::shared_ptr<const IoiPromptSet> prompts;  // patching: this set (else one is made with the tokenizer)
};

struct AnalysisOutput {
  nlohmann::json result;  // the analysis's JSON (docs/ANALYSES.md)
  // dla: "nmae_percent"; patching: "<grid>_<activation|…>"; tokens: "tokens" (per position)
  std::map<std::string, std::string> csvGrids;
};

// Computes the analysis on `snapshot`. std::invalid_argument for a request the model or the sources
// cannot answer (a head out of range, a length beyond the context, patching without a tokenizer).
AnalysisOutput runAnalysis(const AnalysisRequest& request, const ModelSnapshot& snapshot,
                           const AnalysisSources& sources, const ProgressFn& progress = {});

}  // namespace nf

#include "analysis/analysis_request.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "analysis/attention_sinks.h"
#include "analysis/behaviour.h"
#include "analysis/confidence_neurons.h"
#include "analysis/logit_attribution.h"
#include "analysis/patching.h"
#include "analysis/residual_norms.h"
#include "data/synthetic_corpus.h"
#include "data/token_sequences.h"

namespace nf {
namespace {

using json = nlohmann::json;

// Bounds of one request: generous for a researcher, finite for a server.
constexpr int64_t kMaxSequences = 4096, kMaxPrompts = 4096, kMaxNewTokens = 1024;
constexpr int kMaxBins = 1000, kMaxBootstrap = 100'000, kMaxTop = 65536;
constexpr std::size_t kMaxPromptTexts = 16, kMaxPromptBytes = 2000;

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

int64_t wholeNumber(const json& j, const std::string& name, int64_t low, int64_t high) {
  // nlohmann gives a bool or a float no integer type; an unsigned beyond int64 would wrap.
  const bool whole = j.is_number_integer() && !(j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(high));
  const int64_t value = whole ? j.get<int64_t>() : low - 1;
  require(whole && value >= low && value <= high, "\"" + name + "\" must be a whole number from " +
                                                      std::to_string(low) + " to " + std::to_string(high));
  return value;
}

double realNumber(const json& j, const std::string& name, double low, double high) {
  require(
      j.is_number() && std::isfinite(j.get<double>()) && j.get<double>() >= low && j.get<double>() <= high,
      "\"" + name + "\" must be a number from " + json(low).dump() + " to " + json(high).dump());
  return j.get<double>();
}

std::string kindList() {
  std::string names;
  for (const std::string& k : analysisKinds()) names += (names.empty() ? "" : ", ") + k;
  return names;
}

json tokenTexts(const std::shared_ptr<const Tokenizer>& tokenizer, const std::vector<int32_t>& ids) {
  json texts = json::array();
  for (int32_t id : ids) texts.push_back(tokenizer ? tokenizer->tokenBytes(id) : std::to_string(id));
  return texts;
}

TokenSequences sequencesFor(const AnalysisRequest& r, const ModelSnapshot& snapshot,
                            const AnalysisSources& sources) {
  const int64_t context = snapshot.config().shape.nPositions;
  const int64_t length = r.length > 0 ? r.length : context;
  require(length <= context, "the length " + std::to_string(length) +
                                 " is longer than the model's context (" + std::to_string(context) + ")");
  require(!sources.tokenFile.empty(), "the " + r.kind + " analysis needs token data");
  TokenSequences sequences = readSequences(sources.tokenFile, r.sequences, length);
  return sequences;
}

AnalysisOutput attribution(const AnalysisRequest& r, const ModelSnapshot& snapshot, const AnalysisSources& s,
                           const ProgressFn& progress) {
  AttributionOptions options;
  options.traceLayer = r.traceLayer;
  options.traceHead = r.traceHead;
  options.traceSequence = r.traceSequence;
  options.bootstrapSamples = r.bootstrap;
  options.seed = r.seed;
  const AttributionResult a = logitAttribution(snapshot, sequencesFor(r, snapshot, s), options, progress);
  AnalysisOutput out{toJson(a), {}};
  out.result["trace"]["token_texts"] = tokenTexts(s.tokenizer, a.trace.tokens);
  PatchingGrid grid{"nmae_percent", a.layers, a.heads, {}, {}, {}, {}};
  for (int l = 0; l < a.layers; ++l) grid.rowLabels.push_back("L" + std::to_string(l));
  for (int h = 0; h < a.heads; ++h) grid.columnLabels.push_back("H" + std::to_string(h));
  std::vector<double> nmae;
  for (const auto& c : a.headAttributions) nmae.push_back(c.nmae);
  out.csvGrids["nmae_percent"] = gridCsv(grid, nmae);
  return out;
}

AnalysisOutput patching(const AnalysisRequest& r, const ModelSnapshot& snapshot, const AnalysisSources& s,
                        const ProgressFn& progress) {
  std::shared_ptr<const IoiPromptSet> set = s.prompts;
  if (!set) {
    require(s.tokenizer != nullptr, "no tokenizer files next to " + snapshot.source() +
                                        " to make IOI prompts with: give a prompt set");
    IoiOptions options;
    options.count = r.ioiCount;
    options.frameIndex = r.ioiFrame;
    options.seed = r.seed;
    set = std::make_shared<const IoiPromptSet>(makeIoiPromptSet(*s.tokenizer, options));
  }
  PatchingOptions options;
  options.headPositions = r.headPositions;
  const PatchingResult p = ioiPatching(snapshot, *set, options, progress);
  AnalysisOutput out{toJson(p), {}};
  out.result["example_clean_texts"] = tokenTexts(s.tokenizer, p.exampleClean);
  out.result["example_corrupted_texts"] = tokenTexts(s.tokenizer, p.exampleCorrupted);
  for (const PatchingGrid* grid : {&p.residPre, &p.heads, &p.headPositions}) {
    if (grid->rows == 0) continue;
    out.csvGrids[grid->name + "_activation"] = gridCsv(*grid, grid->activation);
    out.csvGrids[grid->name + "_attribution"] = gridCsv(*grid, grid->attribution);
    out.csvGrids[grid->name + "_error"] = gridCsv(*grid, grid->error());
  }
  return out;
}

// One model's entry of the calibration analysis (which the CLI can make for several models).
AnalysisOutput calibration(const AnalysisRequest& r, const ModelSnapshot& snapshot, const AnalysisSources& s,
                           const ProgressFn& progress) {
  std::vector<std::vector<int32_t>> prompts;
  for (const std::string& text : r.prompts) {
    require(s.tokenizer != nullptr, "no tokenizer files next to " + snapshot.source() + " to encode prompts");
    // A prompt starts as a document does in token files.
    std::vector<int32_t> ids{s.tokenizer->documentStartId() >= 0 ? s.tokenizer->documentStartId()
                                                                 : snapshot.config().shape.eotTokenId};
    s.tokenizer->encodeAppend(text, ids);
    prompts.push_back(ids);
  }
  BehaviourOptions options;
  options.newTokens = r.newTokens;
  options.temperature = r.temperature;
  options.seed = r.seed;
  json model = toJson(modelBehaviour(snapshot, sequencesFor(r, snapshot, s), prompts, options, progress));
  if (s.tokenizer)
    for (auto& c : model["continuations"])
      for (const char* part : {"prompt", "greedy", "sampled"})
        c[std::string(part) + "_text"] = s.tokenizer->decodeKnown(c[part].get<std::vector<int32_t>>());
  return {json{{"header", {{"analysis", "calibration"}}}, {"models", json::array({model})}}, {}};
}

}  // namespace

const std::vector<std::string>& analysisKinds() {
  static const std::vector<std::string> kinds{"norms", "sinks", "dla", "patching", "neurons", "calibration"};
  return kinds;
}

void checkAnalysisRequest(const AnalysisRequest& r) {
  const auto& kinds = analysisKinds();
  require(std::find(kinds.begin(), kinds.end(), r.kind) != kinds.end(),
          "\"analysis\" must be one of " + kindList());
  auto within = [](auto value, auto low, auto high, const std::string& name) {
    require(value >= low && value <= high,
            "\"" + name + "\" must be from " + std::to_string(low) + " to " + std::to_string(high));
  };
  within(r.sequences, int64_t{1}, kMaxSequences, "sequences");
  require(r.length == 0 || r.length >= 2, "\"length\" must be 0 (the model's context) or at least 2");
  within(r.bins, 1, kMaxBins, "bins");
  require(r.threshold >= 0 && r.threshold <= 1, "\"threshold\" must be from 0 to 1");
  require(r.traceLayer >= 0 && r.traceHead >= 0, "\"trace_layer\" and \"trace_head\" must be ≥ 0");
  within(r.traceSequence, int64_t{0}, r.sequences - 1, "trace_sequence");
  within(r.bootstrap, 0, kMaxBootstrap, "bootstrap");
  within(r.ioiCount, int64_t{4}, kMaxPrompts, "count");
  require(r.ioiCount % 4 == 0, "\"count\" must be a multiple of 4");
  within(r.ioiFrame, 0, static_cast<int>(ioiFrames().size()) - 1, "frame");
  within(r.top, 1, kMaxTop, "top");
  require(r.prompts.size() <= kMaxPromptTexts, "\"prompts\" holds at most 16 texts");
  for (const std::string& p : r.prompts)
    require(p.size() <= kMaxPromptBytes, "each of \"prompts\" is at most 2000 bytes");
  within(r.newTokens, int64_t{0}, kMaxNewTokens, "new_tokens");
  require(std::isfinite(r.temperature) && r.temperature >= 0 && r.temperature <= 100,
          "\"temperature\" must be from 0 to 100");
}

AnalysisRequest analysisRequestFromJson(const json& j) {
  require(j.is_object(), "an analysis request is a JSON object");
  AnalysisRequest r;
  const int64_t big = std::numeric_limits<int32_t>::max();
  for (const auto& [name, value] : j.items()) {
    if (name == "analysis") {
      require(value.is_string(), "\"analysis\" must be one of " + kindList());
      r.kind = value.get<std::string>();
    } else if (name == "sequences") {
      r.sequences = wholeNumber(value, name, 1, kMaxSequences);
    } else if (name == "length") {
      r.length = wholeNumber(value, name, 0, big);
    } else if (name == "bins") {
      r.bins = static_cast<int>(wholeNumber(value, name, 1, kMaxBins));
    } else if (name == "threshold") {
      r.threshold = realNumber(value, name, 0, 1);
    } else if (name == "trace_layer") {
      r.traceLayer = static_cast<int>(wholeNumber(value, name, 0, big));
    } else if (name == "trace_head") {
      r.traceHead = static_cast<int>(wholeNumber(value, name, 0, big));
    } else if (name == "trace_sequence") {
      r.traceSequence = wholeNumber(value, name, 0, kMaxSequences - 1);
    } else if (name == "bootstrap") {
      r.bootstrap = static_cast<int>(wholeNumber(value, name, 0, kMaxBootstrap));
    } else if (name == "seed") {
      r.seed = static_cast<uint64_t>(wholeNumber(value, name, 0, std::numeric_limits<int64_t>::max()));
    } else if (name == "count") {
      r.ioiCount = wholeNumber(value, name, 4, kMaxPrompts);
    } else if (name == "frame") {
      r.ioiFrame =
          static_cast<int>(wholeNumber(value, name, 0, static_cast<int64_t>(ioiFrames().size()) - 1));
    } else if (name == "head_positions") {
      require(value.is_boolean(), "\"head_positions\" must be true or false");
      r.headPositions = value.get<bool>();
    } else if (name == "top") {
      r.top = static_cast<int>(wholeNumber(value, name, 1, kMaxTop));
    } else if (name == "prompts") {
      require(value.is_array() && value.size() <= kMaxPromptTexts,
              "\"prompts\" must be a list of ≤ 16 texts");
      r.prompts.clear();
      for (const json& text : value) {
        require(text.is_string(), "\"prompts\" must be a list of texts");
        r.prompts.push_back(text.get<std::string>());
      }
    } else if (name == "new_tokens") {
      r.newTokens = wholeNumber(value, name, 0, kMaxNewTokens);
    } else if (name == "temperature") {
      r.temperature = realNumber(value, name, 0, 100);
    } else {
      throw std::invalid_argument("unknown analysis setting \"" + name + "\"");
    }
  }
  checkAnalysisRequest(r);
  return r;
}

json toJson(const AnalysisRequest& r) {
  return {{"analysis", r.kind},
          {"sequences", r.sequences},
          {"length", r.length},
          {"bins", r.bins},
          {"threshold", r.threshold},
          {"trace_layer", r.traceLayer},
          {"trace_head", r.traceHead},
          {"trace_sequence", r.traceSequence},
          {"bootstrap", r.bootstrap},
          {"seed", r.seed},
          {"count", r.ioiCount},
          {"frame", r.ioiFrame},
          {"head_positions", r.headPositions},
          {"top", r.top},
          {"prompts", r.prompts},
          {"new_tokens", r.newTokens},
          {"temperature", r.temperature}};
}

AnalysisOutput runAnalysis(const AnalysisRequest& r, const ModelSnapshot& snapshot, const AnalysisSources& s,
                           const ProgressFn& progress) {
  checkAnalysisRequest(r);
  if (r.kind == "norms")
    return {toJson(residualNorms(snapshot, sequencesFor(r, snapshot, s), r.bins, progress)), {}};
  if (r.kind == "sinks")
    return {toJson(attentionSinks(snapshot, sequencesFor(r, snapshot, s), r.threshold, progress)), {}};
  if (r.kind == "dla") return attribution(r, snapshot, s, progress);
  if (r.kind == "patching") return patching(r, snapshot, s, progress);
  if (r.kind == "neurons")
    return {toJson(confidenceNeurons(snapshot, sequencesFor(r, snapshot, s), r.top, progress)), {}};
  return calibration(r, snapshot, s, progress);
}

}  // namespace nf

#include "analysis/analysis_request.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "analysis/attention_sinks.h"
#include "analysis/behaviour.h"
#include "analysis/benchmark_scores.h"
#include "analysis/confidence_neurons.h"
#include "analysis/edge_attribution.h"
#include "analysis/logit_attribution.h"
#include "analysis/logit_lens.h"
#include "analysis/patching.h"
#include "analysis/residual_norms.h"
#include "data/synthetic_corpus.h"
#include "data/token_file.h"
#include "data/token_sequences.h"
#include "io/file_format.h"

namespace nf {
namespace {

using json = nlohmann::json;

// More bounds of one request (AnalysisLimits has those the CLI's options show).
constexpr std::size_t kMaxPromptTexts = 16, kMaxPromptBytes = 2000;
constexpr int64_t kMaxPatternLength = 512;  // a traced pattern is length² numbers
// tokens: at most 16 heads, and 4 Mi pattern values in all (4 heads of a 1024-token context).
constexpr std::size_t kMaxTokenHeads = 16;
constexpr int64_t kMaxPatternValues = int64_t{1} << 22;
// A benchmark request: HellaSwag's validation set is 10,042 items of 4 choices; texts of a few KB.
constexpr std::size_t kMaxBenchmarkItems = 100'000, kMaxChoices = 16, kMaxBenchmarkText = 64 * 1024;

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

// A JSON value as a whole number of type T: never a bool or a fraction, never wrapped around. (Which
// values a request may hold is checkAnalysisRequest's to say.)
template <class T>
T wholeNumber(const json& j, const std::string& name) {
  using limits = std::numeric_limits<T>;
  const bool fits = j.is_number_integer() &&
                    (j.is_number_unsigned() ? j.get<uint64_t>() <= static_cast<uint64_t>(limits::max())
                                            : j.get<int64_t>() >= static_cast<int64_t>(limits::min()) &&
                                                  j.get<int64_t>() <= static_cast<int64_t>(limits::max()));
  require(fits, "\"" + name + "\" must be a whole number (from " + std::to_string(limits::min()) + " to " +
                    std::to_string(limits::max()) + ")");
  return static_cast<T>(j.get<int64_t>());
}

double realNumber(const json& j, const std::string& name) {
  require(j.is_number() && std::isfinite(j.get<double>()), "\"" + name + "\" must be a number");
  return j.get<double>();
}

std::string kindList() {
  std::string names;
  for (const std::string& k : analysisKinds()) names += (names.empty() ? "" : ", ") + k;
  return names;
}

// {"task", "file", "items": [{"line", "gold", "requests": [[context, continuation], …], "lengths": […]}]}
json benchmarkJson(const BenchmarkData& data) {
  json items = json::array();
  for (const BenchmarkItem& item : data.items) {
    json requests = json::array();
    for (const LoglikelihoodRequest& r : item.requests) requests.push_back({r.context, r.continuation});
    items.push_back(
        {{"line", item.line}, {"gold", item.gold}, {"requests", requests}, {"lengths", item.choiceLengths}});
  }
  return {{"task", benchmarkTaskName(data.task)}, {"file", data.file}, {"items", items}};
}

std::string text(const json& j, const std::string& name) {
  require(j.is_string() && j.get_ref<const std::string&>().size() <= kMaxBenchmarkText,
          "\"" + name + "\" must be a text of at most 64 KiB");
  return j.get<std::string>();
}

BenchmarkItem benchmarkItem(const json& j) {
  require(j.is_object() && j.size() == 4 && j.contains("line") && j.contains("gold") &&
              j.contains("requests") && j.contains("lengths"),
          "each of \"items\" is {\"line\", \"gold\", \"requests\", \"lengths\"}");
  BenchmarkItem item;
  item.line = wholeNumber<int64_t>(j["line"], "line");
  item.gold = wholeNumber<int>(j["gold"], "gold");
  const json& requests = j["requests"];
  const json& lengths = j["lengths"];
  require(requests.is_array() && !requests.empty() && requests.size() <= kMaxChoices && lengths.is_array() &&
              lengths.size() == requests.size(),
          "an item has 1 to 16 \"requests\" and a length for each");
  for (std::size_t c = 0; c < requests.size(); ++c) {
    require(requests[c].is_array() && requests[c].size() == 2, "a request is [context, continuation]");
    item.requests.push_back({text(requests[c][0], "context"), text(requests[c][1], "continuation")});
    const int64_t length = wholeNumber<int64_t>(lengths[c], "lengths");
    require(length > 0, "\"lengths\" must be ≥ 1 (characters of a choice)");
    item.choiceLengths.push_back(static_cast<std::size_t>(length));
  }
  require(item.gold >= 0 && item.gold < static_cast<int>(item.requests.size()),
          "\"gold\" must be one of the item's choices");
  return item;
}

std::shared_ptr<const BenchmarkData> benchmarkFromJson(const json& task, const json& file,
                                                       const json& items) {
  auto data = std::make_shared<BenchmarkData>();
  require(task.is_string(), "\"task\" must be a benchmark's name");
  data->task = parseBenchmarkTask(task.get<std::string>());
  data->file = text(file, "file");
  require(items.is_array() && !items.empty() && items.size() <= kMaxBenchmarkItems,
          "\"items\" must be a list of 1 to 100000 items");
  for (const json& item : items) data->items.push_back(benchmarkItem(item));
  return data;
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
  const int64_t marker = r.documentStarts ? documentMarker(TokenFile::open(sources.tokenFile),
                                                           snapshot.config().shape.eotTokenId)
                                          : -1;
  return readSequences(sources.tokenFile, r.sequences, length, marker, snapshot.config().shape.vocabSize);
}

AnalysisOutput attribution(const AnalysisRequest& r, const ModelSnapshot& snapshot, const AnalysisSources& s,
                           const ProgressFn& progress) {
  AttributionOptions options;
  options.traceLayer = r.traceLayer;
  options.traceHead = r.traceHead;
  options.traceSequence = r.traceSequence;
  options.bootstrapSamples = r.bootstrap;
  options.seed = r.seed;
  const TokenSequences data = sequencesFor(r, snapshot, s);
  require(!r.tracePattern || data.length <= kMaxPatternLength,
          "\"trace_pattern\" needs a \"length\" of at most " + std::to_string(kMaxPatternLength));
  const AttributionResult a = logitAttribution(snapshot, data, options, progress);
  AnalysisOutput out{toJson(a), {}};
  out.result["trace"]["token_texts"] = tokenTexts(s.tokenizer, a.trace.tokens);
  if (r.tracePattern)  // row = query position, row-major
    out.result["trace"]["pattern"] = attentionPattern(snapshot, a.trace.tokens, r.traceLayer, r.traceHead);
  PatchingGrid grid{"nmae_percent", a.layers, a.heads, {}, {}, {}, {}};
  for (int l = 0; l < a.layers; ++l) grid.rowLabels.push_back("L" + std::to_string(l));
  for (int h = 0; h < a.heads; ++h) grid.columnLabels.push_back("H" + std::to_string(h));
  std::vector<double> nmae;
  for (const auto& c : a.headAttributions) nmae.push_back(c.nmae);
  out.csvGrids["nmae_percent"] = gridCsv(grid, nmae);
  return out;
}

// One sequence whole, token by token: the traced head's DLA and DE at each position, and the attention
// patterns of the heads asked for, over the full length (docs/ANALYSES.md, "tokens").
AnalysisOutput tokenView(const AnalysisRequest& r, const ModelSnapshot& snapshot, const AnalysisSources& s,
                         const ProgressFn& progress) {
  AnalysisRequest upTo = r;
  upTo.sequences = r.traceSequence + 1;  // the sequences before it are read, not analysed
  const TokenSequences read = sequencesFor(upTo, snapshot, s);
  require(read.count == upTo.sequences, "the data holds " + std::to_string(read.count) +
                                            " sequences of this length: no sequence " +
                                            std::to_string(r.traceSequence));
  require(static_cast<int64_t>(r.heads.size()) * read.length * read.length <= kMaxPatternValues,
          "\"heads\" × length² must be at most 4194304 pattern values: ask for fewer heads");
  TokenSequences one{read.source, 1, read.length, {}};
  one.tokens.assign(read.row(r.traceSequence), read.row(r.traceSequence) + read.length);
  AttributionOptions options;
  options.traceLayer = r.traceLayer;
  options.traceHead = r.traceHead;
  options.bootstrapSamples = 0;
  const AttributionResult a = logitAttribution(snapshot, one, options, progress);
  json patterns = json::array();
  for (const auto& [layer, head] : r.heads)
    patterns.push_back(
        {{"layer", layer}, {"head", head}, {"pattern", attentionPattern(snapshot, one.tokens, layer, head)}});
  const std::string data = read.source + ", sequence " + std::to_string(r.traceSequence);
  // Position i's DLA and DE are for predicting token i + 1 (docs/ANALYSES.md).
  std::ostringstream csv;
  csv << "position,token,next_token,dla,de\n";
  for (std::size_t i = 0; i < a.trace.dla.size(); ++i)
    csv << i << ',' << one.tokens[i] << ',' << one.tokens[i + 1] << ',' << a.trace.dla[i] << ','
        << a.trace.de[i] << '\n';
  return {json{{"header", toJson(makeHeader("tokens", snapshot, data, 1, one.length))},
               {"sequence", r.traceSequence},
               {"length", one.length},
               {"tokens", one.tokens},
               {"token_texts", tokenTexts(s.tokenizer, one.tokens)},
               {"component", {{"layer", r.traceLayer}, {"head", r.traceHead}}},
               {"dla", a.trace.dla},
               {"de", a.trace.de},
               {"patterns", patterns}},
          {{"tokens", csv.str()}}};
}

// The IOI prompts of patching and circuits: the set given, else one made with the tokenizer.
std::shared_ptr<const IoiPromptSet> ioiPromptsFor(const AnalysisRequest& r, const ModelSnapshot& snapshot,
                                                  const AnalysisSources& s) {
  if (s.prompts) {
    checkIoiPromptSetFor(*s.prompts, snapshot.config().shape.vocabSize, s.tokenizer.get());
    return s.prompts;
  }
  require(s.tokenizer != nullptr,
          "no tokenizer files next to " + snapshot.source() + " to make IOI prompts with: give a prompt set");
  IoiOptions options;
  options.count = r.ioiCount;
  options.frameIndex = r.ioiFrame;
  options.seed = r.seed;
  return std::make_shared<const IoiPromptSet>(makeIoiPromptSet(*s.tokenizer, options));
}

AnalysisOutput circuit(const AnalysisRequest& r, const ModelSnapshot& snapshot, const AnalysisSources& s,
                       const ProgressFn& progress) {
  CircuitOptions options;
  options.method = r.method;
  options.steps = r.steps;
  options.edges = r.edges;
  options.keep = r.keep;
  options.checked = r.check;
  const CircuitResult c = edgeAttribution(snapshot, *ioiPromptsFor(r, snapshot, s), options, progress);
  AnalysisOutput out{toJson(c), {}};
  out.csvGrids["edges"] = edgesCsv(c);
  return out;
}

AnalysisOutput patching(const AnalysisRequest& r, const ModelSnapshot& snapshot, const AnalysisSources& s,
                        const ProgressFn& progress) {
  const std::shared_ptr<const IoiPromptSet> set = ioiPromptsFor(r, snapshot, s);
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

AnalysisOutput logitLensAnalysis(const AnalysisRequest& r, const ModelSnapshot& snapshot,
                                 const AnalysisSources& s, const ProgressFn& progress) {
  LogitLensOptions options;
  options.traceSequence = r.traceSequence;
  options.top = r.top;
  LogitLensResult lens = logitLens(snapshot, sequencesFor(r, snapshot, s), options, progress);
  if (s.tokenizer) {
    auto add = [&](const std::vector<int32_t>& ids) {
      for (int32_t id : ids) lens.trace.texts.emplace(id, s.tokenizer->tokenBytes(id));
    };
    add(lens.trace.tokens);
    for (const auto& grids : lens.trace.points)
      for (const LensGrid& grid : grids) add(grid.topIds);
  }
  AnalysisOutput out{toJson(lens), {}};
  out.result["trace"]["token_texts"] = tokenTexts(s.tokenizer, lens.trace.tokens);
  // The per-layer figures as a table: a row per point, a column per (mode, figure).
  PatchingGrid table{"point", static_cast<int64_t>(lens.points.size()), kLensModes * 5, {}, {}, {}, {}};
  std::vector<double> values;
  for (int m = 0; m < kLensModes; ++m)
    for (const char* figure : {"ce", "kl", "probability", "median_rank", "top1"})
      table.columnLabels.push_back(std::string(lensModeName(LensMode(m))) + "_" + figure);
  for (const LensPoint& p : lens.points) {
    table.rowLabels.push_back(p.point);
    for (const LensFigures& f : p.modes)
      values.insert(values.end(), {f.ce, f.kl, f.probability, f.medianRank, f.top1});
  }
  out.csvGrids["layers"] = gridCsv(table, values);
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
  json header = formatHeader(kAnalysisFormat);  // the models' own headers say what each read
  header["analysis"] = "calibration";
  // What chose the continuations, so that the record reproduces them.
  header["new_tokens"] = r.newTokens, header["temperature"] = r.temperature, header["seed"] = r.seed;
  return {json{{"header", header}, {"models", json::array({model})}}, {}};
}

// Every setting of every kind, each with its value in `r`.
json allSettings(const AnalysisRequest& r) {
  json j = {{"analysis", r.kind},
            {"sequences", r.sequences},
            {"length", r.length},
            {"document_starts", r.documentStarts},
            {"bins", r.bins},
            {"threshold", r.threshold},
            {"trace_layer", r.traceLayer},
            {"trace_head", r.traceHead},
            {"trace_sequence", r.traceSequence},
            {"trace_pattern", r.tracePattern},
            {"bootstrap", r.bootstrap},
            {"seed", r.seed},
            {"count", r.ioiCount},
            {"frame", r.ioiFrame},
            {"head_positions", r.headPositions},
            {"method", r.method},
            {"steps", r.steps},
            {"edges", r.edges},
            {"keep", r.keep},
            {"check", r.check},
            {"top", r.top},
            {"heads", r.heads},
            {"prompts", r.prompts},
            {"new_tokens", r.newTokens},
            {"temperature", r.temperature}};
  if (r.benchmark) j.update(benchmarkJson(*r.benchmark));
  return j;
}

// The settings of r's kind that do nothing beside the others given (the CLI refuses them), each with why.
std::vector<std::pair<std::string, std::string>> idleSettings(const AnalysisRequest& r) {
  std::vector<std::pair<std::string, std::string>> idle;
  if (r.kind == "circuit" && r.method != "eap-ig")
    idle.emplace_back("steps", "\"steps\" applies to method \"eap-ig\" only (\"eap\" takes one gradient)");
  if (r.kind == "circuit" && r.edges > 0)
    idle.emplace_back("keep", "\"keep\" chooses how many edges when \"edges\" is 0; with \"edges\" " +
                                  std::to_string(r.edges) + " it would choose nothing");
  if (r.kind == "dla" && r.bootstrap == 0)
    idle.emplace_back("seed", "\"seed\" draws the bootstrap's resamples: \"bootstrap\" 0 draws none");
  return idle;
}

}  // namespace

const std::vector<std::string>& analysisKinds() {
  static const std::vector<std::string> kinds{"norms",       "sinks",     "dla",        "patching", "neurons",
                                              "calibration", "benchmark", "logit-lens", "circuit",  "tokens"};
  return kinds;
}

const std::vector<std::string>& analysisSettings(const std::string& kind) {
  static const std::map<std::string, std::vector<std::string>> settings = [] {
    const std::vector<std::string> sequences{"sequences", "length", "document_starts"};
    const std::vector<std::string> prompts{"count", "frame", "seed"};  // the IOI prompts made
    auto with = [](std::vector<std::string> base, std::initializer_list<const char*> more) {
      base.insert(base.end(), more.begin(), more.end());
      return base;
    };
    return std::map<std::string, std::vector<std::string>>{
        {"norms", with(sequences, {"bins"})},
        {"sinks", with(sequences, {"threshold"})},
        {"dla", with(sequences,
                     {"trace_layer", "trace_head", "trace_sequence", "trace_pattern", "bootstrap", "seed"})},
        {"patching", with(prompts, {"head_positions"})},
        {"neurons", with(sequences, {"top"})},
        {"calibration", with(sequences, {"prompts", "new_tokens", "temperature", "seed"})},
        {"benchmark", {"task", "file", "items"}},
        {"logit-lens", with(sequences, {"trace_sequence", "top"})},
        {"circuit", with(prompts, {"method", "steps", "edges", "keep", "check"})},
        {"tokens", with(sequences, {"trace_layer", "trace_head", "trace_sequence", "heads"})}};
  }();
  static const std::vector<std::string> none;
  const auto found = settings.find(kind);
  return found == settings.end() ? none : found->second;
}

void checkAnalysisRequest(const AnalysisRequest& r) {
  const auto& kinds = analysisKinds();
  require(std::find(kinds.begin(), kinds.end(), r.kind) != kinds.end(),
          "\"analysis\" must be one of " + kindList());
  auto within = [](auto value, auto low, auto high, const std::string& name) {
    require(value >= low && value <= high,
            "\"" + name + "\" must be from " + std::to_string(low) + " to " + std::to_string(high));
  };
  within(r.sequences, int64_t{1}, AnalysisLimits::kSequences, "sequences");
  require(r.length == 0 || r.length >= 2, "\"length\" must be 0 (the model's context) or at least 2");
  within(r.bins, 1, AnalysisLimits::kBins, "bins");
  require(r.threshold > 0 && r.threshold <= 1,
          "\"threshold\" must be above 0 and at most 1 (at 0 every head would be a sink)");
  require(r.traceLayer >= 0 && r.traceHead >= 0, "\"trace_layer\" and \"trace_head\" must be ≥ 0");
  within(r.traceSequence, int64_t{0}, r.sequences - 1, "trace_sequence");
  within(r.bootstrap, 0, AnalysisLimits::kBootstrap, "bootstrap");
  require(r.bootstrap == 0 || r.bootstrap >= AnalysisLimits::kMinBootstrap,
          "\"bootstrap\" must be 0 (no interval) or at least " +
              std::to_string(AnalysisLimits::kMinBootstrap) +
              ": a 95 % interval needs resamples beyond both of its ends");
  within(r.ioiCount, int64_t{4}, AnalysisLimits::kPrompts, "count");
  require(r.ioiCount % 4 == 0, "\"count\" must be a multiple of 4");
  within(r.ioiFrame, 0, static_cast<int>(ioiFrames().size()) - 1, "frame");
  within(r.top, 1, r.kind == "logit-lens" ? AnalysisLimits::kLensTop : AnalysisLimits::kTop, "top");
  require(r.method == "eap" || r.method == "eap-ig", "\"method\" must be \"eap\" or \"eap-ig\"");
  within(r.steps, 1, AnalysisLimits::kIgSteps, "steps");
  within(r.check, int64_t{0}, AnalysisLimits::kPrompts, "check");
  require(r.edges >= 0, "\"edges\" must be ≥ 0 (0: as many as keep the faithfulness of \"keep\")");
  require(std::isfinite(r.keep) && r.keep > 0 && r.keep <= 1, "\"keep\" must be above 0 and at most 1");
  require(r.heads.size() <= kMaxTokenHeads, "\"heads\" holds at most 16 heads");
  for (const auto& [layer, head] : r.heads) require(layer >= 0 && head >= 0, "\"heads\" must be ≥ 0");
  require(r.prompts.size() <= kMaxPromptTexts, "\"prompts\" holds at most 16 texts");
  for (const std::string& p : r.prompts) {
    require(p.size() <= kMaxPromptBytes, "each of \"prompts\" is at most 2000 bytes");
    require(!p.empty(), "each of \"prompts\" needs text (an empty one is continued from nothing)");
  }
  within(r.newTokens, int64_t{0}, AnalysisLimits::kNewTokens, "new_tokens");
  // The sampled continuation beside the greedy one: at temperature 0 it would be the greedy one again.
  require(std::isfinite(r.temperature) && r.temperature > 0 && r.temperature <= 100,
          "\"temperature\" must be above 0 and at most 100 (0 would sample the greedy continuation again)");
  require((r.kind == "benchmark") == (r.benchmark != nullptr),
          r.kind == "benchmark" ? "a benchmark analysis needs \"task\", \"file\" and \"items\""
                                : "\"task\", \"file\" and \"items\" belong to a benchmark analysis");
}

AnalysisRequest analysisRequestFromJson(const json& j) {
  require(j.is_object(), "an analysis request is a JSON object");
  AnalysisRequest r;
  if (j.contains("items") || j.contains("task") || j.contains("file"))
    r.benchmark =
        benchmarkFromJson(j.value("task", json()), j.value("file", json()), j.value("items", json()));
  for (const auto& [name, value] : j.items()) {
    if (name == "task" || name == "file" || name == "items") {
      continue;  // read above, together
    } else if (name == "analysis") {
      require(value.is_string(), "\"analysis\" must be one of " + kindList());
      r.kind = value.get<std::string>();
    } else if (name == "sequences") {
      r.sequences = wholeNumber<int64_t>(value, name);
    } else if (name == "length") {
      r.length = wholeNumber<int32_t>(value, name);
    } else if (name == "document_starts") {
      require(value.is_boolean(), "\"document_starts\" must be true or false");
      r.documentStarts = value.get<bool>();
    } else if (name == "bins") {
      r.bins = wholeNumber<int>(value, name);
    } else if (name == "threshold") {
      r.threshold = realNumber(value, name);
    } else if (name == "trace_layer") {
      r.traceLayer = wholeNumber<int>(value, name);
    } else if (name == "trace_head") {
      r.traceHead = wholeNumber<int>(value, name);
    } else if (name == "trace_sequence") {
      r.traceSequence = wholeNumber<int64_t>(value, name);
    } else if (name == "trace_pattern") {
      require(value.is_boolean(), "\"trace_pattern\" must be true or false");
      r.tracePattern = value.get<bool>();
    } else if (name == "bootstrap") {
      r.bootstrap = wholeNumber<int>(value, name);
    } else if (name == "seed") {
      const int64_t seed = wholeNumber<int64_t>(value, name);
      require(seed >= 0, "\"seed\" must be ≥ 0");
      r.seed = static_cast<uint64_t>(seed);
    } else if (name == "count") {
      r.ioiCount = wholeNumber<int64_t>(value, name);
    } else if (name == "frame") {
      r.ioiFrame = wholeNumber<int>(value, name);
    } else if (name == "head_positions") {
      require(value.is_boolean(), "\"head_positions\" must be true or false");
      r.headPositions = value.get<bool>();
    } else if (name == "method") {
      require(value.is_string(), "\"method\" must be \"eap\" or \"eap-ig\"");
      r.method = value.get<std::string>();
    } else if (name == "steps") {
      r.steps = wholeNumber<int>(value, name);
    } else if (name == "edges") {
      r.edges = wholeNumber<int64_t>(value, name);
    } else if (name == "check") {
      r.check = wholeNumber<int64_t>(value, name);
    } else if (name == "keep") {
      r.keep = realNumber(value, name);
    } else if (name == "top") {
      r.top = wholeNumber<int>(value, name);
    } else if (name == "prompts") {
      require(value.is_array() && value.size() <= kMaxPromptTexts,
              "\"prompts\" must be a list of ≤ 16 texts");
      r.prompts.clear();
      for (const json& text : value) {
        require(text.is_string(), "\"prompts\" must be a list of texts");
        r.prompts.push_back(text.get<std::string>());
      }
    } else if (name == "heads") {
      require(value.is_array() && value.size() <= kMaxTokenHeads,
              "\"heads\" must be a list of ≤ 16 [layer, head] pairs");
      r.heads.clear();
      for (const json& pair : value) {
        require(pair.is_array() && pair.size() == 2, "\"heads\" must be a list of [layer, head] pairs");
        r.heads.emplace_back(wholeNumber<int>(pair[0], name), wholeNumber<int>(pair[1], name));
      }
    } else if (name == "new_tokens") {
      r.newTokens = wholeNumber<int64_t>(value, name);
    } else if (name == "temperature") {
      r.temperature = realNumber(value, name);
    } else {
      throw std::invalid_argument("unknown analysis setting \"" + name + "\"");
    }
  }
  if (r.kind == "logit-lens" && !j.contains("top")) r.top = AnalysisRequest::kLensTop;  // as the CLI's
  checkAnalysisRequest(r);
  // A setting of another kind was taken and changed nothing (a "threshold" sent with dla).
  const std::vector<std::string>& own = analysisSettings(r.kind);
  for (const auto& [name, value] : j.items())
    if (name != "analysis" && std::find(own.begin(), own.end(), name) == own.end()) {
      std::string names;
      for (const std::string& n : own) names += (names.empty() ? "" : ", ") + n;
      throw std::invalid_argument("\"" + name + "\" is not a setting of the " + r.kind +
                                  " analysis (its settings: " + names + ")");
    }
  // Settings that do nothing beside the others given, refused as the CLI refuses them — when asked for,
  // that is, other than their defaults, which workbenches before this check sent with every request.
  if (const auto idle = idleSettings(r); !idle.empty()) {  // (never a benchmark's, with its items to copy)
    const json given = allSettings(r), defaults = allSettings(AnalysisRequest{});
    for (const auto& [name, why] : idle) require(given[name] == defaults[name], why);
  }
  return r;
}

json toJson(const AnalysisRequest& r) {
  const json j = allSettings(r);
  const std::vector<std::string>& own = analysisSettings(r.kind);
  if (own.empty()) return j;  // a kind the reader refuses: everything, to say so
  json mine{{"analysis", r.kind}};
  for (const std::string& name : own)
    if (j.contains(name)) mine[name] = j[name];
  for (const auto& idle : idleSettings(r)) mine.erase(idle.first);  // which the reader refuses
  return mine;
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
  if (r.kind == "logit-lens") return logitLensAnalysis(r, snapshot, s, progress);
  if (r.kind == "circuit") return circuit(r, snapshot, s, progress);
  if (r.kind == "tokens") return tokenView(r, snapshot, s, progress);
  if (r.kind == "benchmark") {
    require(s.tokenizer != nullptr,
            "no tokenizer files next to " + snapshot.source() + " to encode the items");
    return {benchmarkOnSnapshot(snapshot, *s.tokenizer, *r.benchmark, progress), {}};
  }
  return calibration(r, snapshot, s, progress);
}

}  // namespace nf

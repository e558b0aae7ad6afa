// normfree-cli analyze <kind>: every analysis of a model folder, a run's final model or one of its
// checkpoints, as JSON (and CSV for grids). The schema is in docs/ANALYSES.md.
#include <torch/torch.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/attention_sinks.h"
#include "analysis/behaviour.h"
#include "analysis/confidence_neurons.h"
#include "analysis/logit_attribution.h"
#include "analysis/patching.h"
#include "analysis/residual_norms.h"
#include "args.h"
#include "commands.h"
#include "data/token_file.h"
#include "eval/circuits.h"
#include "io/atomic_file.h"
#include "model/gpt2.h"
#include "progress_bar.h"
#include "run/run_directory.h"

namespace nf::cli {
namespace {

namespace fs = std::filesystem;

Args& modelOptions(Args& args) {
  return args.positional("model", "model folder, run directory (its final model) or checkpoint folder")
      .option("step", "n", "with a run directory: its checkpoint after n steps instead of the final model",
              "")
      .option("device", "cpu|cuda[:N]", "where to run", "cpu")
      .option("out", "file.json", "write the result here (atomically) instead of stdout", "");
}

Args& dataOptions(Args& args) {
  return args.option("data", "file.bin", "token file to analyse (e.g. the validation split)")
      .option("sequences", "n", "number of sequences (consecutive chunks from the start of the file)", "32")
      .option("length", "n", "tokens per sequence (default: the model's context)", "");
}

SnapshotPtr snapshotFrom(const Args& args) {
  std::string path = args.get("model");
  if (!args.get("step").empty()) {
    path = run::checkpointPath(path, args.getInt64("step"));
    if (!fs::is_directory(path))
      throw UsageError("no checkpoint " + path + " (checkpoints are kept every few steps)");
  }
  parseDevice(args.get("device"));  // a clear error for a device that is not here
  return ModelSnapshot::load(path, args.get("device"));
}

TokenSequences sequencesFrom(const Args& args, const ModelSnapshot& snapshot) {
  const int64_t length =
      args.get("length").empty() ? snapshot.config().shape.nPositions : args.getInt64("length");
  if (length > snapshot.config().shape.nPositions)
    throw UsageError("--length " + std::to_string(length) + " is longer than the model's context (" +
                     std::to_string(snapshot.config().shape.nPositions) + ")");
  return readSequences(args.get("data"), args.getInt64("sequences"), length);
}

// The tokenizer that goes with a model: its own folder's, or for a checkpoint, that of the model the run
// started from. Empty when there is none (results then carry token ids only).
std::optional<BpeTokenizer> tokenizerFor(const ModelSnapshot& snapshot) {
  std::vector<std::string> candidates{snapshot.source()};
  const fs::path folder(snapshot.source());
  const std::string runDir = folder.parent_path().parent_path().string();
  if (folder.parent_path().filename() == "checkpoints" && fs::exists(run::configPath(runDir))) {
    const auto config = nlohmann::json::parse(readTextFile(run::configPath(runDir)), nullptr, false);
    if (config.is_object() && config.contains("model") && config["model"].is_string())
      candidates.push_back(config["model"].get<std::string>());
  }
  for (const std::string& candidate : candidates)
    if (fs::exists(candidate + "/vocab.json") && fs::exists(candidate + "/merges.txt"))
      return BpeTokenizer::load(candidate);
  return std::nullopt;
}

nlohmann::json tokenTexts(const std::optional<BpeTokenizer>& tokenizer, const std::vector<int32_t>& ids) {
  nlohmann::json texts = nlohmann::json::array();
  for (int32_t id : ids) texts.push_back(tokenizer ? tokenizer->decode({id}) : std::to_string(id));
  return texts;
}

void emit(const Args& args, const nlohmann::json& result) {
  if (args.get("out").empty()) {
    printJson(result);
    return;
  }
  writeFileAtomic(args.get("out"),
                  result.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  printJson({{"written", args.get("out")}, {"analysis", result["header"]["analysis"]}});
}

int analyzeNorms(const Argv& argv) {
  Args args(
      "analyze norms",
      "Residual-stream L2 norms at every layer (resid_pre, and the final residual), position 0 against "
      "the rest (mean, median, 10th/90th percentiles), and per LN site the distribution of σ over tokens "
      "(the scale FakeLN freezes) as a log-spaced histogram.");
  dataOptions(modelOptions(args)).option("bins", "n", "histogram bins per site", "40");
  if (!args.parse(argv)) return 0;
  const SnapshotPtr snapshot = snapshotFrom(args);
  emit(args,
       toJson(residualNorms(*snapshot, sequencesFrom(args, *snapshot), args.getInt("bins"), progressBar())));
  return 0;
}

int analyzeSinks(const Argv& argv) {
  Args args("analyze sinks",
            "Attention sinks: per head, the share of sequences on which position 0 receives at least the "
            "threshold of the head's attention (averaged over query positions); the overall sink rate.");
  dataOptions(modelOptions(args))
      .option("threshold", "x", "attention to position 0 that makes a sink", "0.3");
  if (!args.parse(argv)) return 0;
  const SnapshotPtr snapshot = snapshotFrom(args);
  emit(args, toJson(attentionSinks(*snapshot, sequencesFrom(args, *snapshot), args.getDouble("threshold"),
                                   progressBar())));
  return 0;
}

std::pair<int, int> parseHead(const std::string& text) {
  int layer = 0, head = 0;
  char dot = 0;
  std::istringstream in(text);
  if (!(in >> layer >> dot >> head) || dot != '.' || !in.eof())
    throw UsageError("--head '" + text + "': expected LAYER.HEAD, e.g. 2.3");
  return {layer, head};
}

int analyzeDla(const Argv& argv) {
  Args args("analyze dla",
            "Direct logit attribution (with the cached final LN scale) against the direct effect (final LN "
            "recomputed) for every head, MLP layer, the embeddings and the attention output biases, for the "
            "correct next token at every position: per-component NMAE, overall NMAE over heads with a 95% "
            "bootstrap interval, and one head's per-position values.");
  dataOptions(modelOptions(args))
      .option("head", "L.H", "the head whose per-position values are reported", "0.0")
      .option("trace-sequence", "n", "the sequence those values are reported for", "0")
      .option("bootstrap", "n", "bootstrap resamples of the sequences", "1000")
      .option("seed", "n", "bootstrap seed", "0")
      .option("csv", "file.csv", "also write the per-head NMAE grid (layer × head) as CSV", "");
  if (!args.parse(argv)) return 0;
  const SnapshotPtr snapshot = snapshotFrom(args);
  AttributionOptions options;
  std::tie(options.traceLayer, options.traceHead) = parseHead(args.get("head"));
  options.traceSequence = args.getInt64("trace-sequence");
  options.bootstrapSamples = args.getInt("bootstrap");
  options.seed = static_cast<uint64_t>(args.getInt64("seed"));
  AttributionResult r;
  try {
    r = logitAttribution(*snapshot, sequencesFrom(args, *snapshot), options, progressBar());
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  nlohmann::json j = toJson(r);
  j["trace"]["token_texts"] = tokenTexts(tokenizerFor(*snapshot), r.trace.tokens);
  if (!args.get("csv").empty()) {
    PatchingGrid grid{"nmae_percent", r.layers, r.heads, {}, {}, {}, {}};
    for (int l = 0; l < r.layers; ++l) grid.rowLabels.push_back("L" + std::to_string(l));
    for (int h = 0; h < r.heads; ++h) grid.columnLabels.push_back("H" + std::to_string(h));
    std::vector<double> values;
    for (const auto& c : r.headAttributions) values.push_back(c.nmae);
    writeFileAtomic(args.get("csv"), gridCsv(grid, values));
  }
  emit(args, j);
  return 0;
}

int analyzePatching(const Argv& argv) {
  Args args("analyze patching",
            "Activation and attribution patching on an IOI prompt set (metric: logit difference, normalized "
            "0 = corrupted … 1 = clean) for resid_pre (layer × position), head outputs (layer × head) and "
            "head outputs by position; the error grid is attribution − activation.");
  modelOptions(args)
      .option("prompts", "file.json",
              "IOI prompt set from 'normfree-cli ioi' (default: made here with the "
              "model's tokenizer)",
              "")
      .option("count", "n", "prompts to make when --prompts is not given (a multiple of 4)", "96")
      .option("frame", "n", "sentence frame to make them from", "0")
      .option("seed", "n", "seed to make them with", "0")
      .flag("no-head-positions", "skip the (layer, head) × position grid")
      .option("csv-dir", "folder", "also write every grid (activation, attribution, error) as CSV here", "");
  if (!args.parse(argv)) return 0;
  const SnapshotPtr snapshot = snapshotFrom(args);
  const std::optional<BpeTokenizer> tokenizer = tokenizerFor(*snapshot);
  IoiPromptSet set;
  if (!args.get("prompts").empty()) {
    set = ioiPromptSetFromJson(nlohmann::json::parse(readTextFile(args.get("prompts"))), args.get("prompts"));
  } else {
    if (!tokenizer)
      throw UsageError("no tokenizer files next to " + snapshot->source() +
                       ": give an IOI prompt set with --prompts");
    IoiOptions options;
    options.count = args.getInt64("count");
    options.frameIndex = args.getInt("frame");
    options.seed = static_cast<uint64_t>(args.getInt64("seed"));
    try {
      set = makeIoiPromptSet(*tokenizer, options);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  PatchingOptions options;
  options.headPositions = !args.has("no-head-positions");
  const PatchingResult r = ioiPatching(*snapshot, set, options, progressBar());
  nlohmann::json j = toJson(r);
  j["example_clean_texts"] = tokenTexts(tokenizer, r.exampleClean);
  j["example_corrupted_texts"] = tokenTexts(tokenizer, r.exampleCorrupted);
  if (!args.get("csv-dir").empty()) {
    fs::create_directories(args.get("csv-dir"));
    for (const PatchingGrid* grid : {&r.residPre, &r.heads, &r.headPositions}) {
      if (grid->rows == 0) continue;
      const std::string stem = args.get("csv-dir") + "/" + grid->name;
      writeFileAtomic(stem + "_activation.csv", gridCsv(*grid, grid->activation));
      writeFileAtomic(stem + "_attribution.csv", gridCsv(*grid, grid->attribution));
      writeFileAtomic(stem + "_error.csv", gridCsv(*grid, grid->error()));
    }
  }
  emit(args, j);
  return 0;
}

int analyzeNeurons(const Argv& argv) {
  Args args("analyze neurons",
            "Confidence (entropy) neurons of the last MLP layer: ‖w_out‖, LogitVar and the CN score of every "
            "neuron, the SVD spectrum of the unembedding with the top neurons' cosines to its singular "
            "vectors, and mean ablation of the top-k neurons alone and cumulatively (ΔCE, Δentropy).");
  dataOptions(modelOptions(args))
      .option("top", "k", "neurons to ablate and compare with the singular vectors", "10");
  if (!args.parse(argv)) return 0;
  const SnapshotPtr snapshot = snapshotFrom(args);
  emit(args, toJson(confidenceNeurons(*snapshot, sequencesFrom(args, *snapshot), args.getInt("top"),
                                      progressBar())));
  return 0;
}

int analyzeCalibration(const Argv& argv) {
  Args args("analyze calibration",
            "Calibration and samples of one or more models side by side: CE with its median and central "
            "ranges, entropy, ECE with reliability-diagram bins, and greedy and sampled continuations of the "
            "prompts.");
  dataOptions(modelOptions(args))
      .option("compare", "folder[,folder…]", "more models to compute the same for", "")
      .option("prompt", "text[|text…]", "prompts to continue, separated by '|'",
              "Once upon a time|Mary and John went to the")
      .option("new-tokens", "n", "tokens to generate per continuation", "30")
      .option("temperature", "t", "temperature of the sampled continuation", "1.0")
      .option("seed", "n", "sampling seed", "0");
  if (!args.parse(argv)) return 0;
  std::vector<SnapshotPtr> snapshots{snapshotFrom(args)};
  std::stringstream compare(args.get("compare"));
  for (std::string folder; std::getline(compare, folder, ',');)
    if (!folder.empty())
      snapshots.push_back(ModelSnapshot::load(run::modelFolder(folder), args.get("device")));
  const std::optional<BpeTokenizer> tokenizer = tokenizerFor(*snapshots.front());
  std::vector<std::vector<int32_t>> prompts;
  std::stringstream promptList(args.get("prompt"));
  for (std::string text; std::getline(promptList, text, '|');) {
    if (!tokenizer)
      throw UsageError("no tokenizer files next to " + snapshots.front()->source() + " to encode prompts");
    std::vector<int32_t> ids{snapshots.front()->config().shape.eotTokenId};
    tokenizer->encodeAppend(text, ids);
    prompts.push_back(ids);
  }
  BehaviourOptions options;
  options.newTokens = args.getInt64("new-tokens");
  options.temperature = args.getDouble("temperature");
  options.seed = static_cast<uint64_t>(args.getInt64("seed"));
  const TokenSequences data = sequencesFrom(args, *snapshots.front());
  nlohmann::json models = nlohmann::json::array();
  for (const SnapshotPtr& snapshot : snapshots) {
    nlohmann::json j = toJson(modelBehaviour(*snapshot, data, prompts, options, progressBar()));
    if (tokenizer)
      for (auto& c : j["continuations"])
        for (const char* part : {"prompt", "greedy", "sampled"})
          c[std::string(part) + "_text"] = tokenizer->decode(c[part].get<std::vector<int32_t>>());
    models.push_back(j);
  }
  emit(args, {{"header", {{"analysis", "calibration"}}}, {"models", models}});
  return 0;
}

int analyzeIoi(const Argv& argv) {
  Args args("analyze ioi",
            "Mean logit difference (correct − wrong name) of a model on an IOI prompt set, clean "
            "and corrupted, and the share of clean prompts it gets right.");
  modelOptions(args).option("prompts", "file.json", "IOI prompt set written by 'normfree-cli ioi'");
  if (!args.parse(argv)) return 0;
  const SnapshotPtr snapshot = snapshotFrom(args);
  const auto set =
      ioiPromptSetFromJson(nlohmann::json::parse(readTextFile(args.get("prompts"))), args.get("prompts"));
  nlohmann::json j = toJson(ioiLogitDifference(snapshot->model(), set));
  j["model"] = snapshot->label();
  j["prompts_file"] = args.get("prompts");
  printJson(j);
  return 0;
}

int analyzeInduction(const Argv& argv) {
  Args args("analyze induction",
            "Loss on the first and second copy of repeated random token spans: a model with "
            "induction heads predicts the second copy far better.");
  modelOptions(args)
      .option("span", "n", "span length (two copies and <|endoftext|> must fit the context)", "50")
      .option("sequences", "n", "number of random spans", "64")
      .option("seed", "n", "random seed", "0")
      .option("from", "file.bin", "draw the tokens from those occurring in this token file (default: all)",
              "");
  if (!args.parse(argv)) return 0;
  const SnapshotPtr snapshot = snapshotFrom(args);
  std::vector<bool> allowed;
  if (!args.get("from").empty())
    allowed = TokenFile::open(args.get("from")).occurringTokens(snapshot->config().shape.vocabSize);
  nlohmann::json j = toJson(
      inductionLosses(snapshot->model(), args.getInt64("span"), args.getInt64("sequences"),
                      static_cast<uint64_t>(args.getInt64("seed")), allowed.empty() ? nullptr : &allowed));
  j["model"] = snapshot->label();
  if (!args.get("from").empty()) j["tokens_from"] = args.get("from");
  printJson(j);
  return 0;
}

struct Kind {
  const char* name;
  int (*run)(const Argv&);
};
constexpr Kind kKinds[] = {{"norms", analyzeNorms},     {"sinks", analyzeSinks},
                           {"dla", analyzeDla},         {"patching", analyzePatching},
                           {"neurons", analyzeNeurons}, {"calibration", analyzeCalibration},
                           {"ioi", analyzeIoi},         {"induction", analyzeInduction}};

}  // namespace

int cmdAnalyze(const Argv& argv) {
  const std::string kind = argv.empty() ? "" : argv[0];
  const Argv rest(argv.begin() + std::min<std::size_t>(1, argv.size()), argv.end());
  std::vector<std::string> names;
  for (const Kind& k : kKinds) {
    if (kind == k.name) return k.run(rest);
    names.push_back(k.name);
  }
  if (kind == "--help" || kind == "-h" || kind.empty()) {
    printJson(
        {{"usage", "normfree-cli analyze <kind> <model> [options]   (normfree-cli analyze <kind> --help)"},
         {"kinds", names}});
    return kind.empty() ? 2 : 0;
  }
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  throw UsageError("unknown analysis '" + kind + "' (" + list + ")");
}

}  // namespace nf::cli

// normfree-cli analyze <kind>: every analysis of a model folder, a run's final model or one of its
// checkpoints, as JSON (and CSV for grids). The schema is in docs/ANALYSES.md.
#include <torch/torch.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "analysis/attention_sinks.h"
#include "analysis/behaviour.h"
#include "analysis/confidence_neurons.h"
#include "analysis/logit_attribution.h"
#include "analysis/patching.h"
#include "analysis/residual_norms.h"
#include "commands.h"
#include "data/synthetic_corpus.h"
#include "data/token_file.h"
#include "eval/circuits.h"
#include "io/atomic_file.h"
#include "model/causal_lm.h"
#include "options.h"
#include "progress_bar.h"
#include "run/run_directory.h"
#include "text/tokenizer.h"

namespace nf::cli {
namespace {

namespace fs = std::filesystem;

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
};

void addModelOptions(CLI::App& command, ModelOptions& o) {
  command.add_option("model", o.model, "model folder, run directory (its final model) or checkpoint folder")
      ->required();
  addOptional(command, "--step", o.step,
              "with a run directory: its checkpoint after n steps instead of the final model")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0));
  command.add_option("--device", o.device, "where to run")->type_name("cpu|cuda[:N]")->capture_default_str();
  command.add_option("--out", o.out, "write the result here (atomically) instead of stdout")
      ->type_name("file.json");
}

void addDataOptions(CLI::App& command, DataOptions& o) {
  command.add_option("--data", o.data, "token file to analyse (e.g. the validation split)")
      ->type_name("file.bin")
      ->required();
  command
      .add_option("--sequences", o.sequences,
                  "number of sequences (consecutive chunks from the start of the file)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1))
      ->capture_default_str();
  addOptional(command, "--length", o.length, "tokens per sequence (default: the model's context)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(2));
}

SnapshotPtr snapshotFrom(const ModelOptions& o) {
  std::string path = o.model;
  if (o.step) {
    path = run::checkpointPath(path, *o.step);
    if (!fs::is_directory(path))
      throw UsageError("no checkpoint " + path + " (checkpoints are kept every few steps)");
  }
  parseDevice(o.device);  // a clear error for a device that is not here
  return ModelSnapshot::load(path, o.device);
}

TokenSequences sequencesFrom(const DataOptions& o, const ModelSnapshot& snapshot) {
  const int64_t length = o.length.value_or(snapshot.config().shape.nPositions);
  if (length > snapshot.config().shape.nPositions)
    throw UsageError("--length " + std::to_string(length) + " is longer than the model's context (" +
                     std::to_string(snapshot.config().shape.nPositions) + ")");
  return readSequences(o.data, o.sequences, length);
}

// The tokenizer that goes with a model: its own folder's, or for a checkpoint, that of the model the run
// started from. Empty when there is none (results then carry token ids only).
std::shared_ptr<const Tokenizer> tokenizerFor(const ModelSnapshot& snapshot) {
  const std::string folder = run::tokenizerFolder(snapshot.source());
  if (folder.empty()) return nullptr;
  return loadTokenizer(folder);
}

nlohmann::json tokenTexts(const std::shared_ptr<const Tokenizer>& tokenizer,
                          const std::vector<int32_t>& ids) {
  nlohmann::json texts = nlohmann::json::array();
  for (int32_t id : ids) texts.push_back(tokenizer ? tokenizer->tokenBytes(id) : std::to_string(id));
  return texts;
}

void emit(const ModelOptions& o, const nlohmann::json& result) {
  if (o.out.empty()) {
    printJson(result);
    return;
  }
  writeFileAtomic(o.out, result.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  printJson({{"written", o.out}, {"analysis", result["header"]["analysis"]}});
}

void analyzeNorms(CLI::App& command) {
  command.description(
      "Residual-stream L2 norms at every layer (resid_pre, and the final residual), position 0 against "
      "the rest (mean, median, 10th/90th percentiles), and per LN site the distribution of σ over tokens "
      "(the scale FakeLN freezes) as a log-spaced histogram.");
  struct Options : ModelOptions, DataOptions {
    int bins = 40;
  };
  auto o = std::make_shared<Options>();
  addModelOptions(command, *o);
  addDataOptions(command, *o);
  command.add_option("--bins", o->bins, "histogram bins per site")
      ->type_name("n")
      ->transform(atLeast(1))
      ->capture_default_str();
  onRun(command, [o] {
    const SnapshotPtr snapshot = snapshotFrom(*o);
    emit(*o, toJson(residualNorms(*snapshot, sequencesFrom(*o, *snapshot), o->bins, progressBar())));
    return 0;
  });
}

void analyzeSinks(CLI::App& command) {
  command.description(
      "Attention sinks: per head, the share of sequences on which position 0 receives at least the "
      "threshold of the head's attention (averaged over query positions); the overall sink rate.");
  struct Options : ModelOptions, DataOptions {
    double threshold = 0.3;
  };
  auto o = std::make_shared<Options>();
  addModelOptions(command, *o);
  addDataOptions(command, *o);
  command.add_option("--threshold", o->threshold, "attention to position 0 that makes a sink")
      ->type_name("x")
      ->transform(fraction())
      ->capture_default_str();
  onRun(command, [o] {
    const SnapshotPtr snapshot = snapshotFrom(*o);
    emit(*o, toJson(attentionSinks(*snapshot, sequencesFrom(*o, *snapshot), o->threshold, progressBar())));
    return 0;
  });
}

std::pair<int, int> parseHead(const std::string& text) {
  int layer = 0, head = 0;
  char dot = 0;
  std::istringstream in(text);
  if (!(in >> layer >> dot >> head) || dot != '.' || !in.eof())
    throw UsageError("--head '" + text + "': expected LAYER.HEAD, e.g. 2.3");
  return {layer, head};
}

void analyzeDla(CLI::App& command) {
  command.description(
      "Direct logit attribution (with the cached final LN scale) against the direct effect (final LN "
      "recomputed) for every head, MLP layer, the embeddings and the attention output biases, for the "
      "correct next token at every position: per-component NMAE, overall NMAE over heads with a 95% "
      "bootstrap interval, and one head's per-position values.");
  struct Options : ModelOptions, DataOptions {
    std::string head = "0.0", csv;
    int64_t traceSequence = 0, seed = 0;
    int bootstrap = 1000;
  };
  auto o = std::make_shared<Options>();
  addModelOptions(command, *o);
  addDataOptions(command, *o);
  command.add_option("--head", o->head, "the head whose per-position values are reported")
      ->type_name("L.H")
      ->capture_default_str();
  command.add_option("--trace-sequence", o->traceSequence, "the sequence those values are reported for")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  command.add_option("--bootstrap", o->bootstrap, "bootstrap resamples of the sequences (0: none)")
      ->type_name("n")
      ->transform(atLeast(0))
      ->capture_default_str();
  command.add_option("--seed", o->seed, "bootstrap seed")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  command.add_option("--csv", o->csv, "also write the per-head NMAE grid (layer × head) as CSV")
      ->type_name("file.csv");
  onRun(command, [o] {
    const SnapshotPtr snapshot = snapshotFrom(*o);
    AttributionOptions options;
    std::tie(options.traceLayer, options.traceHead) = parseHead(o->head);
    options.traceSequence = o->traceSequence;
    options.bootstrapSamples = o->bootstrap;
    options.seed = static_cast<uint64_t>(o->seed);
    AttributionResult r;
    try {
      r = logitAttribution(*snapshot, sequencesFrom(*o, *snapshot), options, progressBar());
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    nlohmann::json j = toJson(r);
    j["trace"]["token_texts"] = tokenTexts(tokenizerFor(*snapshot), r.trace.tokens);
    if (!o->csv.empty()) {
      PatchingGrid grid{"nmae_percent", r.layers, r.heads, {}, {}, {}, {}};
      for (int l = 0; l < r.layers; ++l) grid.rowLabels.push_back("L" + std::to_string(l));
      for (int h = 0; h < r.heads; ++h) grid.columnLabels.push_back("H" + std::to_string(h));
      std::vector<double> values;
      for (const auto& c : r.headAttributions) values.push_back(c.nmae);
      writeFileAtomic(o->csv, gridCsv(grid, values));
    }
    emit(*o, j);
    return 0;
  });
}

void analyzePatching(CLI::App& command) {
  command.description(
      "Activation and attribution patching on an IOI prompt set (metric: logit difference, normalized "
      "0 = corrupted … 1 = clean) for resid_pre (layer × position), head outputs (layer × head) and "
      "head outputs by position; the error grid is attribution − activation.");
  struct Options : ModelOptions {
    std::string prompts, csvDir;
    int64_t count = 96, seed = 0;
    int frame = 0;
    bool noHeadPositions = false;
  };
  auto o = std::make_shared<Options>();
  const int lastFrame = static_cast<int>(ioiFrames().size()) - 1;
  addModelOptions(command, *o);
  command
      .add_option("--prompts", o->prompts,
                  "IOI prompt set from 'normfree-cli ioi' (default: made here with the model's tokenizer)")
      ->type_name("file.json");
  command.add_option("--count", o->count, "prompts to make when --prompts is not given (a multiple of 4)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(4))
      ->capture_default_str();
  command
      .add_option("--frame", o->frame,
                  "sentence frame to make them from (0…" + std::to_string(lastFrame) + ")")
      ->type_name("n")
      ->transform(inRange(0, lastFrame))
      ->capture_default_str();
  command.add_option("--seed", o->seed, "seed to make them with")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  command.add_flag("--no-head-positions", o->noHeadPositions, "skip the (layer, head) × position grid");
  command
      .add_option("--csv-dir", o->csvDir,
                  "also write every grid (activation, attribution, error) as CSV here")
      ->type_name("folder");
  onRun(command, [o] {
    const SnapshotPtr snapshot = snapshotFrom(*o);
    const std::shared_ptr<const Tokenizer> tokenizer = tokenizerFor(*snapshot);
    IoiPromptSet set;
    if (!o->prompts.empty()) {
      set = ioiPromptSetFromJson(nlohmann::json::parse(readTextFile(o->prompts)), o->prompts);
    } else {
      if (!tokenizer)
        throw UsageError("no tokenizer files next to " + snapshot->source() +
                         ": give an IOI prompt set with --prompts");
      IoiOptions options;
      options.count = o->count;
      options.frameIndex = o->frame;
      options.seed = static_cast<uint64_t>(o->seed);
      try {
        set = makeIoiPromptSet(*tokenizer, options);
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
    }
    PatchingOptions options;
    options.headPositions = !o->noHeadPositions;
    const PatchingResult r = ioiPatching(*snapshot, set, options, progressBar());
    nlohmann::json j = toJson(r);
    j["example_clean_texts"] = tokenTexts(tokenizer, r.exampleClean);
    j["example_corrupted_texts"] = tokenTexts(tokenizer, r.exampleCorrupted);
    if (!o->csvDir.empty()) {
      fs::create_directories(o->csvDir);
      for (const PatchingGrid* grid : {&r.residPre, &r.heads, &r.headPositions}) {
        if (grid->rows == 0) continue;
        const std::string stem = o->csvDir + "/" + grid->name;
        writeFileAtomic(stem + "_activation.csv", gridCsv(*grid, grid->activation));
        writeFileAtomic(stem + "_attribution.csv", gridCsv(*grid, grid->attribution));
        writeFileAtomic(stem + "_error.csv", gridCsv(*grid, grid->error()));
      }
    }
    emit(*o, j);
    return 0;
  });
}

void analyzeNeurons(CLI::App& command) {
  command.description(
      "Confidence (entropy) neurons of the last MLP layer: ‖w_out‖, LogitVar and the CN score of every "
      "neuron, the SVD spectrum of the unembedding with the top neurons' cosines to its singular "
      "vectors, and mean ablation of the top-k neurons alone and cumulatively (ΔCE, Δentropy).");
  struct Options : ModelOptions, DataOptions {
    int top = 10;
  };
  auto o = std::make_shared<Options>();
  addModelOptions(command, *o);
  addDataOptions(command, *o);
  command.add_option("--top", o->top, "neurons to ablate and compare with the singular vectors")
      ->type_name("k")
      ->transform(atLeast(1))
      ->capture_default_str();
  onRun(command, [o] {
    const SnapshotPtr snapshot = snapshotFrom(*o);
    emit(*o, toJson(confidenceNeurons(*snapshot, sequencesFrom(*o, *snapshot), o->top, progressBar())));
    return 0;
  });
}

void analyzeCalibration(CLI::App& command) {
  command.description(
      "Calibration and samples of one or more models side by side: CE with its median and central "
      "ranges, entropy, ECE with reliability-diagram bins, and greedy and sampled continuations of the "
      "prompts.");
  struct Options : ModelOptions, DataOptions {
    std::string compare, prompt = "Once upon a time|Mary and John went to the";
    int64_t newTokens = 30, seed = 0;
    double temperature = 1.0;
  };
  auto o = std::make_shared<Options>();
  addModelOptions(command, *o);
  addDataOptions(command, *o);
  command.add_option("--compare", o->compare, "more models to compute the same for")
      ->type_name("folder[,folder…]");
  command.add_option("--prompt", o->prompt, "prompts to continue, separated by '|'")
      ->type_name("text[|text…]")
      ->capture_default_str();
  command.add_option("--new-tokens", o->newTokens, "tokens to generate per continuation")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  command.add_option("--temperature", o->temperature, "temperature of the sampled continuation")
      ->type_name("t")
      ->transform(atLeast(0.0))
      ->default_str("1.0");
  command.add_option("--seed", o->seed, "sampling seed")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  onRun(command, [o] {
    std::vector<SnapshotPtr> snapshots{snapshotFrom(*o)};
    std::stringstream compare(o->compare);
    for (std::string folder; std::getline(compare, folder, ',');)
      if (!folder.empty()) snapshots.push_back(ModelSnapshot::load(run::modelFolder(folder), o->device));
    const std::shared_ptr<const Tokenizer> tokenizer = tokenizerFor(*snapshots.front());
    std::vector<std::vector<int32_t>> prompts;
    std::stringstream promptList(o->prompt);
    for (std::string text; std::getline(promptList, text, '|');) {
      if (!tokenizer)
        throw UsageError("no tokenizer files next to " + snapshots.front()->source() + " to encode prompts");
      // A prompt starts as a document does in token files.
      std::vector<int32_t> ids{tokenizer->documentStartId() >= 0
                                   ? tokenizer->documentStartId()
                                   : snapshots.front()->config().shape.eotTokenId};
      tokenizer->encodeAppend(text, ids);
      prompts.push_back(ids);
    }
    BehaviourOptions options;
    options.newTokens = o->newTokens;
    options.temperature = o->temperature;
    options.seed = static_cast<uint64_t>(o->seed);
    const TokenSequences data = sequencesFrom(*o, *snapshots.front());
    nlohmann::json models = nlohmann::json::array();
    for (const SnapshotPtr& snapshot : snapshots) {
      nlohmann::json j = toJson(modelBehaviour(*snapshot, data, prompts, options, progressBar()));
      if (tokenizer)
        for (auto& c : j["continuations"])
          for (const char* part : {"prompt", "greedy", "sampled"})
            c[std::string(part) + "_text"] = tokenizer->decodeKnown(c[part].get<std::vector<int32_t>>());
      models.push_back(j);
    }
    emit(*o, {{"header", {{"analysis", "calibration"}}}, {"models", models}});
    return 0;
  });
}

void analyzeIoi(CLI::App& command) {
  command.description(
      "Mean logit difference (correct − wrong name) of a model on an IOI prompt set, clean "
      "and corrupted, and the share of clean prompts it gets right.");
  struct Options : ModelOptions {
    std::string prompts;
  };
  auto o = std::make_shared<Options>();
  addModelOptions(command, *o);
  command.add_option("--prompts", o->prompts, "IOI prompt set written by 'normfree-cli ioi'")
      ->type_name("file.json")
      ->required();
  onRun(command, [o] {
    const SnapshotPtr snapshot = snapshotFrom(*o);
    const auto set = ioiPromptSetFromJson(nlohmann::json::parse(readTextFile(o->prompts)), o->prompts);
    nlohmann::json j = toJson(ioiLogitDifference(snapshot->model(), set));
    j["model"] = snapshot->label();
    j["prompts_file"] = o->prompts;
    printJson(j);
    return 0;
  });
}

void analyzeInduction(CLI::App& command) {
  command.description(
      "Loss on the first and second copy of repeated random token spans: a model with "
      "induction heads predicts the second copy far better.");
  struct Options : ModelOptions {
    int64_t span = 50, sequences = 64, seed = 0;
    std::string from;
  };
  auto o = std::make_shared<Options>();
  addModelOptions(command, *o);
  command.add_option("--span", o->span, "span length (two copies and <|endoftext|> must fit the context)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1))
      ->capture_default_str();
  command.add_option("--sequences", o->sequences, "number of random spans")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1))
      ->capture_default_str();
  command.add_option("--seed", o->seed, "random seed")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  command
      .add_option("--from", o->from, "draw the tokens from those occurring in this token file (default: all)")
      ->type_name("file.bin");
  onRun(command, [o] {
    const SnapshotPtr snapshot = snapshotFrom(*o);
    std::vector<bool> allowed;
    if (!o->from.empty())
      allowed = TokenFile::open(o->from).occurringTokens(snapshot->config().shape.vocabSize);
    nlohmann::json j =
        toJson(inductionLosses(snapshot->model(), o->span, o->sequences, static_cast<uint64_t>(o->seed),
                               allowed.empty() ? nullptr : &allowed));
    j["model"] = snapshot->label();
    if (!o->from.empty()) j["tokens_from"] = o->from;
    printJson(j);
    return 0;
  });
}

}  // namespace

void cmdAnalyze(CLI::App& command) {
  command.description(
      "Analyses of a model folder, a run's final model or one of its checkpoints, as JSON (and CSV for "
      "grids). The schema is in docs/ANALYSES.md.");
  command.require_subcommand(1);
  analyzeNorms(
      addCommand(command, "norms", "residual-stream norms by layer and position; σ of every LN site"));
  analyzeSinks(addCommand(command, "sinks", "attention sinks: how often each head attends to position 0"));
  analyzeDla(addCommand(command, "dla", "direct logit attribution against the direct effect, per component"));
  analyzePatching(addCommand(command, "patching", "activation and attribution patching on IOI prompts"));
  analyzeNeurons(addCommand(command, "neurons", "confidence (entropy) neurons of the last MLP layer"));
  analyzeCalibration(
      addCommand(command, "calibration", "calibration, entropy and sampled text of models side by side"));
  analyzeIoi(addCommand(command, "ioi", "logit difference on an IOI prompt set, clean and corrupted"));
  analyzeInduction(addCommand(command, "induction", "loss on the first and second copy of repeated spans"));
  command.footer(
      "Run 'normfree-cli analyze <analysis> --help' for an analysis's options.");  // after: kinds copy it
}

}  // namespace nf::cli

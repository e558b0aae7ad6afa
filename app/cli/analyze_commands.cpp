// normfree-cli analyze <kind>: every analysis of a model folder, a run's final model or one of its
// checkpoints, as JSON (and CSV for grids). The schema is in docs/ANALYSES.md.
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "analysis/analysis_header.h"
#include "analysis/analysis_request.h"
#include "analysis_options.h"
#include "commands.h"
#include "data/synthetic_corpus.h"
#include "data/token_file.h"
#include "eval/circuits.h"
#include "io/atomic_file.h"
#include "io/file_format.h"
#include "model/causal_lm.h"
#include "options.h"
#include "progress_bar.h"
#include "run/run_directory.h"
#include "text/tokenizer.h"

namespace nf::cli {
namespace {

namespace fs = std::filesystem;

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
      ->transform(inRange(1, AnalysisLimits::kBins))
      ->capture_default_str();
  onRun(command, [o] {
    AnalysisRequest request = requestFor("norms", *o);
    request.bins = o->bins;
    const SnapshotPtr snapshot = snapshotFrom(*o);
    emit(*o, analyse(request, *snapshot, *o).result);
    return 0;
  });
}

void analyzeSinks(CLI::App& command) {
  command.description(
      "Attention sinks: per head, the share of sequences on which position 0 receives at least the "
      "threshold of the head's attention (averaged over query positions); the overall sink rate; and the "
      "per-query sink rate: the share of (head, sequence, query position after 0) whose own attention gives "
      "position 0 at least the threshold.");
  struct Options : ModelOptions, DataOptions {
    double threshold = 0.3;
  };
  auto o = std::make_shared<Options>();
  addModelOptions(command, *o);
  addDataOptions(command, *o);
  command
      .add_option("--threshold", o->threshold,
                  "attention to position 0 that makes a sink (above 0: at 0 every head is one)")
      ->type_name("x")
      ->transform(inRange(0.0, 1.0, /*minExclusive=*/true))
      ->capture_default_str();
  onRun(command, [o] {
    AnalysisRequest request = requestFor("sinks", *o);
    request.threshold = o->threshold;
    const SnapshotPtr snapshot = snapshotFrom(*o);
    emit(*o, analyse(request, *snapshot, *o).result);
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
    bool pattern = false;
  };
  auto o = std::make_shared<Options>();
  addModelOptions(command, *o);
  addDataOptions(command, *o);
  command.add_option("--head", o->head, "the head whose per-position values are reported")
      ->type_name("L.H")
      ->capture_default_str();
  addTraceSequence(command, o->traceSequence, "the sequence those values are reported for");
  command.add_flag("--trace-pattern", o->pattern,
                   "also report the head's attention pattern on that sequence (length ≤ 512)");
  command
      .add_option("--bootstrap", o->bootstrap,
                  "bootstrap resamples of the sequences (0: no interval; otherwise at least 20)")
      ->type_name("n")
      ->transform(inRange(0, AnalysisLimits::kBootstrap))
      ->capture_default_str();
  CLI::Option* seed = command.add_option("--seed", o->seed, "bootstrap seed")
                          ->type_name("n")
                          ->transform(atLeast<int64_t>(0))
                          ->capture_default_str();
  command.add_option("--csv", o->csv, "also write the per-head NMAE grid (layer × head) as CSV")
      ->type_name("file.csv");
  onRun(command, [o, seed] {
    if (o->bootstrap == 0 && seed->count() > 0)  // it had been ignored
      throw UsageError("--seed draws the bootstrap's resamples: --bootstrap 0 draws none");
    requireTraceSequenceRead(o->traceSequence, *o);
    AnalysisRequest request = requestFor("dla", *o);
    std::tie(request.traceLayer, request.traceHead) = parseHead(o->head);
    request.traceSequence = o->traceSequence;
    request.tracePattern = o->pattern;
    request.bootstrap = o->bootstrap;
    request.seed = static_cast<uint64_t>(o->seed);
    const SnapshotPtr snapshot = snapshotFrom(*o);
    const AnalysisOutput out = analyse(request, *snapshot, *o);
    if (!o->csv.empty()) writeFileAtomic(o->csv, out.csvGrids.at("nmae_percent"));
    emit(*o, out.result);
    return 0;
  });
}

void analyzeTokens(CLI::App& command) {
  command.description(
      "One sequence whole, token by token: a head's direct logit attribution and direct effect at every "
      "position, and the attention patterns of the heads asked for over the full length (at most 16 heads "
      "and 4194304 pattern values) — what the workbench's Tokens pane draws.");
  struct Options : ModelOptions, DataOptions {
    std::string head = "0.0", heads, csv;
    int64_t sequence = 0;
  };
  auto o = std::make_shared<Options>();
  addModelOptions(command, *o);
  addDataOptions(command, *o, /*withSequences=*/false);
  command
      .add_option("--sequence", o->sequence, "which sequence of the data (consecutive chunks from its start)")
      ->type_name("n")
      ->transform(inRange<int64_t>(0, AnalysisLimits::kSequences - 1))
      ->capture_default_str();
  command.add_option("--head", o->head, "the head whose DLA and DE per token are reported")
      ->type_name("L.H")
      ->capture_default_str();
  command.add_option("--heads", o->heads, "heads whose attention patterns are reported, comma-separated")
      ->type_name("L.H,…");
  command.add_option("--csv", o->csv, "also write position, token, DLA and DE per token as CSV")
      ->type_name("file.csv");
  onRun(command, [o] {
    AnalysisRequest request = requestFor("tokens", *o);
    request.sequences = o->sequence + 1;
    request.traceSequence = o->sequence;
    std::tie(request.traceLayer, request.traceHead) = parseHead(o->head);
    for (const std::string& head : splitList(o->heads)) request.heads.push_back(parseHead(head));
    const SnapshotPtr snapshot = snapshotFrom(*o);
    const AnalysisOutput out = analyse(request, *snapshot, *o);
    if (!o->csv.empty()) writeFileAtomic(o->csv, out.csvGrids.at("tokens"));
    emit(*o, out.result);
    return 0;
  });
}

void analyzeLogitLens(CLI::App& command) {
  command.description(
      "The logit lens: every block's resid_pre and the final residual read through the final norm and the "
      "unembedding, with the norm recomputed on each residual (the default), with the final layer's scale "
      "frozen per token, and with one scale for all tokens (linear): per layer the next-token CE, "
      "KL(model ‖ lens), the target's probability, median rank and top-1 share, and the top tokens at every "
      "layer and position of one sequence. On an LN-free model the three modes agree exactly.");
  struct Options : ModelOptions, DataOptions {
    std::string csv;
    int64_t traceSequence = 0;
    int top = AnalysisRequest::kLensTop;
  };
  auto o = std::make_shared<Options>();
  addModelOptions(command, *o);
  addDataOptions(command, *o);
  addTraceSequence(command, o->traceSequence, "the sequence whose top tokens are reported");
  command.add_option("--top", o->top, "top tokens per layer and position of that sequence")
      ->type_name("k")
      ->transform(inRange(1, AnalysisLimits::kLensTop))
      ->capture_default_str();
  command.add_option("--csv", o->csv, "also write the per-layer figures of every mode as CSV")
      ->type_name("file.csv");
  onRun(command, [o] {
    requireTraceSequenceRead(o->traceSequence, *o);
    AnalysisRequest request = requestFor("logit-lens", *o);
    request.traceSequence = o->traceSequence;
    request.top = o->top;
    const SnapshotPtr snapshot = snapshotFrom(*o);
    const AnalysisOutput out = analyse(request, *snapshot, *o);
    if (!o->csv.empty()) writeFileAtomic(o->csv, out.csvGrids.at("layers"));
    emit(*o, out.result);
    return 0;
  });
}

void analyzePatching(CLI::App& command) {
  command.description(
      "Activation and attribution patching on an IOI prompt set (metric: logit difference, normalized "
      "0 = corrupted … 1 = clean) for resid_pre (layer × position), head outputs (layer × head) and "
      "head outputs by position; the error grid is attribution − activation.");
  struct Options : ModelOptions, PromptOptions {
    std::string csvDir;
    bool noHeadPositions = false;
  };
  auto o = std::make_shared<Options>();
  addModelOptions(command, *o);
  addPromptOptions(command, *o);
  command.add_flag("--no-head-positions", o->noHeadPositions, "skip the (layer, head) × position grid");
  command
      .add_option("--csv-dir", o->csvDir,
                  "also write every grid (activation, attribution, error) as CSV here")
      ->type_name("folder");
  onRun(command, [o] {
    AnalysisRequest request = requestFor("patching", *o);
    request.headPositions = !o->noHeadPositions;
    const SnapshotPtr snapshot = snapshotFrom(*o);
    const AnalysisOutput out = analyse(request, *snapshot, sourcesFor(*o, *snapshot));
    if (!o->csvDir.empty()) {
      fs::create_directories(o->csvDir);
      for (const auto& [name, csv] : out.csvGrids) writeFileAtomic(o->csvDir + "/" + name + ".csv", csv);
    }
    emit(*o, out.result);
    return 0;
  });
}

void analyzeCircuit(CLI::App& command) {
  command.description(
      "Circuits as graphs on an IOI prompt set: edge attribution patching (EAP, or EAP with integrated "
      "gradients) scores every edge from the embeddings, heads and MLPs into each head's query, key and "
      "value "
      "input, each MLP's input and the logits; the circuit is the top edges (--edges K), or the fewest that "
      "keep --keep of the clean − corrupted logit difference, its faithfulness measured by patching every "
      "edge outside it with its corrupted value.");
  struct Options : ModelOptions, PromptOptions {
    std::string method = "eap", csv;
    int steps = 5;
    int64_t edges = 0, check = 32;
    double keep = 0.8;
  };
  auto o = std::make_shared<Options>();
  addModelOptions(command, *o);
  addPromptOptions(command, *o);
  command.add_option("--method", o->method, "edge scores: eap, or eap-ig (integrated gradients)")
      ->check(CLI::IsMember({"eap", "eap-ig"}))
      ->capture_default_str();
  CLI::Option* steps = command.add_option("--steps", o->steps, "eap-ig: interpolation steps")
                           ->type_name("n")
                           ->transform(inRange(1, AnalysisLimits::kIgSteps))
                           ->capture_default_str();
  auto* edges = command.add_option("--edges", o->edges, "the circuit: the top K edges by |score|")
                    ->type_name("K")
                    ->transform(atLeast<int64_t>(1));
  command.add_option("--keep", o->keep, "the circuit: the fewest top edges whose faithfulness reaches this")
      ->type_name("x")
      ->transform(inRange(0.0, 1.0, /*minExclusive=*/true))
      ->capture_default_str()
      ->excludes(edges);
  command.add_option("--check", o->check, "top edges whose score is checked by patching each alone")
      ->type_name("n")
      ->transform(inRange<int64_t>(0, AnalysisLimits::kPrompts))
      ->capture_default_str();
  command.add_option("--csv", o->csv, "also write every edge (from, to, score, in the circuit) as CSV")
      ->type_name("file.csv");
  onRun(command, [o, steps] {
    if (steps->count() > 0 && o->method != "eap-ig")
      throw UsageError("--steps applies to --method eap-ig only (eap takes one gradient)");
    AnalysisRequest request = requestFor("circuit", *o);
    request.method = o->method;
    request.steps = o->steps;
    request.edges = o->edges;
    request.keep = o->keep;
    request.check = o->check;
    const SnapshotPtr snapshot = snapshotFrom(*o);
    const AnalysisOutput out = analyse(request, *snapshot, sourcesFor(*o, *snapshot));
    if (!o->csv.empty()) writeFileAtomic(o->csv, out.csvGrids.at("edges"));
    // More edges asked for than the graph has: all of them, said so.
    const auto edgeCount = static_cast<int64_t>(out.result.at("edges").size());
    if (o->edges > edgeCount)
      std::cerr << "note: --edges " << o->edges << ": the graph has " << edgeCount
                << " edges; the circuit is all of them\n";
    if (o->check > edgeCount)
      std::cerr << "note: --check " << o->check << ": the graph has " << edgeCount
                << " edges; all are checked\n";
    emit(*o, out.result);
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
      ->transform(inRange(1, AnalysisLimits::kTop))
      ->capture_default_str();
  onRun(command, [o] {
    AnalysisRequest request = requestFor("neurons", *o);
    request.top = o->top;
    const SnapshotPtr snapshot = snapshotFrom(*o);
    const nlohmann::json result = analyse(request, *snapshot, *o).result;
    const auto neurons = static_cast<int>(result.at("neurons").size());  // more asked for: all, said so
    if (o->top > neurons)
      std::cerr << "note: --top " << o->top << ": the layer has " << neurons << " neurons; all are ablated\n";
    emit(*o, result);
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
  addingUp(command.add_option("--compare", o->compare, "more models to compute the same for")
               ->type_name("folder[,folder…]"));
  command.add_option("--prompt", o->prompt, "prompts to continue, separated by '|' ('': none)")
      ->type_name("text[|text…]")
      ->capture_default_str();
  command.add_option("--new-tokens", o->newTokens, "tokens to generate per continuation")
      ->type_name("n")
      ->transform(inRange<int64_t>(0, AnalysisLimits::kNewTokens))
      ->capture_default_str();
  command
      .add_option("--temperature", o->temperature,
                  "temperature of the sampled continuation, shown beside the greedy one (above 0)")
      ->type_name("t")
      ->transform(inRange(0.0, 100.0, /*minExclusive=*/true))
      ->default_str("1.0");
  command.add_option("--seed", o->seed, "sampling seed")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  onRun(command, [o] {
    AnalysisRequest request = requestFor("calibration", *o);
    request.prompts.clear();
    std::stringstream promptList(o->prompt);
    for (std::string text; std::getline(promptList, text, '|');) request.prompts.push_back(text);
    // '' asks for none (the calibration alone); "a||b" had added a continuation of nothing, unsaid.
    if (!o->prompt.empty() &&
        (o->prompt.back() == '|' ||
         std::find(request.prompts.begin(), request.prompts.end(), "") != request.prompts.end()))
      throw UsageError("--prompt " + o->prompt + ": every prompt between the '|'s needs text");
    request.newTokens = o->newTokens;
    request.temperature = o->temperature;
    request.seed = static_cast<uint64_t>(o->seed);
    std::vector<SnapshotPtr> snapshots{snapshotFrom(*o)};
    for (const std::string& folder : splitList(o->compare))
      snapshots.push_back(ModelSnapshot::load(run::modelFolder(folder), o->device));
    // Every model on the first one's sequences, prompts and tokenizer.
    if (request.length == 0) request.length = snapshots.front()->config().shape.nPositions;
    // The first through the DataOptions form, which notes a short file or another tokenizer's data.
    AnalysisOutput out = analyse(request, *snapshots.front(), *o);
    const AnalysisSources sources{o->data, tokenizerFor(*snapshots.front()), nullptr};
    const TokenFile data = TokenFile::open(o->data);
    for (std::size_t i = 1; i < snapshots.size(); ++i) {
      noteOtherTokenizer(data, snapshots[i]->config().shape.eotTokenId,
                         run::tokenizerIfAny(snapshots[i]->source()).get());
      out.result["models"].push_back(analyse(request, *snapshots[i], sources).result["models"][0]);
    }
    emit(*o, out.result);
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
    const IoiPromptSet set = ioiPromptSetFromJson(readJsonFile(o->prompts), o->prompts);
    // As patching and circuit check it: ids the model has, and the model's own tokenizer's prompts.
    checkIoiPromptSetFor(set, snapshot->config().shape.vocabSize, tokenizerFor(*snapshot).get());
    nlohmann::json j = toJson(ioiLogitDifference(snapshot->model(), set));
    j["header"] = toJson(makeHeader("ioi", *snapshot, o->prompts + ": IOI prompts (" + set.frame + ")",
                                    static_cast<int64_t>(set.prompts.size()), set.length));
    j["model"] = snapshot->label();
    j["prompts_file"] = o->prompts;
    emit(*o, j);
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
  // The losses are on tokens 2…L of each copy: a span of one has none.
  command.add_option("--span", o->span, "span length (two copies and <|endoftext|> must fit the context)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(2))
      ->capture_default_str();
  command.add_option("--sequences", o->sequences, "number of random spans")
      ->type_name("n")
      ->transform(inRange<int64_t>(1, AnalysisLimits::kSequences))
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
    // Each sequence starts as the model's documents do (LLaMA's <s>; GPT-2's end-of-text), as IOI and
    // calibration prompts do: it had started with end-of-text for every family.
    const auto tokenizer = run::tokenizerIfAny(snapshot->source());
    const int32_t start = tokenizer ? tokenizer->documentStartId() : -1;
    nlohmann::json j =
        toJson(inductionLosses(snapshot->model(), o->span, o->sequences, static_cast<uint64_t>(o->seed),
                               allowed.empty() ? nullptr : &allowed, 0, start));
    const bool afterEnd = start < 0 || start == snapshot->config().shape.eotTokenId;
    const std::string data =
        "random spans of " + std::to_string(o->span) + " tokens, twice, after " +
        (afterEnd ? "end-of-text" : "the begin-of-sequence token " + std::to_string(start)) +
        (o->from.empty() ? "" : ", drawn from the tokens of " + o->from);
    j["header"] = toJson(makeHeader("induction", *snapshot, data, o->sequences, 2 * o->span + 1));
    j["model"] = snapshot->label();
    if (!o->from.empty()) j["tokens_from"] = o->from;
    emit(*o, j);
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
  analyzeLogitLens(
      addCommand(command, "logit-lens", "each layer's residual read through the final norm, in three modes"));
  analyzeTokens(
      addCommand(command, "tokens", "one sequence token by token: a head's DLA and DE, attention patterns"));
  analyzePatching(addCommand(command, "patching", "activation and attribution patching on IOI prompts"));
  analyzeCircuit(
      addCommand(command, "circuit", "edge attribution patching and a circuit's faithfulness on IOI"));
  analyzeNeurons(addCommand(command, "neurons", "confidence (entropy) neurons of the last MLP layer"));
  analyzeCalibration(
      addCommand(command, "calibration", "calibration, entropy and sampled text of models side by side"));
  analyzeIoi(addCommand(command, "ioi", "logit difference on an IOI prompt set, clean and corrupted"));
  analyzeInduction(addCommand(command, "induction", "loss on the first and second copy of repeated spans"));
  command.footer(
      "Run 'normfree-cli analyze <analysis> --help' for an analysis's options.");  // after: kinds copy it
}

}  // namespace nf::cli

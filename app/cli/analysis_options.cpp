#include "analysis_options.h"

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "data/ioi.h"
#include "data/synthetic_corpus.h"
#include "data/token_file.h"
#include "io/atomic_file.h"
#include "io/file_format.h"
#include "progress_bar.h"
#include "run/run_directory.h"

namespace nf::cli {

namespace fs = std::filesystem;

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

void addDataOptions(CLI::App& command, DataOptions& o, bool withSequences) {
  command.add_option("--data", o.data, "token file to analyse (e.g. the validation split)")
      ->type_name("file.bin")
      ->required();
  if (withSequences)
    command
        .add_option("--sequences", o.sequences,
                    "number of sequences (consecutive chunks from the start of the file)")
        ->type_name("n")
        ->transform(inRange<int64_t>(1, AnalysisLimits::kSequences))
        ->capture_default_str();
  addOptional(command, "--length", o.length, "tokens per sequence (default: the model's context)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(2));
  command.add_flag("--document-starts", o.documentStarts,
                   "start each sequence at a document, with the end-of-text token before it first (a BOS), "
                   "as a model pretrained with --document-windows saw its data");
}

void addPromptOptions(CLI::App& command, PromptOptions& o) {
  const int lastFrame = static_cast<int>(ioiFrames().size()) - 1;
  // --count, --frame and --seed make the set: with --prompts they would be ignored, so they are refused.
  CLI::Option* prompts =
      command
          .add_option(
              "--prompts", o.prompts,
              "IOI prompt set from 'normfree-cli ioi' (default: made here with the model's tokenizer)")
          ->type_name("file.json");
  command.add_option("--count", o.count, "prompts to make when --prompts is not given (a multiple of 4)")
      ->type_name("n")
      ->transform(inRange<int64_t>(4, AnalysisLimits::kPrompts))
      ->capture_default_str()
      ->excludes(prompts);
  command
      .add_option("--frame", o.frame,
                  "sentence frame to make them from (0…" + std::to_string(lastFrame) + ")")
      ->type_name("n")
      ->transform(inRange(0, lastFrame))
      ->capture_default_str()
      ->excludes(prompts);
  command.add_option("--seed", o.seed, "seed to make them with")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str()
      ->excludes(prompts);
}

AnalysisRequest requestFor(const std::string& kind, const PromptOptions& o) {
  AnalysisRequest r;
  r.kind = kind;
  r.ioiCount = o.count;
  r.ioiFrame = o.frame;
  r.seed = static_cast<uint64_t>(o.seed);
  return r;
}

SnapshotPtr snapshotFrom(const ModelOptions& o) {
  std::string path = o.model;
  if (o.step) {
    if (!run::isRunDirectory(o.model))
      throw UsageError("--step " + std::to_string(*o.step) + ": " + o.model +
                       " is not a run directory (--step picks one of a run's checkpoints)");
    path = run::checkpointPath(path, *o.step);
    if (!fs::is_directory(path)) {
      const std::string steps = run::checkpointStepsText(o.model);
      throw UsageError("no checkpoint " + path + ": " +
                       (steps.empty() ? "the run has none" : "the run keeps those of steps " + steps));
    }
  }
  parseDevice(o.device);  // a clear error for a device that is not here
  return ModelSnapshot::load(path, o.device);
}

void addTraceSequence(CLI::App& command, int64_t& traceSequence, const char* help) {
  command.add_option("--trace-sequence", traceSequence, help)
      ->type_name("n")
      ->transform(inRange<int64_t>(0, AnalysisLimits::kSequences - 1))
      ->capture_default_str();
}

void requireTraceSequenceRead(int64_t traceSequence, const DataOptions& o) {
  if (traceSequence >= o.sequences)
    throw UsageError("--trace-sequence " + std::to_string(traceSequence) +
                     " is not among the sequences read: " + "--sequences " + std::to_string(o.sequences) +
                     " reads 0 to " + std::to_string(o.sequences - 1));
}

AnalysisRequest requestFor(const std::string& kind, const DataOptions& o) {
  AnalysisRequest r;
  r.kind = kind;
  r.sequences = o.sequences;
  r.length = o.length.value_or(0);
  r.documentStarts = o.documentStarts;
  return r;
}

std::shared_ptr<const Tokenizer> tokenizerFor(const ModelSnapshot& snapshot) {
  const std::string folder = run::tokenizerFolder(snapshot.source());
  if (folder.empty()) return nullptr;
  return loadTokenizer(folder);
}

AnalysisOutput analyse(const AnalysisRequest& request, const ModelSnapshot& snapshot,
                       const AnalysisSources& sources) {
  try {
    return runAnalysis(request, snapshot, sources, progressBar());
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

AnalysisSources sourcesFor(const PromptOptions& o, const ModelSnapshot& snapshot) {
  AnalysisSources sources{"", tokenizerFor(snapshot), nullptr};
  if (!o.prompts.empty())
    sources.prompts =
        std::make_shared<const IoiPromptSet>(ioiPromptSetFromJson(readJsonFile(o.prompts), o.prompts));
  return sources;
}

AnalysisOutput analyse(const AnalysisRequest& request, const ModelSnapshot& snapshot, const DataOptions& o) {
  const std::shared_ptr<const Tokenizer> tokenizer = tokenizerFor(snapshot);
  noteOtherTokenizer(TokenFile::open(o.data), snapshot.config().shape.eotTokenId, tokenizer.get());
  AnalysisOutput output = analyse(request, snapshot, {o.data, tokenizer, nullptr});
  // The header that counts the sequences read: calibration's is its model's. tokens reads the sequences up
  // to the one it shows (refusing a file without it) and analyses that one alone: nothing to note.
  const nlohmann::json& result = output.result;
  const nlohmann::json& header =
      result.contains("models") ? result.at("models").at(0).at("header") : result.at("header");
  const int64_t analysed = request.kind == "tokens" ? 1 : request.sequences;
  if (header.contains("sequences") && header["sequences"].get<int64_t>() < analysed)
    std::cerr << "note: " << header["data"].get<std::string>() << "\n";
  return output;
}

void emit(const ModelOptions& o, const nlohmann::json& result) {
  printOrWrite(o.out, result, {{"analysis", result["header"]["analysis"]}});
}

}  // namespace nf::cli

// normfree-cli analyze <kind>: analyses of a model folder or a run's final model, as JSON.
#include <torch/torch.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "data/token_file.h"
#include "eval/circuits.h"
#include "io/atomic_file.h"
#include "io/hf_checkpoint.h"
#include "train/run_directory.h"

namespace nf::cli {
namespace {

GPT2 modelFrom(const std::string& path, const std::string& device) {
  return loadModel(run::modelFolder(path), parseDevice(device));
}

int analyzeIoi(const Argv& argv) {
  Args args("analyze ioi",
            "Mean logit difference (correct − wrong name) of a model on an IOI prompt set, clean "
            "and corrupted, and the share of clean prompts it gets right.");
  args.positional("model", "model folder or run directory")
      .option("prompts", "file.json", "IOI prompt set written by 'normfree-cli ioi'")
      .option("device", "cpu|cuda[:N]", "where to run", "cpu");
  if (!args.parse(argv)) return 0;
  GPT2 model = modelFrom(args.get("model"), args.get("device"));
  const auto set =
      ioiPromptSetFromJson(nlohmann::json::parse(readTextFile(args.get("prompts"))), args.get("prompts"));
  nlohmann::json j = toJson(ioiLogitDifference(*model, set));
  j["model"] = args.get("model");
  j["prompts_file"] = args.get("prompts");
  printJson(j);
  return 0;
}

int analyzeInduction(const Argv& argv) {
  Args args("analyze induction",
            "Loss on the first and second copy of repeated random token spans: a model with "
            "induction heads predicts the second copy far better.");
  args.positional("model", "model folder or run directory")
      .option("span", "n", "span length (two copies and <|endoftext|> must fit the context)", "50")
      .option("sequences", "n", "number of random spans", "64")
      .option("seed", "n", "random seed", "0")
      .option("from", "file.bin", "draw the tokens from those occurring in this token file (default: all)",
              "")
      .option("device", "cpu|cuda[:N]", "where to run", "cpu");
  if (!args.parse(argv)) return 0;
  GPT2 model = modelFrom(args.get("model"), args.get("device"));
  std::vector<bool> allowed;
  if (!args.get("from").empty())
    allowed = TokenFile::open(args.get("from")).occurringTokens(model->config().vocabSize);
  nlohmann::json j = toJson(inductionLosses(*model, args.getInt64("span"), args.getInt64("sequences"),
                                            static_cast<uint64_t>(args.getInt64("seed")),
                                            allowed.empty() ? nullptr : &allowed));
  j["model"] = args.get("model");
  if (!args.get("from").empty()) j["tokens_from"] = args.get("from");
  printJson(j);
  return 0;
}

}  // namespace

int cmdAnalyze(const Argv& argv) {
  const std::string kind = argv.empty() ? "" : argv[0];
  const Argv rest(argv.begin() + std::min<std::size_t>(1, argv.size()), argv.end());
  if (kind == "ioi") return analyzeIoi(rest);
  if (kind == "induction") return analyzeInduction(rest);
  if (kind == "--help" || kind == "-h" || kind.empty()) {
    printJson({{"usage", "normfree-cli analyze <kind> [options]"}, {"kinds", {"ioi", "induction"}}});
    return kind.empty() ? 2 : 0;
  }
  throw UsageError("unknown analysis '" + kind + "' (ioi, induction)");
}

}  // namespace nf::cli

// normfree-cli commands that run a model on text: eval, generate.
#include <torch/torch.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "eval/evaluate.h"
#include "eval/generate.h"
#include "model/hf_checkpoint.h"
#include "progress_bar.h"
#include "text/bpe_tokenizer.h"

namespace nf::cli {

int cmdEval(const Argv& argv) {
  Args args(
      "eval",
      "Evaluate a model on a token file, as the paper does: mean cross-entropy over non-overlapping chunks, "
      "median and 95% / 99.9% central ranges of per-token loss, mean output entropy, accuracy and expected "
      "calibration error (with its reliability bins). End-of-text targets are counted.");
  args.positional("model", "model folder")
      .positional("data", "token file (.bin, nanoGPT layout)")
      .option("context", "n", "chunk length (default: the model's n_positions)", "0")
      .option("batch", "n", "chunks per forward pass", "8")
      .option("max-tokens", "n", "evaluate only the first n tokens (0: all)", "0")
      .option("bins", "n", "confidence bins for the calibration error", "10")
      .option("filter-by", "file.bin",
              "Pile-filtered style: skip every chunk containing a token id that never occurs in this token "
              "file (e.g. the fine-tuning data)")
      .option("device", "cpu|cuda[:N]", "where to run", "cpu")
      .flag("bf16", "bf16 autocast (CUDA only)");
  if (!args.parse(argv)) return 0;
  EvalOptions options;
  options.context = args.getInt64("context");
  options.batchSize = args.getInt64("batch");
  options.maxTokens = args.getInt64("max-tokens");
  options.calibrationBins = args.getInt("bins");
  if (options.context < 0 || options.batchSize < 1 || options.maxTokens < 0 || options.calibrationBins < 1)
    throw UsageError("--context and --max-tokens must be ≥ 0, --batch and --bins ≥ 1");

  GPT2 model = loadModel(args.get("model"), parseDevice(args.get("device")));
  model->setCudaBf16Autocast(args.has("bf16"));
  const TokenFile data = TokenFile::open(args.get("data"));
  std::vector<bool> allowed;
  if (args.has("filter-by")) {
    allowed =
        TokenFile::open(args.get("filter-by")).occurringTokens(model->config().vocabSize, progressBar());
    options.allowedTokens = &allowed;
  }
  const auto start = std::chrono::steady_clock::now();
  const EvalResult result = evaluate(*model, data, options, progressBar());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::json j = toJson(result);
  j["model"] = args.get("model");
  if (args.has("filter-by")) j["filtered_by"] = args.get("filter-by");
  j["seconds"] = seconds;
  j["tokens_per_second"] = result.summary.tokens / seconds;
  printJson(j);
  return 0;
}

int cmdGenerate(const Argv& argv) {
  Args args(
      "generate",
      "Continue a prompt with a model. Temperature 0 is greedy; otherwise tokens are sampled (optionally "
      "from the top k) with a portable generator, so a seed gives the same text on every machine.");
  args.positional("model", "model folder")
      .option("prompt", "text", "the text to continue (\"<|endoftext|>\" is the end-of-text token)")
      .option("tokenizer", "folder", "folder with vocab.json and merges.txt (default: the model folder)", "")
      .option("max-new-tokens", "n", "tokens to generate at most", "50")
      .option("temperature", "t", "softmax temperature; 0 for greedy", "1.0")
      .option("top-k", "k", "sample from the k most likely tokens only (0: all)", "0")
      .option("seed", "n", "random seed for sampling", "0")
      .option("device", "cpu|cuda[:N]", "where to run", "cpu")
      .flag("no-stop", "keep going past <|endoftext|>");
  if (!args.parse(argv)) return 0;
  GenerationOptions options;
  options.maxNewTokens = args.getInt64("max-new-tokens");
  options.temperature = args.getDouble("temperature");
  options.topK = args.getInt64("top-k");
  options.seed = static_cast<uint64_t>(args.getInt64("seed"));
  options.stopAtEndOfText = !args.has("no-stop");
  if (options.maxNewTokens < 1 || options.temperature < 0 || options.topK < 0)
    throw UsageError("--max-new-tokens must be ≥ 1, --temperature and --top-k ≥ 0");

  const std::string tokenizerFolder =
      args.get("tokenizer").empty() ? args.get("model") : args.get("tokenizer");
  if (!std::filesystem::exists(tokenizerFolder + "/vocab.json"))
    throw UsageError("no vocab.json in " + tokenizerFolder +
                     "; pass --tokenizer with the model's tokenizer folder");
  const BpeTokenizer tokenizer = BpeTokenizer::load(tokenizerFolder);
  GPT2 model = loadModel(args.get("model"), parseDevice(args.get("device")));
  if (tokenizer.vocabSize() > model->config().vocabSize)
    throw UsageError("the tokenizer has " + std::to_string(tokenizer.vocabSize()) +
                     " tokens, the model only " + std::to_string(model->config().vocabSize));
  const std::vector<int32_t> prompt = tokenizer.encode(args.get("prompt"));
  if (prompt.empty()) throw UsageError("--prompt is empty");
  const std::vector<int32_t> continuation = generate(*model, prompt, options);
  // A sampled id may lie past the tokenizer's vocabulary when the model's is padded (GPT-2: 50257 of 50304).
  std::vector<int32_t> decodable;
  for (int32_t id : continuation)
    if (id < tokenizer.vocabSize()) decodable.push_back(id);
  printJson(nlohmann::json{{"prompt", args.get("prompt")},
                           {"prompt_tokens", prompt},
                           {"tokens", continuation},
                           {"continuation", tokenizer.decode(decodable)},
                           {"temperature", options.temperature},
                           {"top_k", options.topK},
                           {"seed", options.seed}});
  return 0;
}

}  // namespace nf::cli

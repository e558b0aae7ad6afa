// normfree-cli commands that run a model on text: eval, generate.
#include <torch/torch.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "eval/evaluate.h"
#include "eval/generate.h"
#include "model/hf_checkpoint.h"
#include "options.h"
#include "progress_bar.h"
#include "text/tokenizer.h"

namespace nf::cli {

void cmdEval(CLI::App& command) {
  command.description(
      "Evaluate a model on a token file, as the paper does: mean cross-entropy over non-overlapping chunks, "
      "median and 95% / 99.9% central ranges of per-token loss, mean output entropy, accuracy and expected "
      "calibration error (with its reliability bins). End-of-text targets are counted.");
  struct Options {
    std::string model, data, filterBy, device = "cpu";
    int64_t context = 0, batch = 8, maxTokens = 0;
    int bins = 10;
    bool bf16 = false;
  };
  auto o = std::make_shared<Options>();
  command.add_option("model", o->model, "model folder")->required();
  command.add_option("data", o->data, "token file (.bin, nanoGPT layout)")->required();
  command.add_option("--context", o->context, "chunk length (0: the model's n_positions)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  command.add_option("--batch", o->batch, "chunks per forward pass")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1))
      ->capture_default_str();
  command.add_option("--max-tokens", o->maxTokens, "evaluate only the first n tokens (0: all)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  command.add_option("--bins", o->bins, "confidence bins for the calibration error")
      ->type_name("n")
      ->transform(atLeast(1))
      ->capture_default_str();
  command
      .add_option(
          "--filter-by", o->filterBy,
          "Pile-filtered style: skip every chunk containing a token id that never occurs in this token "
          "file (e.g. the fine-tuning data)")
      ->type_name("file.bin");
  command.add_option("--device", o->device, "where to run")->type_name("cpu|cuda[:N]")->capture_default_str();
  command.add_flag("--bf16", o->bf16, "bf16 autocast (CUDA only)");
  onRun(command, [o] {
    EvalOptions options;
    options.context = o->context;
    options.batchSize = o->batch;
    options.maxTokens = o->maxTokens;
    options.calibrationBins = o->bins;

    CausalLM model = loadModel(o->model, parseDevice(o->device));
    model->setCudaBf16Autocast(o->bf16);
    const TokenFile data = TokenFile::open(o->data);
    std::vector<bool> allowed;
    if (!o->filterBy.empty()) {
      allowed = TokenFile::open(o->filterBy).occurringTokens(model->config().vocabSize, progressBar());
      options.allowedTokens = &allowed;
    }
    const auto start = std::chrono::steady_clock::now();
    const EvalResult result = evaluate(*model, data, options, progressBar());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    nlohmann::json j = toJson(result);
    j["model"] = o->model;
    if (!o->filterBy.empty()) j["filtered_by"] = o->filterBy;
    j["seconds"] = seconds;
    j["tokens_per_second"] = result.summary.tokens / seconds;
    printJson(j);
    return 0;
  });
}

void cmdGenerate(CLI::App& command) {
  command.description(
      "Continue a prompt with a model. Temperature 0 is greedy; otherwise tokens are sampled (optionally "
      "from the top k) with a portable generator, so a seed gives the same text on every machine.");
  struct Options {
    std::string model, prompt, tokenizer, device = "cpu";
    int64_t maxNewTokens = 50, topK = 0, seed = 0;
    double temperature = 1.0;
    bool noStop = false;
  };
  auto o = std::make_shared<Options>();
  command.add_option("model", o->model, "model folder")->required();
  command
      .add_option("--prompt", o->prompt,
                  "the text to continue; special tokens written in it (\"<|endoftext|>\", LLaMA's \"<s>\") "
                  "become their ids")
      ->type_name("text")
      ->required();
  command
      .add_option("--tokenizer", o->tokenizer,
                  std::string(kTokenizerFolderHelp) + "; default: the model folder")
      ->type_name("folder");
  command.add_option("--max-new-tokens", o->maxNewTokens, "tokens to generate at most")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1))
      ->capture_default_str();
  command.add_option("--temperature", o->temperature, "softmax temperature; 0 for greedy")
      ->type_name("t")
      ->transform(atLeast(0.0))
      ->default_str("1.0");
  command.add_option("--top-k", o->topK, "sample from the k most likely tokens only (0: all)")
      ->type_name("k")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  command.add_option("--seed", o->seed, "random seed for sampling")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  command.add_option("--device", o->device, "where to run")->type_name("cpu|cuda[:N]")->capture_default_str();
  command.add_flag("--no-stop", o->noStop, "keep going past <|endoftext|>");
  onRun(command, [o] {
    GenerationOptions options;
    options.maxNewTokens = o->maxNewTokens;
    options.temperature = o->temperature;
    options.topK = o->topK;
    options.seed = static_cast<uint64_t>(o->seed);
    options.stopAtEndOfText = !o->noStop;

    const std::string tokenizerFolder = o->tokenizer.empty() ? o->model : o->tokenizer;
    if (!hasTokenizer(tokenizerFolder))
      throw UsageError("no tokenizer files in " + tokenizerFolder +
                       "; pass --tokenizer with the model's tokenizer folder");
    const std::unique_ptr<Tokenizer> loaded = loadTokenizer(tokenizerFolder);
    const Tokenizer& tokenizer = *loaded;
    CausalLM model = loadModel(o->model, parseDevice(o->device));
    if (tokenizer.vocabSize() > model->config().vocabSize)
      throw UsageError("the tokenizer has " + std::to_string(tokenizer.vocabSize()) +
                       " tokens, the model only " + std::to_string(model->config().vocabSize));
    const std::vector<int32_t> prompt = tokenizer.encode(o->prompt);
    if (prompt.empty()) throw UsageError("--prompt is empty");
    const std::vector<int32_t> continuation = generate(*model, prompt, options);
    printJson(nlohmann::json{{"prompt", o->prompt},
                             {"prompt_tokens", prompt},
                             {"tokens", continuation},
                             {"continuation", tokenizer.decodeKnown(continuation)},
                             {"temperature", options.temperature},
                             {"top_k", options.topK},
                             {"seed", options.seed}});
    return 0;
  });
}

}  // namespace nf::cli

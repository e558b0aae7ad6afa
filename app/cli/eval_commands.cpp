// normfree-cli commands that run a model on text: eval, bench, generate.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "eval/benchmark.h"
#include "eval/evaluate.h"
#include "eval/generate.h"
#include "io/file_format.h"
#include "model/hf_checkpoint.h"
#include "options.h"
#include "progress_bar.h"
#include "run/run_directory.h"
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
  command.add_option("model", o->model, "model folder, or a run directory (its final/ model)")->required();
  command.add_option("data", o->data, "token file (.bin, nanoGPT layout)")->required();
  command.add_option("--context", o->context, "chunk length (0: the model's n_positions)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  command.add_option("--batch", o->batch, "chunks per forward pass")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1))
      ->capture_default_str();
  command
      .add_option("--max-tokens", o->maxTokens,
                  "evaluate only the first n tokens of the file, in whole chunks of the context (0: all); "
                  "with --filter-by, the chunks among them that the filter keeps")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  command.add_option("--bins", o->bins, "confidence bins for the calibration error")
      ->type_name("n")
      ->transform(inRange(1, 1000))
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

    CausalLM model = loadModel(run::modelFolder(o->model), parseDevice(o->device, o->bf16));
    model->setCudaBf16Autocast(o->bf16);
    const int64_t context = o->context > 0 ? o->context : model->config().nPositions;
    if (o->maxTokens > 0 && o->maxTokens < context)  // one chunk at least: a whole context would be evaluated
      throw UsageError("--max-tokens " + std::to_string(o->maxTokens) + " is less than one chunk of " +
                       std::to_string(context) + " tokens (--context)");
    const TokenFile data = TokenFile::open(o->data);
    // A budget past the file (the paper's 4.5 M tokens of a smaller split) had been cut to it unsaid.
    if (o->maxTokens > 0 && data.size() - 1 < o->maxTokens)
      std::cerr << "note: --max-tokens " << o->maxTokens << ": " << o->data << " holds only " << data.size()
                << " tokens; all of them are evaluated\n";
    const auto modelTokenizer = run::tokenizerIfAny(o->model);
    noteOtherTokenizer(data, model->config().eotTokenId, modelTokenizer.get());
    std::vector<bool> allowed;
    if (!o->filterBy.empty()) {
      const TokenFile filter = TokenFile::open(o->filterBy);
      noteOtherTokenizer(filter, model->config().eotTokenId, modelTokenizer.get());
      allowed = filter.occurringTokens(model->config().vocabSize, progressBar());
      options.allowedTokens = &allowed;
    }
    const auto start = std::chrono::steady_clock::now();
    const EvalResult result = evaluate(*model, data, options, progressBar());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    nlohmann::json j = toJson(result);
    j["model"] = o->model;
    if (!o->filterBy.empty()) j["filtered_by"] = o->filterBy;
    if (o->maxTokens > 0) j["max_tokens"] = o->maxTokens;
    j["seconds"] = seconds;
    j["tokens_per_second"] = result.summary.tokens / seconds;
    printJson(j);
    return 0;
  });
}

namespace {

// "hellaswag,piqa" → tasks; "all" → every task whose file `data` holds (a folder) — at least one. A file
// serves one task only.
std::vector<BenchmarkTask> benchmarkTasks(const std::string& list, const std::string& data) {
  std::vector<BenchmarkTask> tasks;
  if (list == "all") {
    tasks = benchmarkTasksIn(data);
    if (tasks.empty()) throw UsageError(data + " holds no benchmark file under its distributed name");
    return tasks;
  }
  std::stringstream names(list);
  for (std::string name; std::getline(names, name, ',');) {
    try {
      tasks.push_back(parseBenchmarkTask(name));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  if (tasks.empty()) throw UsageError("no task named: give one or more (hellaswag,piqa,…) or all");
  try {
    requireOneTaskPerFile(tasks, data);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--data ") + e.what());
  }
  return tasks;
}

// A model's name in the table, at most 32 characters: its folder's name ("…/ln-free" of "runs/a/ln-free"),
// with the run's name before a run's "final".
std::string tableName(const std::string& folder) {
  std::filesystem::path p = std::filesystem::path(folder).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  std::string name = p.filename().string();
  if (name == "final" && p.has_parent_path()) name = p.parent_path().filename().string() + "/final";
  return name.size() > 32 ? "…" + name.substr(name.size() - 31) : name;
}

std::string percent(double p) {
  if (std::isnan(p)) return "   n/a";  // a standard error over one item
  char text[16];
  std::snprintf(text, sizeof text, "%6.2f", 100 * p);
  return text;
}

}  // namespace

void cmdBench(CLI::App& command) {
  command.description(
      "Downstream benchmarks scored as lm-evaluation-harness scores them (zero-shot): HellaSwag, PIQA, "
      "WinoGrande, BoolQ, ARC-Easy, ARC-Challenge, LAMBADA, read from the files you have (nothing is "
      "downloaded). acc: the choice with the highest summed log-likelihood; acc_norm: per character of the "
      "choice; LAMBADA: the last word greedy, and perplexity. With --compare, the same items for each "
      "model and paired-bootstrap intervals of the differences. JSON on stdout (or --out), a table on "
      "stderr. docs/DOWNSTREAM.md says where the files come from.");
  struct Options {
    std::string tasks, model, compare, data, out, device = "cpu";
    int64_t limit = 0;
    bool bf16 = false;
  };
  auto o = std::make_shared<Options>();
  command
      .add_option(
          "tasks", o->tasks,
          "hellaswag, piqa, winogrande, boolq, arc_easy, arc_challenge, lambada (comma-separated), or "
          "all: every one whose file --data holds")
      ->required();
  command.add_option("model", o->model, "model folder, or a run directory (its final/ model)")->required();
  addingUp(command.add_option("--compare", o->compare, "more model folders, scored on the same items")
               ->type_name("folder,…"));
  command
      .add_option("--data", o->data,
                  "a task's file (hellaswag_val.jsonl, …) or a folder holding the task files under their "
                  "distributed names")
      ->type_name("path")
      ->required();
  command.add_option("--limit", o->limit, "score only the first n items of each task (0: all)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  command.add_option("--out", o->out, "write the JSON here (atomically) instead of stdout")
      ->type_name("file.json");
  command.add_option("--device", o->device, "where to run")->type_name("cpu|cuda[:N]")->capture_default_str();
  command.add_flag("--bf16", o->bf16, "bf16 autocast (CUDA only)");
  onRun(command, [o] {
    const std::vector<BenchmarkTask> tasks = benchmarkTasks(o->tasks, o->data);
    std::vector<std::string> models = {run::modelFolder(o->model)};
    for (const std::string& folder : splitList(o->compare)) models.push_back(run::modelFolder(folder));

    std::vector<BenchmarkData> data;
    for (BenchmarkTask task : tasks) data.push_back(readBenchmark(task, o->data, o->limit));
    // scores[model][task]
    std::vector<std::vector<BenchmarkScore>> scores;
    for (const auto& folder : models) {
      if (!hasTokenizer(folder)) throw UsageError("no tokenizer files in " + folder);
      const std::unique_ptr<Tokenizer> tokenizer = loadTokenizer(folder);
      CausalLM model = loadModel(folder, parseDevice(o->device, o->bf16));
      model->setCudaBf16Autocast(o->bf16);
      if (tokenizer->vocabSize() > model->config().vocabSize)
        throw UsageError(folder + ": the tokenizer has " + std::to_string(tokenizer->vocabSize()) +
                         " tokens, the model only " + std::to_string(model->config().vocabSize));
      scores.emplace_back();
      for (const auto& d : data)
        scores.back().push_back(scoreBenchmark(*model, *tokenizer, d, {}, progressBar()));
    }

    nlohmann::json out = formatHeader(kBenchmarkFormat);
    out["models"] = models;
    out["tasks"] = nlohmann::json::array();
    std::string table = "task             n   model                               acc    ±      acc_norm ±\n",
                notes;
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      nlohmann::json task = {{"task", benchmarkTaskName(tasks[t])}, {"file", data[t].file}};
      for (std::size_t m = 0; m < models.size(); ++m) {
        const BenchmarkScore& s = scores[m][t];
        nlohmann::json result = toJson(s, data[t], true);
        result["model"] = models[m];
        task["results"].push_back(result);
        char line[256];
        std::snprintf(
            line, sizeof line, "%-14s %5lld   %-32.32s %s %s %s %s%s\n", benchmarkTaskName(tasks[t]),
            static_cast<long long>(s.n), tableName(models[m]).c_str(), percent(s.acc).c_str(),
            percent(s.accStderr).c_str(), reportsAccNorm(tasks[t]) ? percent(s.accNorm).c_str() : "      ",
            reportsAccNorm(tasks[t]) ? percent(s.accNormStderr).c_str() : "",
            tasks[t] == BenchmarkTask::Lambada ? ("   perplexity " + std::to_string(s.perplexity)).c_str()
                                               : "");
        table += line;
        if (s.truncated > 0)  // the item's context lost its start, as lm-evaluation-harness cuts it
          notes += "note: " + std::string(benchmarkTaskName(tasks[t])) + ", " + tableName(models[m]) + ": " +
                   std::to_string(s.truncated) +
                   (tasks[t] == BenchmarkTask::Lambada ? " of " : " choices of the ") + std::to_string(s.n) +
                   " items are longer than the model's context; their first tokens were cut\n";
        if (m == 0) continue;
        nlohmann::json difference = {{"model", models[m]}, {"against", models[0]}};
        for (const bool norm : {false, true}) {
          if (norm && !reportsAccNorm(tasks[t])) continue;
          const PairedDifference d = pairedDifference(scores[0][t].correct(norm), s.correct(norm));
          difference[norm ? "acc_norm" : "acc"] = {
              {"difference", d.difference}, {"low", d.low}, {"high", d.high}};
        }
        task["differences"].push_back(difference);
      }
      out["tasks"].push_back(task);
    }
    std::fputs((table + notes).c_str(), stderr);
    printOrWrite(o->out, out);
    return 0;
  });
}

void cmdGenerate(CLI::App& command) {
  command.description(
      "Continue a prompt with a model. Temperature 0 is greedy; otherwise tokens are sampled (optionally "
      "from the top k, or the top p of the probability) with a portable generator, so a seed gives the same "
      "text on every machine.");
  struct Options {
    std::string model, prompt, tokenizer, device = "cpu";
    int64_t maxNewTokens = 50, topK = 0, seed = 0;
    double temperature = 1.0, topP = 1.0;
    bool noStop = false;
  };
  auto o = std::make_shared<Options>();
  command.add_option("model", o->model, "model folder, or a run directory (its final/ model)")->required();
  command
      .add_option("--prompt", o->prompt,
                  "the text to continue, encoded as Hugging Face's tokenizer does (LLaMA's <s> first, once, "
                  "where it adds one); special tokens written in it (\"<|endoftext|>\") become their ids")
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
      ->transform(inRange(0.0, 1e6))
      ->default_str("1.0");
  CLI::Option* topK =
      command.add_option("--top-k", o->topK, "sample from the k most likely tokens only (0: all)")
          ->type_name("k")
          ->transform(atLeast<int64_t>(0))
          ->capture_default_str();
  CLI::Option* topP = command
                          .add_option("--top-p", o->topP,
                                      "sample from the most likely tokens whose probabilities first sum to "
                                      "at least p (nucleus sampling, after --top-k; 1: all)")
                          ->type_name("p")
                          ->transform(inRange(0.0, 1.0, /*minExclusive=*/true))
                          ->default_str("1.0");
  CLI::Option* seed = command.add_option("--seed", o->seed, "random seed for sampling")
                          ->type_name("n")
                          ->transform(atLeast<int64_t>(0))
                          ->capture_default_str();
  command.add_option("--device", o->device, "where to run")->type_name("cpu|cuda[:N]")->capture_default_str();
  command.add_flag("--no-stop", o->noStop,
                   "keep going past <|endoftext|> (and every end-of-sequence id config.json lists)");
  onRun(command, [o, topK, topP, seed] {
    // Greedy decoding samples nothing: the three had been ignored, and still reported as used.
    if (o->temperature == 0 && (topK->count() > 0 || topP->count() > 0 || seed->count() > 0))
      throw UsageError(
          "--top-k, --top-p and --seed choose how tokens are sampled: --temperature 0 is greedy and "
          "samples none");
    GenerationOptions options;
    options.maxNewTokens = o->maxNewTokens;
    options.temperature = o->temperature;
    options.topK = o->topK;
    options.topP = o->topP;
    options.seed = static_cast<uint64_t>(o->seed);
    options.stopAtEndOfText = !o->noStop;
    const std::string folder = run::modelFolder(o->model);
    options.otherStopIds = endOfSequenceIds(folder + "/config.json");

    const std::string tokenizerFolder = o->tokenizer.empty() ? folder : tokenizerOption(o->tokenizer);
    if (!hasTokenizer(tokenizerFolder))
      throw UsageError("no tokenizer files in " + tokenizerFolder +
                       "; pass --tokenizer with the model's tokenizer folder");
    const std::unique_ptr<Tokenizer> loaded = loadTokenizer(tokenizerFolder);
    const Tokenizer& tokenizer = *loaded;
    CausalLM model = loadModel(folder, parseDevice(o->device));
    if (tokenizer.vocabSize() > model->config().vocabSize)
      throw UsageError("the tokenizer has " + std::to_string(tokenizer.vocabSize()) +
                       " tokens, the model only " + std::to_string(model->config().vocabSize));
    // As Hugging Face's tokenizer starts it (TinyLlama continues a prompt without <s> differently); a BOS
    // written by hand as well is not doubled.
    const bool addsBos = tokenizer.huggingFaceAddsBos();
    std::vector<int32_t> prompt;
    if (addsBos) prompt.push_back(tokenizer.bosId());
    tokenizer.encodeAppend(o->prompt, prompt);
    if (addsBos && prompt.size() > 1 && prompt[1] == prompt[0]) prompt.erase(prompt.begin());
    if (prompt.empty()) throw UsageError("--prompt is empty");
    const std::vector<int32_t> continuation = generate(*model, prompt, options);
    nlohmann::json j{{"prompt", o->prompt},
                     {"prompt_tokens", prompt},
                     {"tokens", continuation},
                     {"continuation", tokenizer.decodeKnown(continuation)},
                     {"temperature", options.temperature},
                     {"stop_at_end_of_text", options.stopAtEndOfText}};
    if (options.temperature > 0) {  // every setting that decides the text, so that the record reproduces it
      j["top_k"] = options.topK;
      j["top_p"] = options.topP;
      j["seed"] = options.seed;
    }
    // A model with more token ids than its tokenizer (another tokenizer's, or padded) can choose one the
    // tokenizer cannot spell: decodeKnown leaves it out, so the text alone would hide it.
    const auto unknown = std::find_if(continuation.begin(), continuation.end(),
                                      [&](int32_t id) { return id >= tokenizer.vocabSize(); });
    if (unknown != continuation.end()) {
      std::cerr << "note: the model chose token id " << *unknown << ", which the tokenizer in "
                << tokenizerFolder << " does not have (" << tokenizer.vocabSize() << " tokens; the model has "
                << model->config().vocabSize << "): is it the model's tokenizer?\n";
      j["unknown_tokens"] = std::count_if(continuation.begin(), continuation.end(),
                                          [&](int32_t id) { return id >= tokenizer.vocabSize(); });
    }
    const int64_t context = model->config().nPositions;
    if (static_cast<int64_t>(prompt.size()) > context) {  // the model reads its last `context` tokens only
      std::cerr << "note: the prompt's " << prompt.size() << " tokens are more than the model's " << context
                << " positions: it continues from the last " << context << "\n";
      j["prompt_tokens_seen"] = context;
    }
    printJson(j);
    return 0;
  });
}

}  // namespace nf::cli

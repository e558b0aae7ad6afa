// normfree-cli commands on model folders: info, init, logits, export.
#include <torch/torch.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "io/atomic_file.h"
#include "model/family.h"
#include "model/hf_checkpoint.h"
#include "model/model_folder.h"
#include "options.h"
#include "run/run_directory.h"
#include "train/export.h"

namespace nf::cli {
namespace {

// "1,2,3;4,5,6" → [[1,2,3],[4,5,6]]; sequences must have equal length.
torch::Tensor parseTokens(const std::string& text) {
  std::vector<std::vector<int64_t>> rows;
  std::stringstream seqs(text);
  std::string seq;
  // getline drops a last empty piece: "1,2," would read as 1,2 and "1;2;" as two sequences, unsaid.
  if (!text.empty() && text.back() == ';') throw UsageError("--tokens: a ';' with no sequence after it");
  while (std::getline(seqs, seq, ';')) {
    if (!seq.empty() && seq.back() == ',') throw UsageError("--tokens: a ',' with no token id after it");
    std::vector<int64_t> row;
    std::stringstream ids(seq);
    std::string id;
    while (std::getline(ids, id, ',')) {
      int64_t value = 0;
      auto [stop, error] = std::from_chars(id.data(), id.data() + id.size(), value);
      if (id.empty() || error != std::errc() || stop != id.data() + id.size())
        throw UsageError("--tokens: '" + id + "' is not an integer token id");
      row.push_back(value);
    }
    if (row.empty()) throw UsageError("--tokens: empty sequence");
    if (!rows.empty() && row.size() != rows[0].size())
      throw UsageError("--tokens: all sequences must have the same length");
    rows.push_back(row);
  }
  if (rows.empty()) throw UsageError("--tokens: no token ids");
  auto t =
      torch::empty({static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())}, torch::kLong);
  for (std::size_t b = 0; b < rows.size(); ++b)
    for (std::size_t i = 0; i < rows[b].size(); ++i) t[b][i] = rows[b][i];
  return t;
}

}  // namespace

void cmdInfo(CLI::App& command) {
  command.description(
      "Print a model folder's shape, parameter count, stored dtypes and the norm state of every site.");
  auto model = std::make_shared<std::string>();
  command
      .add_option("model", *model,
                  "model folder (config.json + model.safetensors, Hugging Face layout), or a run directory "
                  "(its final/ model)")
      ->required();
  onRun(command, [model] {
    std::cout << nf::summaryToJson(nf::inspectModelFolder(nf::run::modelFolder(*model))) << "\n";
    return 0;
  });
}

void cmdInit(CLI::App& command) {
  command.description(
      "Write a randomly initialised model of a family (Hugging Face initialisation) in its Hugging Face "
      "layout.");
  struct Options {
    std::string out, dtype = "F32", family = "gpt2";
    int layers = 4, heads = 4, dModel = 128, context = 128, vocab = 50257, eot = -1, seed = 0, shardMb = 0;
    int kvHeads = 0, mlpWidth = 0;
    bool untied = false, transformerPrefix = false, overwrite = false;
  };
  auto o = std::make_shared<Options>();
  command.add_option("--out", o->out, "folder to write config.json and the weights to")
      ->type_name("folder")
      ->required();
  std::vector<std::string> families;
  for (const nf::ModelFamily* f : nf::modelFamilies()) families.push_back(f->name);
  command
      .add_option("--family", o->family,
                  "model family, with its Hugging Face defaults (rotary, biases, norms)")
      ->type_name("name")
      ->check(CLI::IsMember(families))
      ->capture_default_str();
  command
      .add_option("--kv-heads", o->kvHeads,
                  "key/value heads for grouped-query attention (llama, qwen2; 0: --heads)")
      ->type_name("n")
      ->transform(atLeast(0))
      ->capture_default_str();
  command.add_option("--mlp-width", o->mlpWidth, "the MLP's hidden width (0: 4 × --d-model)")
      ->type_name("n")
      ->transform(atLeast(0))
      ->capture_default_str();
  command.add_option("--layers", o->layers, "number of blocks")
      ->type_name("n")
      ->transform(atLeast(1))
      ->capture_default_str();
  command.add_option("--heads", o->heads, "attention heads per block")
      ->type_name("n")
      ->transform(atLeast(1))
      ->capture_default_str();
  command.add_option("--d-model", o->dModel, "residual width (divisible by heads)")
      ->type_name("n")
      ->transform(atLeast(1))
      ->capture_default_str();
  command.add_option("--context", o->context, "positions")
      ->type_name("n")
      ->transform(atLeast(1))
      ->capture_default_str();
  command.add_option("--vocab", o->vocab, "vocabulary size")
      ->type_name("n")
      ->transform(atLeast(1))
      ->capture_default_str();
  command
      .add_option("--eot", o->eot, "end-of-text token id (-1: the last id, as in GPT-2 and our tokenizers)")
      ->type_name("id")
      ->transform(atLeast(-1))
      ->capture_default_str();
  command.add_option("--seed", o->seed, "random seed (same seed, same weights on every machine)")
      ->type_name("n")
      ->transform(atLeast(0))
      ->capture_default_str();
  command.add_option("--dtype", o->dtype, "stored dtype")
      ->type_name("F32|F16|BF16")
      ->check(CLI::IsMember({"F32", "F16", "BF16"}).description(""))
      ->capture_default_str();
  command.add_option("--shard-mb", o->shardMb, "split the weights into shards of at most n MB (0: one file)")
      ->type_name("n")
      ->transform(atLeast(0))
      ->capture_default_str();
  command.add_flag(
      "--untied", o->untied,
      "give the model its own unembedding instead of reusing the token embedding (gpt_neox always has one)");
  command.add_flag("--transformer-prefix", o->transformerPrefix,
                   "store names as transformer.h.0… (as GPT2LMHeadModel.save_pretrained does)");
  command.add_flag("--overwrite", o->overwrite, "replace a model already in --out");
  onRun(command, [o] {
    refuseToReplace(o->out, {"config.json", "model.safetensors", "model.safetensors.index.json"},
                    o->overwrite);
    nf::ModelShape c;
    c.family = o->family;
    nf::familyNamed(c.family).applyDefaults(c);
    c.nKvHead = o->kvHeads;
    c.mlpWidth = o->mlpWidth;
    c.nLayer = o->layers;
    c.nHead = o->heads;
    c.nEmbd = o->dModel;
    c.nPositions = o->context;
    c.vocabSize = o->vocab;
    c.eotTokenId = o->eot < 0 ? c.vocabSize - 1 : o->eot;
    if (o->untied) c.tiedUnembedding = false;  // the family's default otherwise (GPT-NeoX: untied)
    if (o->transformerPrefix && !*nf::familyNamed(c.family).basePrefix)
      throw UsageError("--transformer-prefix: " + c.family + "'s tensor names have no base prefix");
    try {
      c.validate("init");
      nf::makeModel(c, /*initialize=*/false);  // the family's own checks (which biases, which rotation)
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    } catch (const nf::FileError& e) {
      throw UsageError(e.problem());
    }
    nf::CausalLM model = nf::makeModel(c);
    model->initWeights(static_cast<uint64_t>(o->seed));
    nf::SaveOptions options;
    options.dtype = *nf::parseDType(o->dtype);  // one of the three, checked by --dtype's IsMember
    options.basePrefix = o->transformerPrefix;
    options.maxShardBytes = static_cast<uint64_t>(o->shardMb) * 1000 * 1000;
    nf::saveModel(*model, o->out, options);
    std::cout << nf::summaryToJson(nf::inspectModelFolder(o->out)) << "\n";
    return 0;
  });
}

void cmdLogits(CLI::App& command) {
  command.description("Run the model on token ids and print the logits, [batch, positions, vocab], as JSON.");
  struct Options {
    std::string model, tokens, out, device = "cpu";
    bool bf16 = false;
  };
  auto o = std::make_shared<Options>();
  command.add_option("model", o->model, "model folder, or a run directory (its final/ model)")->required();
  command
      .add_option("--tokens", o->tokens,
                  "token ids, comma-separated; several sequences of equal length separated by ';'")
      ->type_name("ids")
      ->required();
  command.add_option("--out", o->out, "write to this .json or .safetensors file instead of stdout")
      ->type_name("file");
  command.add_option("--device", o->device, "where to run")->type_name("cpu|cuda[:N]")->capture_default_str();
  command.add_flag("--bf16", o->bf16, "bf16 autocast (CUDA only)");
  onRun(command, [o] {
    // The format by the name's extension, in any case: another name would get JSON it does not announce.
    std::string extension = std::filesystem::path(o->out).extension().string();
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const bool safetensors = extension == ".safetensors";
    if (!o->out.empty() && !safetensors && extension != ".json")
      throw UsageError("--out " + o->out +
                       ": name a .json or .safetensors file (the format it is written in)");
    const torch::Tensor tokens = parseTokens(o->tokens);
    nf::CausalLM model = nf::loadModel(nf::run::modelFolder(o->model), parseDevice(o->device, o->bf16));
    model->setCudaBf16Autocast(o->bf16);
    torch::NoGradGuard noGrad;
    torch::Tensor logits = model->forward(tokens).to(torch::kCPU).contiguous();

    const std::string& out = o->out;
    if (safetensors) {
      torch::Tensor ids = tokens.contiguous();
      nf::writeSafetensors(out,
                           {{"logits", nf::DType::F32, logits.sizes().vec(), logits.data_ptr()},
                            {"tokens", nf::DType::I64, ids.sizes().vec(), ids.data_ptr()}},
                           {{"model", o->model}});
      printJson(nlohmann::json{{"written", out}, {"shape", logits.sizes().vec()}});
      return 0;
    }
    nlohmann::json j;
    j["model"] = o->model;
    j["shape"] = logits.sizes().vec();
    j["tokens"] = nlohmann::json::array();
    j["logits"] = nlohmann::json::array();
    auto ta = tokens.accessor<int64_t, 2>();
    auto la = logits.accessor<float, 3>();
    for (int64_t b = 0; b < logits.size(0); ++b) {
      nlohmann::json seqTokens = nlohmann::json::array(), seqLogits = nlohmann::json::array();
      for (int64_t t = 0; t < logits.size(1); ++t) {
        seqTokens.push_back(ta[b][t]);
        std::vector<float> row(la[b][t].data(), la[b][t].data() + logits.size(2));
        seqLogits.push_back(row);
      }
      j["tokens"].push_back(seqTokens);
      j["logits"].push_back(seqLogits);
    }
    if (out.empty()) {
      printJson(j);
    } else {
      nf::writeFileAtomic(out, j.dump() + "\n");
      printJson(nlohmann::json{{"written", out}, {"shape", logits.sizes().vec()}});
    }
    return 0;
  });
}

void cmdExport(CLI::App& command) {
  command.description(
      "Export an LN-free model (every site FakeLN or FakeRMSNorm) in two forms: folded (no normalization "
      "left in the blocks, our format) and the family's standard form (each norm kept with γ·10⁶/s and "
      "ε = 10¹², loadable by the family's Hugging Face class: GPT2LMHeadModel, GPTNeoXForCausalLM, "
      "LlamaForCausalLM, Qwen2ForCausalLM). Prints each form's largest logit difference from the LN-free "
      "model.");
  struct Options {
    std::string model, out, data, device = "cpu";
    bool overwrite = false;
  };
  auto o = std::make_shared<Options>();
  command.add_option("model", o->model, "a model folder, or a run directory (its final/ model)")->required();
  command.add_option("--out", o->out, "writes <out>/folded and <out>/standard")
      ->type_name("folder")
      ->required();
  command.add_flag("--overwrite", o->overwrite, "replace <out>/folded and <out>/standard if they exist");
  command
      .add_option("--data", o->data,
                  "tokens to compare logits on: the file's first 8 chunks of up to 128 tokens (default: 8 "
                  "random sequences)")
      ->type_name("file.bin");
  command.add_option("--device", o->device, "where to compute")
      ->type_name("cpu|cuda[:N]")
      ->capture_default_str();
  onRun(command, [o] {
    const std::string folder = run::modelFolder(o->model);
    refuseToReplace(o->out, {"folded", "standard"}, o->overwrite);
    const ExportedModel e = exportLayerNormFree(folder, o->out, o->data, parseDevice(o->device));
    printJson(
        {{"source", folder},
         {"folded", e.folded},
         {"standard", e.standard},
         {"max_abs_logit_difference_folded", e.foldedDifference},
         {"max_abs_logit_difference_standard", e.standardDifference},
         {"compared_on_tokens", e.comparedTokens},
         {"largest_ln_weight_standard", e.largestStandardNormWeight},
         {"float16_safe", e.largestStandardNormWeight < 65504},
         {"note", "the standard form's norm weights are scaled by 1e6/s: keep them in float32 or bfloat16"}});
    return 0;
  });
}

}  // namespace nf::cli

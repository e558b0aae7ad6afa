// normfree-cli commands on model folders: info, init, logits.
#include <torch/torch.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "args.h"
#include "commands.h"
#include "io/atomic_file.h"
#include "model/hf_checkpoint.h"
#include "model/model_folder.h"

namespace nf::cli {
namespace {

nf::DType parseSaveDType(const std::string& name) {
  auto d = nf::parseDType(name);
  if (!d || (*d != nf::DType::F32 && *d != nf::DType::F16 && *d != nf::DType::BF16))
    throw UsageError("--dtype must be F32, F16 or BF16, got '" + name + "'");
  return *d;
}

// "1,2,3;4,5,6" → [[1,2,3],[4,5,6]]; sequences must have equal length.
torch::Tensor parseTokens(const std::string& text) {
  std::vector<std::vector<int64_t>> rows;
  std::stringstream seqs(text);
  std::string seq;
  while (std::getline(seqs, seq, ';')) {
    std::vector<int64_t> row;
    std::stringstream ids(seq);
    std::string id;
    while (std::getline(ids, id, ',')) {
      auto value = nf::cli::parseNumber<int64_t>(id);
      if (!value) throw UsageError("--tokens: '" + id + "' is not an integer token id");
      row.push_back(*value);
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

int cmdInfo(const std::vector<std::string>& argv) {
  Args args("info",
            "Print a model folder's shape, parameter count, stored dtypes and the norm state of every site.");
  args.positional("model", "model folder (config.json + model.safetensors, Hugging Face GPT-2 layout)");
  if (!args.parse(argv)) return 0;
  std::cout << nf::summaryToJson(nf::inspectModelFolder(args.get("model"))) << "\n";
  return 0;
}

int cmdInit(const std::vector<std::string>& argv) {
  Args args("init",
            "Write a randomly initialised GPT-2 (Hugging Face initialisation) in the Hugging Face layout.");
  args.option("out", "folder", "folder to write config.json and the weights to")
      .option("layers", "n", "number of blocks", "4")
      .option("heads", "n", "attention heads per block", "4")
      .option("d-model", "n", "residual width (divisible by heads)", "128")
      .option("context", "n", "positions", "128")
      .option("vocab", "n", "vocabulary size", "50257")
      .option("eot", "id", "end-of-text token id (default: the last id, as in GPT-2 and our tokenizers)",
              "-1")
      .option("seed", "n", "random seed (same seed, same weights on every machine)", "0")
      .option("dtype", "F32|F16|BF16", "stored dtype", "F32")
      .option("shard-mb", "n", "split the weights into shards of at most n MB (0: one file)", "0")
      .flag("untied", "give the model its own unembedding (lm_head.weight) instead of reusing wte")
      .flag("transformer-prefix",
            "store names as transformer.h.0… (as GPT2LMHeadModel.save_pretrained does)");
  if (!args.parse(argv)) return 0;
  nf::GPT2Config c;
  c.nLayer = args.getInt("layers");
  c.nHead = args.getInt("heads");
  c.nEmbd = args.getInt("d-model");
  c.nPositions = args.getInt("context");
  c.vocabSize = args.getInt("vocab");
  c.eotTokenId = args.getInt("eot") < 0 ? c.vocabSize - 1 : args.getInt("eot");
  c.tiedUnembedding = !args.has("untied");
  const int seed = args.getInt("seed"), shardMb = args.getInt("shard-mb");
  if (seed < 0) throw UsageError("--seed must be non-negative");
  if (shardMb < 0) throw UsageError("--shard-mb must be non-negative");
  try {
    c.validate("init");
  } catch (const nf::FileError& e) {
    throw UsageError(std::string(e.what()).substr(6));
  }
  nf::GPT2 model(c);
  model->initWeights(static_cast<uint64_t>(seed));
  nf::SaveOptions options;
  options.dtype = parseSaveDType(args.get("dtype"));
  options.transformerPrefix = args.has("transformer-prefix");
  options.maxShardBytes = static_cast<uint64_t>(shardMb) * 1000 * 1000;
  nf::saveModel(*model, args.get("out"), options);
  std::cout << nf::summaryToJson(nf::inspectModelFolder(args.get("out"))) << "\n";
  return 0;
}

int cmdLogits(const std::vector<std::string>& argv) {
  Args args("logits", "Run the model on token ids and print the logits, [batch, positions, vocab], as JSON.");
  args.positional("model", "model folder")
      .option("tokens", "ids",
              "token ids, comma-separated; several sequences of equal length separated by ';'")
      .option("out", "file", "write to this .json or .safetensors file instead of stdout")
      .option("device", "cpu|cuda[:N]", "where to run", "cpu")
      .flag("bf16", "bf16 autocast (CUDA only)");
  if (!args.parse(argv)) return 0;
  const torch::Tensor tokens = parseTokens(args.get("tokens"));
  nf::GPT2 model = nf::loadModel(args.get("model"), parseDevice(args.get("device")));
  model->setCudaBf16Autocast(args.has("bf16"));
  torch::NoGradGuard noGrad;
  torch::Tensor logits = model->forward(tokens).to(torch::kCPU).contiguous();

  const std::string out = args.has("out") ? args.get("out") : "";
  if (out.size() > 12 && out.compare(out.size() - 12, 12, ".safetensors") == 0) {
    torch::Tensor ids = tokens.contiguous();
    nf::writeSafetensors(out,
                         {{"logits", nf::DType::F32, logits.sizes().vec(), logits.data_ptr()},
                          {"tokens", nf::DType::I64, ids.sizes().vec(), ids.data_ptr()}},
                         {{"model", args.get("model")}});
    printJson(nlohmann::json{{"written", out}, {"shape", logits.sizes().vec()}});
    return 0;
  }
  nlohmann::json j;
  j["model"] = args.get("model");
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
}

}  // namespace nf::cli

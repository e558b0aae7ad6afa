// Shared fixtures for the engine tests: temporary folders, small random models, the Python reference.
#pragma once
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "check.h"
#include "data/ioi.h"
#include "data/token_file.h"
#include "model/gpt2.h"
#include "model/hf_checkpoint.h"
#include "temp_dir.h"

namespace nf::test {

// The GPT-2 family's own modules, for tests of GPT-2's layout and arithmetic.
inline GPT2Impl& gpt2Of(CausalLMImpl& model) { return dynamic_cast<GPT2Impl&>(model); }
inline GPT2Impl& gpt2Of(const CausalLM& model) { return gpt2Of(*model.ptr()); }

inline ModelShape smallConfig() {
  ModelShape c;
  c.nLayer = 2;
  c.nHead = 4;
  c.nEmbd = 32;
  c.nPositions = 16;
  c.vocabSize = 101;
  c.eotTokenId = 100;
  return c;
}

// Small shapes of every family and variant the engine implements, for behaviour every family must have.
struct NamedShape {
  std::string label;
  ModelShape shape;
};
inline std::vector<NamedShape> familyShapes() {
  std::vector<NamedShape> out = {{"gpt2", smallConfig()}};
  ModelShape neox = smallConfig();
  neox.family = "gpt_neox";
  neox.mlpWidth = 48;
  neox.rotaryFraction = 0.25;  // 2 of a head's 8 dimensions, as Pythia rotates a quarter
  neox.parallelResidual = true;
  neox.tiedUnembedding = false;
  out.push_back({"gpt_neox (parallel residual, rotary 0.25, untied)", neox});
  neox.parallelResidual = false;
  neox.rotaryFraction = 1.0;
  neox.rotaryBase = 500;
  neox.tiedUnembedding = true;
  out.push_back({"gpt_neox (sequential residual, full rotary, tied)", neox});
  ModelShape llama = smallConfig();
  llama.family = "llama";
  llama.nKvHead = 2;
  llama.mlpWidth = 40;
  llama.rotaryFraction = 1.0;
  llama.layerNormEpsilon = 1e-6;
  llama.qkvBias = llama.attentionOutputBias = llama.mlpBias = false;
  llama.tiedUnembedding = false;
  out.push_back({"llama (grouped-query, untied, no biases)", llama});
  llama.nKvHead = 0;
  llama.qkvBias = llama.attentionOutputBias = llama.mlpBias = true;
  llama.tiedUnembedding = true;
  out.push_back({"llama (multi-head, biases, tied)", llama});
  ModelShape qwen2 = llama;
  qwen2.family = "qwen2";
  qwen2.nKvHead = 1;
  qwen2.rotaryBase = 1e6;
  qwen2.attentionOutputBias = qwen2.mlpBias = false;
  out.push_back({"qwen2 (one key/value head, q/k/v biases, tied)", qwen2});
  return out;
}

// A random model whose LN γ, β and biases are random too, so every parameter matters to the logits.
inline CausalLM randomModel(const ModelShape& config, uint64_t seed = 1) {
  CausalLM model = makeModel(config);
  model->initWeights(seed);
  torch::NoGradGuard noGrad;
  auto gen = at::detail::createCPUGenerator(seed + 1000);
  for (auto& p : model->named_parameters()) {
    if (p.value().dim() == 1) {
      auto noise = torch::empty(p.value().sizes()).normal_(0.0, 0.2, gen);
      p.value().add_(noise);
    }
  }
  return model;
}

inline torch::Tensor randomTokens(const ModelShape& c, int64_t batch, int64_t positions, uint64_t seed = 7) {
  auto gen = at::detail::createCPUGenerator(seed);
  return torch::randint(0, c.vocabSize, {batch, positions}, gen, torch::kLong);
}

inline std::string tokensArg(const torch::Tensor& tokens) {
  std::string s;
  for (int64_t b = 0; b < tokens.size(0); ++b) {
    if (b) s += ";";
    for (int64_t t = 0; t < tokens.size(1); ++t)
      s += (t ? "," : "") + std::to_string(tokens[b][t].item<int64_t>());
  }
  return s;
}

// Logits from the independent Python implementation (tests/reference/gpt2_reference.py) for a saved model.
inline torch::Tensor referenceLogits(const std::string& folder, const torch::Tensor& tokens, int vocab) {
  const std::string python = NF_REFERENCE_PYTHON;
  if (runCommand(python + " -c 'import torch, numpy' 2>/dev/null") != 0)
    throw Failure(python + " with torch and numpy is needed for the reference (run bootstrap.sh)");
  const std::string out = folder + "/reference_logits.f32";
  const std::string cmd = python + " " + NF_REFERENCE_DIR + "/gpt2_reference.py '" + folder + "' '" +
                          tokensArg(tokens) + "' '" + out + "'";
  if (runCommand(cmd) != 0) throw Failure("reference failed: " + cmd);
  std::ifstream in(out, std::ios::binary);
  auto logits = torch::empty({tokens.size(0), tokens.size(1), vocab});
  in.read(reinterpret_cast<char*>(logits.data_ptr<float>()), logits.numel() * sizeof(float));
  if (in.gcount() != static_cast<std::streamsize>(logits.numel() * sizeof(float)))
    throw Failure("short reference output");
  return logits;
}

// A token file (with its sidecar) holding ids, for a vocabulary of `vocab`.
inline void writeTokens(const std::string& path, const std::vector<int32_t>& ids, int64_t vocab) {
  TokenFileMeta meta;
  meta.dtype = tokenDTypeFor(vocab);
  meta.vocabSize = vocab;
  TokenFileWriter writer(path, meta);
  writer.append(ids.data(), ids.size());
  writer.finish();
}

inline double maxAbsDiff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}

// A hand-made IOI-style set for a random model: random prompts whose corrupted twins differ at one position;
// the "correct" and "wrong" tokens are those the difference moves most, so the metric's range is wide and
// float rounding is small against it.
inline IoiPromptSet promptSet(CausalLMImpl& model, int64_t length, int64_t differing) {
  const ModelShape& c = model.config();
  IoiPromptSet set;
  set.frame = "test";
  set.length = length;
  set.firstNamePosition = 1;
  set.secondNamePosition = 2;
  set.subjectPosition = differing;
  set.endPosition = length - 1;
  const torch::Tensor clean = randomTokens(c, 8, length, 11);
  torch::Tensor corrupted = clean.clone();
  corrupted.select(1, differing).add_(torch::arange(1, 9)).remainder_(c.vocabSize);
  torch::NoGradGuard noGrad;
  const torch::Tensor moved =
      model.forward(clean).select(1, length - 1) - model.forward(corrupted).select(1, length - 1);
  for (int64_t i = 0; i < 8; ++i) {
    IoiPrompt p;
    for (int64_t t = 0; t < length; ++t) {
      p.clean.push_back(static_cast<int32_t>(clean[i][t].item<int64_t>()));
      p.corrupted.push_back(static_cast<int32_t>(corrupted[i][t].item<int64_t>()));
    }
    p.correctId = static_cast<int32_t>(moved[i].argmax().item<int64_t>());
    p.wrongId = static_cast<int32_t>(moved[i].argmin().item<int64_t>());
    set.prompts.push_back(p);
  }
  return set;
}

}  // namespace nf::test

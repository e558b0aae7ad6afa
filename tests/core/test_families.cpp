// Every model family (GPT-2, GPT-NeoX/Pythia, LLaMA, Qwen2): logits against the independent Python
// references written from Hugging Face's config semantics, save/load round trips, the published sizes of
// real checkpoints, hook points, and named errors for configs the engine does not implement.
#include <nlohmann/json.hpp>

#include "fixtures.h"
#include "io/atomic_file.h"
#include "model/family.h"
#include "model/model_folder.h"

using namespace nf;
using namespace nf::test;

namespace {

// A random model whose matrices are 6× larger than at initialisation: attention patterns are then far from
// uniform, so a wrong rotation, head grouping or mask shows in the logits.
CausalLM sharpModel(const ModelShape& shape, uint64_t seed) {
  CausalLM model = randomModel(shape, seed);
  torch::NoGradGuard noGrad;
  for (auto& p : model->parameters())
    if (p.dim() == 2) p.mul_(6.0);
  return model;
}

// Sites in mixed states, as a removal run leaves them mid-way: LN_qk.0 fake while LN_v.0 is not (so the
// attention norm is split), LN_mlp.1 fake with the position-0 treatment, LN_f fake.
void mixNorms(CausalLMImpl& model) {
  const NormKind fake = fakeNormOf(familyNamed(model.config().family).norm);
  auto set = [&](SiteId site, double scale, bool pos0 = false) {
    SiteNorm& n = model.norms().at(site);
    n.kind = fake;
    n.scale = scale;
    n.pos0Treatment = pos0;
    n.scalePos0 = pos0 ? 3.0 : 1.0;
  };
  set({SiteKind::Qk, 0}, 1.7);
  set({SiteKind::Mlp, 1}, 0.9, true);
  set({SiteKind::Final, -1}, 2.5);
}

std::string publishedConfig(const std::string& name) {
  // The config.json fields of the published checkpoints (as their Hugging Face repositories hold them).
  if (name == "SmolLM2-135M")
    return R"({"architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
      "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "silu", "hidden_size": 576,
      "initializer_range": 0.041666666666666664, "intermediate_size": 1536, "is_llama_config": true,
      "max_position_embeddings": 8192, "model_type": "llama", "num_attention_heads": 9,
      "num_hidden_layers": 30, "num_key_value_heads": 3, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
      "rope_interleaved": false, "rope_scaling": null, "rope_theta": 100000, "tie_word_embeddings": true,
      "torch_dtype": "bfloat16", "transformers_version": "4.40.1", "use_cache": true, "vocab_size": 49152})";
  if (name == "TinyLlama-1.1B")
    return R"({"architectures": ["LlamaForCausalLM"], "attention_bias": false, "bos_token_id": 1,
      "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02,
      "intermediate_size": 5632, "max_position_embeddings": 2048, "model_type": "llama",
      "num_attention_heads": 32, "num_hidden_layers": 22, "num_key_value_heads": 4, "pretraining_tp": 1,
      "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 10000.0, "tie_word_embeddings": false,
      "torch_dtype": "bfloat16", "transformers_version": "4.35.0", "use_cache": true, "vocab_size": 32000})";
  if (name == "Qwen2.5-0.5B")
    return R"({"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
      "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02,
      "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 24,
      "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
      "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": true,
      "torch_dtype": "bfloat16", "transformers_version": "4.40.1", "use_cache": true, "use_mrope": false,
      "use_sliding_window": false, "vocab_size": 151936})";
  if (name == "GPT-2")
    return R"({"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
      "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256, "initializer_range": 0.02,
      "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024, "n_embd": 768, "n_head": 12,
      "n_inner": null, "n_layer": 12, "n_positions": 1024, "resid_pdrop": 0.1, "scale_attn_weights": true,
      "summary_activation": null, "summary_first_dropout": 0.1, "summary_proj_to_labels": true,
      "summary_type": "cls_index", "summary_use_proj": true, "use_cache": true, "vocab_size": 50257})";
  // Pythia-70M
  return R"({"architectures": ["GPTNeoXForCausalLM"], "bos_token_id": 0, "eos_token_id": 0,
    "hidden_act": "gelu", "hidden_size": 512, "initializer_range": 0.02, "intermediate_size": 2048,
    "layer_norm_eps": 1e-05, "max_position_embeddings": 2048, "model_type": "gpt_neox",
    "num_attention_heads": 8, "num_hidden_layers": 6, "rotary_emb_base": 10000, "rotary_pct": 0.25,
    "tie_word_embeddings": false, "torch_dtype": "float16", "transformers_version": "4.24.0",
    "use_cache": true, "use_parallel_residual": true, "vocab_size": 50304})";
}

// The config with one field set (a null, a wrong type, an unsupported value).
std::string variant(const char* key, const nlohmann::json& value, const nlohmann::json& base) {
  nlohmann::json j = base;
  j[key] = value;
  return j.dump();
}

}  // namespace

TEST_CASE(every_family_matches_its_independent_reference) {
  for (const auto& [label, shape] : familyShapes()) {
    for (const bool mixed : {false, true}) {
      CausalLM model = sharpModel(shape, 11);
      if (mixed) mixNorms(*model);
      TempDir dir;
      saveModel(*model, dir.path("m"));
      const auto tokens = randomTokens(shape, 2, 16);
      torch::NoGradGuard noGrad;
      const double diff =
          maxAbsDiff(model->forward(tokens), referenceLogits(dir.path("m"), tokens, shape.vocabSize));
      REQUIRE_MSG(diff <= 1e-5 * std::max(1.0, model->forward(tokens).abs().max().item<double>()),
                  label << (mixed ? ", mixed norms" : "") << ": max |Δ logit| " << diff);
    }
  }
}

TEST_CASE(save_and_load_round_trip_for_every_family) {
  for (const auto& [label, shape] : familyShapes()) {
    CausalLM model = randomModel(shape, 12);
    mixNorms(*model);
    TempDir dir;
    saveModel(*model, dir.path("f32"));
    CausalLM loaded = loadModel(dir.path("f32"));
    REQUIRE_MSG(loaded->config() == shape, label);
    REQUIRE_MSG(loaded->norms() == model->norms(), label);
    // The module's parameters are exactly the family's published layout, in its order.
    const std::vector<ParameterShape> layout = parameterShapes(shape);
    const auto params = loaded->named_parameters();
    REQUIRE_EQ(params.size(), layout.size());
    for (std::size_t i = 0; i < layout.size(); ++i) {
      REQUIRE_MSG(params[i].key() == layout[i].name,
                  label << ": " << params[i].key() << " vs " << layout[i].name);
      REQUIRE_MSG(params[i].value().sizes().vec() == layout[i].shape, label << ": " << layout[i].name);
    }
    const auto tokens = randomTokens(shape, 2, 10);
    torch::NoGradGuard noGrad;
    REQUIRE_MSG(torch::equal(model->forward(tokens), loaded->forward(tokens)), label);

    // Sharded BF16, as real checkpoints are published: the weights are the bf16-rounded ones.
    SaveOptions bf16;
    bf16.dtype = DType::BF16;
    bf16.maxShardBytes = 8000;
    saveModel(*model, dir.path("bf16"), bf16);
    REQUIRE_MSG(inspectModelFolder(dir.path("bf16")).weightFiles.size() > 1, label);
    CausalLM rounded = copyModel(*model);
    for (auto& p : rounded->parameters()) p.copy_(p.to(torch::kBFloat16).to(torch::kFloat32));
    REQUIRE_MSG(torch::equal(rounded->forward(tokens), loadModel(dir.path("bf16"))->forward(tokens)), label);
  }
}

TEST_CASE(published_checkpoints_read_with_their_published_parameter_counts) {
  struct Expected {
    std::string name, family;
    int64_t parameters;
    int kvHeads;
    bool tied;
  };
  // Counts as the checkpoints' own safetensors hold them.
  for (const Expected& e : {Expected{"SmolLM2-135M", "llama", 134515008, 3, true},
                            Expected{"TinyLlama-1.1B", "llama", 1100048384, 4, false},
                            Expected{"Qwen2.5-0.5B", "qwen2", 494032768, 2, true},
                            Expected{"Pythia-70M", "gpt_neox", 70426624, 8, false},
                            Expected{"GPT-2", "gpt2", 124439808, 12, true}}) {
    const ModelConfig config = parseConfigJson(publishedConfig(e.name), e.name + "/config.json");
    REQUIRE_EQ(config.shape.family, e.family);
    REQUIRE_MSG(config.shape.parameterCount() == e.parameters,
                e.name << ": " << config.shape.parameterCount());
    REQUIRE_EQ(config.shape.kvHeads(), e.kvHeads);
    REQUIRE_EQ(config.shape.tiedUnembedding, e.tied);
    const NormKind native =
        e.family == "llama" || e.family == "qwen2" ? NormKind::RMSNorm : NormKind::LayerNorm;
    REQUIRE(config.norms == NormState(config.shape.nLayer, native));
  }
  const ModelShape pythia = parseConfigJson(publishedConfig("Pythia-70M"), "config.json").shape;
  REQUIRE_EQ(pythia.rotaryDims(), 16);  // a quarter of each 64-dimensional head
  REQUIRE(pythia.parallelResidual);
  REQUIRE_EQ(pythia.eotTokenId, 0);
}

TEST_CASE(a_config_without_eos_token_id_takes_its_config_class_s_default) {
  // transformers' LlamaConfig and GPTNeoXConfig default eos_token_id to 2; Qwen2Config has no default.
  for (const auto& [name, expected] :
       {std::pair<std::string, int>{"TinyLlama-1.1B", 2}, {"Pythia-70M", 2}, {"Qwen2.5-0.5B", 151935}}) {
    nlohmann::json j = nlohmann::json::parse(publishedConfig(name));
    j["eos_token_id"] = 7;
    REQUIRE_EQ(parseConfigJson(j.dump(), name + "/config.json").shape.eotTokenId, 7);
    j.erase("eos_token_id");
    REQUIRE_MSG(parseConfigJson(j.dump(), name + "/config.json").shape.eotTokenId == expected, name);
  }
}

TEST_CASE(a_smollm2_sized_checkpoint_loads_from_sharded_bf16) {
  const ModelShape shape = parseConfigJson(publishedConfig("SmolLM2-135M"), "config.json").shape;
  TempDir dir;
  {
    CausalLM model = makeModel(shape);
    SaveOptions options;
    options.dtype = DType::BF16;
    options.maxShardBytes = 100'000'000;
    saveModel(*model, dir.path("smol"), options);
  }
  const ModelSummary summary = inspectModelFolder(dir.path("smol"));
  REQUIRE_EQ(summary.shape.family, std::string("llama"));
  REQUIRE_EQ(summary.parameterCount, int64_t{134515008});
  REQUIRE_EQ(summary.weightFiles.size(), std::size_t{3});
  CausalLM loaded = loadModel(dir.path("smol"));
  torch::NoGradGuard noGrad;
  const auto logits = loaded->forward(torch::tensor({{1, 2, 3, 4}}, torch::kLong));
  REQUIRE(logits.sizes().vec() == (std::vector<int64_t>{1, 4, 49152}));
  REQUIRE(torch::isfinite(logits).all().item<bool>());
}

TEST_CASE(configs_the_engine_does_not_implement_are_refused_by_name) {
  const auto smol = nlohmann::json::parse(publishedConfig("SmolLM2-135M"));
  REQUIRE_THROWS_WITH(
      parseConfigJson(variant("rope_scaling", {{"type", "linear"}, {"factor", 2.0}}, smol), "c.json"),
      "c.json", "rope_scaling");
  REQUIRE_THROWS_WITH(parseConfigJson(variant("hidden_act", "gelu", smol), "c.json"), "c.json", "hidden_act");
  REQUIRE_THROWS_WITH(parseConfigJson(variant("head_dim", 32, smol), "c.json"), "c.json", "head_dim");
  REQUIRE_THROWS_WITH(parseConfigJson(variant("rope_interleaved", true, smol), "c.json"), "rope_interleaved");
  REQUIRE_THROWS_WITH(parseConfigJson(variant("num_attention_heads", 1.5, smol), "c.json"),
                      "num_attention_heads", "integer");
  REQUIRE_THROWS_WITH(parseConfigJson(variant("num_attention_heads", true, smol), "c.json"),
                      "num_attention_heads");
  REQUIRE_THROWS_WITH(parseConfigJson(variant("num_key_value_heads", 4, smol), "c.json"),
                      "num_key_value_heads");
  REQUIRE_THROWS_WITH(parseConfigJson(variant("vocab_size", 4294967297.0, smol), "c.json"), "vocab_size");
  REQUIRE_THROWS_WITH(parseConfigJson(variant("model_type", "mistral", smol), "c.json"), "c.json",
                      "'mistral'", "gpt2, gpt_neox, llama, qwen2");
  nlohmann::json untyped = smol;
  untyped.erase("model_type");
  REQUIRE_THROWS_WITH(parseConfigJson(untyped.dump(), "c.json"), "c.json", "a config without model_type");
  nlohmann::json missing = smol;
  missing.erase("intermediate_size");
  REQUIRE_THROWS_WITH(parseConfigJson(missing.dump(), "c.json"), "missing required field intermediate_size");
  const auto qwen = nlohmann::json::parse(publishedConfig("Qwen2.5-0.5B"));
  REQUIRE_THROWS_WITH(parseConfigJson(variant("use_sliding_window", true, qwen), "q.json"), "q.json",
                      "use_sliding_window");
  const auto pythia = nlohmann::json::parse(publishedConfig("Pythia-70M"));
  REQUIRE_THROWS_WITH(parseConfigJson(variant("hidden_act", "relu", pythia), "p.json"), "p.json",
                      "hidden_act", "relu");
  REQUIRE_THROWS_WITH(parseConfigJson(variant("rotary_pct", 1.5, pythia), "p.json"), "p.json", "rotary");
  // A model_type that is not a string had escaped as a bare JSON type error, naming no file.
  REQUIRE_THROWS_WITH(parseConfigJson(variant("model_type", 5, pythia), "p.json"), "p.json", "model_type");
  // Transformers keeps a null flag as None and tests it as false: GPT-NeoX's sequential residual and no
  // attention biases, where the defaults (true) had been taken.
  const ModelShape sequential =
      parseConfigJson(variant("use_parallel_residual", nullptr, pythia), "p.json").shape;
  REQUIRE(!sequential.parallelResidual);
  const ModelShape unbiased = parseConfigJson(variant("attention_bias", nullptr, pythia), "p.json").shape;
  REQUIRE(!unbiased.qkvBias && !unbiased.attentionOutputBias);
  REQUIRE(parseConfigJson(pythia.dump(), "p.json").shape.parallelResidual);
}

// A norm's epsilon of null is None to transformers, whose model then fails at its first forward: refused
// by name, where the family's default had stood in for a value the file lost. The counts whose None the
// config class replaces by its default (GPT-2's n_inner, LLaMA's num_key_value_heads) still read so.
TEST_CASE(a_null_epsilon_is_refused_and_a_null_count_reads_as_its_config_class_s_default) {
  const auto smol = nlohmann::json::parse(publishedConfig("SmolLM2-135M"));
  const auto pythia = nlohmann::json::parse(publishedConfig("Pythia-70M"));
  const auto gpt2 = nlohmann::json::parse(publishedConfig("GPT-2"));
  REQUIRE_THROWS_WITH(parseConfigJson(variant("rms_norm_eps", nullptr, smol), "c.json"), "c.json",
                      "rms_norm_eps", "null");
  REQUIRE_THROWS_WITH(parseConfigJson(variant("layer_norm_eps", nullptr, pythia), "p.json"), "p.json",
                      "layer_norm_eps", "null");
  REQUIRE_THROWS_WITH(parseConfigJson(variant("layer_norm_epsilon", nullptr, gpt2), "g.json"), "g.json",
                      "layer_norm_epsilon", "null");
  const ModelShape ungrouped = parseConfigJson(variant("num_key_value_heads", nullptr, smol), "c.json").shape;
  REQUIRE_EQ(ungrouped.kvHeads(), ungrouped.nHead);  // LlamaConfig: None means one key head per query head
  REQUIRE_EQ(parseConfigJson(variant("n_inner", nullptr, gpt2), "g.json").shape.mlpHidden(), 4 * 768);
}

// transformers 5 moves rope_theta (and GPT-NeoX's partial_rotary_factor) into rope_parameters: read there,
// the same shape as the older spelling; a θ read wrongly would change every logit without a word.
TEST_CASE(rotary_settings_are_read_as_transformers_5_writes_them_and_contradictions_refused) {
  auto edited = [](const char* model, auto&& edit) {
    nlohmann::json j = nlohmann::json::parse(publishedConfig(model));
    edit(j);
    return j.dump();
  };
  const ModelShape smol = parseConfigJson(publishedConfig("SmolLM2-135M"), "c.json").shape;
  const std::string smol5 = edited("SmolLM2-135M", [](nlohmann::json& j) {
    j.erase("rope_theta"), j.erase("rope_scaling");
    j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 100000.0}};
  });
  const ModelShape read5 = parseConfigJson(smol5, "c.json").shape;
  REQUIRE_EQ(read5.rotaryBase, 100000.0);
  REQUIRE(read5 == smol);
  const ModelShape pythia = parseConfigJson(publishedConfig("Pythia-70M"), "p.json").shape;
  const std::string pythia5 = edited("Pythia-70M", [](nlohmann::json& j) {
    j.erase("rotary_emb_base"), j.erase("rotary_pct");
    j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 10000}, {"partial_rotary_factor", 0.25}};
  });
  REQUIRE(parseConfigJson(pythia5, "p.json").shape == pythia);

  REQUIRE_THROWS_WITH(
      parseConfigJson(
          edited(
              "SmolLM2-135M",
              [](nlohmann::json& j) {
                j["rope_parameters"] = {{"rope_type", "llama3"}, {"rope_theta", 500000.0}, {"factor", 8.0}};
              }),
          "c.json"),
      "c.json", "rope_parameters.rope_type", "llama3");
  REQUIRE_THROWS_WITH(parseConfigJson(edited("SmolLM2-135M",
                                             [](nlohmann::json& j) {
                                               j["rope_parameters"] = {{"rope_theta", 500000.0}};
                                             }),
                                      "c.json"),
                      "c.json", "rope_theta = 100000", "rope_parameters.rope_theta = 500000", "disagree");
  REQUIRE_THROWS_WITH(parseConfigJson(edited("SmolLM2-135M",
                                             [](nlohmann::json& j) {
                                               j["rope_parameters"] = {{"factor", 2}};
                                             }),
                                      "c.json"),
                      "rope_parameters.factor");
  // transformers 4's GPTNeoXConfig takes rotary_emb_base and rotary_pct (or their defaults) and ignores a
  // top-level rope_theta or partial_rotary_factor: one that differs is refused, with or without the other.
  REQUIRE_THROWS_WITH(
      parseConfigJson(edited("Pythia-70M", [](nlohmann::json& j) { j["rope_theta"] = 20000; }), "p.json"),
      "p.json", "rope_theta = 20000", "takes rotary_emb_base (here 10000", "ignores rope_theta");
  REQUIRE_THROWS_WITH(parseConfigJson(edited("Pythia-70M",
                                             [](nlohmann::json& j) {
                                               j.erase("rotary_pct");
                                               j["partial_rotary_factor"] = 0.5;
                                             }),
                                      "p.json"),
                      "p.json", "partial_rotary_factor = 0.5", "takes rotary_pct (here 0.25)");
  REQUIRE_EQ(
      parseConfigJson(edited("Pythia-70M", [](nlohmann::json& j) { j["rope_theta"] = 10000; }), "p.json")
          .shape.rotaryBase,
      10000.0);  // as transformers 4 saves it: both, equal
  // 64-dimensional heads × 0.3 = 19 rotary dimensions: rotate-half cannot split them.
  REQUIRE_THROWS_WITH(
      parseConfigJson(edited("Pythia-70M", [](nlohmann::json& j) { j["rotary_pct"] = 0.3; }), "p.json"),
      "p.json", "19 rotary dimensions", "even");
}

TEST_CASE(buffers_older_checkpoints_store_are_ignored) {
  for (const auto& [label, shape] : familyShapes()) {
    if (shape.family == "gpt2") continue;  // GPT-2's mask buffers: test_model
    CausalLM model = randomModel(shape, 13);
    TempDir dir;
    saveModel(*model, dir.path("m"));
    // Rewrite the weights with the buffers Transformers 4.2x saved next to them.
    std::vector<torch::Tensor> keep;
    std::vector<TensorBlob> blobs;
    for (auto& p : model->named_parameters()) {
      keep.push_back(p.value().contiguous());
      blobs.push_back({p.key(), DType::F32, keep.back().sizes().vec(), keep.back().data_ptr()});
    }
    const torch::Tensor inverseFrequency = torch::ones({4}), mask = torch::ones({16, 16});
    for (int l = 0; l < shape.nLayer; ++l) {
      const std::string layer =
          (shape.family == "gpt_neox" ? "gpt_neox.layers." : "model.layers.") + std::to_string(l);
      const std::string attention = shape.family == "gpt_neox" ? ".attention" : ".self_attn";
      blobs.push_back(
          {layer + attention + ".rotary_emb.inv_freq", DType::F32, {4}, inverseFrequency.data_ptr()});
      if (shape.family == "gpt_neox")
        blobs.push_back({layer + ".attention.bias", DType::F32, {16, 16}, mask.data_ptr()});
    }
    writeSafetensors(dir.path("m/model.safetensors"), blobs, {{"format", "pt"}});
    const auto tokens = randomTokens(shape, 1, 8);
    torch::NoGradGuard noGrad;
    REQUIRE_MSG(torch::equal(loadModel(dir.path("m"))->forward(tokens), model->forward(tokens)), label);
  }
}

// A tied checkpoint may store lm_head.weight as a copy of the embedding (Hugging Face ignores it); a head
// that differs means the config's tie_word_embeddings is wrong for these weights, and is refused by name.
TEST_CASE(a_tied_model_s_stored_head_must_copy_its_embedding) {
  ModelShape tied;
  for (const auto& [label, shape] : familyShapes())
    if (shape.family == "llama" && shape.tiedUnembedding) tied = shape;
  REQUIRE(tied.family == "llama");
  CausalLM model = randomModel(tied, 21);
  TempDir dir;
  saveModel(*model, dir.path("m"));
  auto rewrite = [&](const torch::Tensor& head) {
    std::vector<torch::Tensor> keep;
    std::vector<TensorBlob> blobs;
    for (auto& p : model->named_parameters()) {
      keep.push_back(p.value().contiguous());
      blobs.push_back({p.key(), DType::F32, keep.back().sizes().vec(), keep.back().data_ptr()});
    }
    keep.push_back(head.contiguous());
    blobs.push_back({"lm_head.weight", DType::F32, keep.back().sizes().vec(), keep.back().data_ptr()});
    writeSafetensors(dir.path("m/model.safetensors"), blobs, {{"format", "pt"}});
  };
  const torch::Tensor embedding = model->tokenEmbedding().detach().clone();
  rewrite(embedding);
  const auto tokens = randomTokens(tied, 1, 8);
  torch::NoGradGuard noGrad;
  REQUIRE(torch::equal(loadModel(dir.path("m"))->forward(tokens), model->forward(tokens)));
  rewrite(embedding + 0.5);
  REQUIRE_THROWS_WITH(loadModel(dir.path("m")), "model.safetensors",
                      "'lm_head.weight' differs from the embedding", "tie_word_embeddings");
  // A head in another dtype cannot be that copy (it was dropped unchecked).
  const torch::Tensor half = embedding.to(torch::kFloat16).contiguous();
  std::vector<torch::Tensor> keep;
  std::vector<TensorBlob> blobs;
  for (auto& p : model->named_parameters()) {
    keep.push_back(p.value().contiguous());
    blobs.push_back({p.key(), DType::F32, keep.back().sizes().vec(), keep.back().data_ptr()});
  }
  blobs.push_back({"lm_head.weight", DType::F16, half.sizes().vec(), half.data_ptr()});
  writeSafetensors(dir.path("m/model.safetensors"), blobs, {{"format", "pt"}});
  REQUIRE_THROWS_WITH(loadModel(dir.path("m")), "'lm_head.weight' differs from the embedding");
}

// The embedding the stored head is compared with is the family's, not any tensor of its shape: GPT-2's wpe
// has it too when n_positions equals the vocabulary.
TEST_CASE(a_tied_head_is_compared_with_the_token_embedding_not_a_tensor_of_its_shape) {
  ModelShape c = smallConfig();
  c.nPositions = c.vocabSize;
  CausalLM model = randomModel(c, 22);
  TempDir dir;
  std::vector<torch::Tensor> keep;
  std::vector<TensorBlob> blobs;
  for (auto& p : model->named_parameters()) {
    keep.push_back(p.value().contiguous());
    blobs.push_back({p.key(), DType::F32, keep.back().sizes().vec(), keep.back().data_ptr()});
  }
  keep.push_back(model->tokenEmbedding().detach().contiguous());
  blobs.push_back({"lm_head.weight", DType::F32, keep.back().sizes().vec(), keep.back().data_ptr()});
  saveModel(*model, dir.path("m"));
  writeSafetensors(dir.path("m/model.safetensors"), blobs, {{"format", "pt"}});
  const auto tokens = randomTokens(c, 1, 8);
  torch::NoGradGuard noGrad;
  REQUIRE(torch::equal(loadModel(dir.path("m"))->forward(tokens), model->forward(tokens)));
}

TEST_CASE(every_family_visits_its_hook_points_consistently) {
  for (const auto& [label, shape] : familyShapes()) {
    CausalLM model = sharpModel(shape, 14);
    mixNorms(*model);
    const auto tokens = randomTokens(shape, 2, 9);
    torch::NoGradGuard noGrad;
    HookSet hooks;
    hooks.cacheAll(shape.nLayer);
    const torch::Tensor logits = model->forward(tokens, &hooks);
    // Hooks observe without changing anything.
    REQUIRE_MSG(maxAbsDiff(logits, model->forward(tokens)) < 1e-5, label);
    const bool learnedPositions = shape.rotaryFraction == 0;
    REQUIRE_EQ(hooks.activations().count({HookKind::EmbedPos}) == 1, learnedPositions);
    for (int l = 0; l < shape.nLayer; ++l) {
      const auto& pattern = hooks.at(HookPoint::pattern(l));
      REQUIRE_MSG((pattern.sum(-1) - 1).abs().max().item<double>() < 1e-5, label);
      // Each head's write plus b_O is the attention's write; the MLP's neurons write through mlpOutputWeight.
      const torch::Tensor fromHeads = hooks.at(HookPoint::headOut(l)).sum(2) + model->attentionOutputBias(l);
      REQUIRE_MSG(maxAbsDiff(fromHeads, hooks.at(HookPoint::attnOut(l))) < 1e-5, label);
      const torch::Tensor post = hooks.at(HookPoint::mlpPost(l));
      REQUIRE_EQ(post.size(-1), static_cast<int64_t>(shape.mlpHidden()));
      const torch::Tensor written =
          hooks.at(HookPoint::mlpOut(l)) - torch::matmul(post, model->mlpOutputWeight(l));
      REQUIRE_MSG((written - written.select(1, 0).unsqueeze(1)).abs().max().item<double>() < 1e-5,
                  label << ": mlp.out − mlp.post·W_out is not a constant bias");
      REQUIRE_MSG(maxAbsDiff(hooks.at(HookPoint::residMid(l)),
                             hooks.at(HookPoint::residPre(l)) + hooks.at(HookPoint::attnOut(l))) < 1e-5,
                  label);
    }
  }
}

TEST_CASE(each_head_reads_its_own_attention_input_in_every_family) {
  for (const auto& [label, shape] : familyShapes()) {
    CausalLM model = sharpModel(shape, 15);
    mixNorms(*model);  // block 0's LN_qk and LN_v differ, block 1's are shared
    const auto tokens = randomTokens(shape, 2, 9), other = randomTokens(shape, 2, 9, 8);
    const int64_t H = shape.nHead, Hkv = shape.kvHeads(), group = H / Hkv;
    torch::NoGradGuard noGrad;
    HookSet plain, otherRun;
    plain.cacheAll(shape.nLayer);
    otherRun.cacheAll(shape.nLayer);
    const torch::Tensor logits = model->forward(tokens, &plain);
    model->forward(other, &otherRun);
    for (int l = 0; l < shape.nLayer; ++l) {
      const torch::Tensor otherInput = otherRun.at(HookPoint::residPre(l));
      auto copiesOf = [&](const torch::Tensor& x, int64_t n) { return x.unsqueeze(2).expand({2, 9, n, -1}); };
      // Split but untouched: the same model, and each copy is resid_pre.
      HookSet split;
      for (const HookPoint& p : {HookPoint::qInput(l), HookPoint::kInput(l), HookPoint::vInput(l)})
        split.cache(p);
      split.cache(HookPoint::headOut(l));
      REQUIRE_MSG(maxAbsDiff(model->forward(tokens, &split), logits) < 1e-5, label << ", block " << l);
      REQUIRE_EQ(split.at(HookPoint::kInput(l)).sizes(), torch::IntArrayRef({2, 9, Hkv, shape.nEmbd}));
      REQUIRE(maxAbsDiff(split.at(HookPoint::qInput(l)), copiesOf(plain.at(HookPoint::residPre(l)), H)) <
              1e-5);
      // Every copy replaced by the other sequences' residual: the block's heads are the other run's.
      HookSet all;
      all.patch(HookPoint::qInput(l), copiesOf(otherInput, H).contiguous());
      all.patch(HookPoint::kInput(l), copiesOf(otherInput, Hkv).contiguous());
      all.patch(HookPoint::vInput(l), copiesOf(otherInput, Hkv).contiguous());
      all.cache(HookPoint::headOut(l));
      model->forward(tokens, &all);
      REQUIRE_MSG(maxAbsDiff(all.at(HookPoint::headOut(l)), otherRun.at(HookPoint::headOut(l))) < 1e-5,
                  label);
      // One copy replaced: only the heads that read it change (a key/value head serves its group).
      for (const HookPoint& point : {HookPoint::qInput(l), HookPoint::kInput(l), HookPoint::vInput(l)}) {
        const bool query = point.kind == HookKind::QInput;
        torch::Tensor copies = copiesOf(plain.at(HookPoint::residPre(l)), query ? H : Hkv).clone();
        copies.select(2, 0).copy_(otherInput);
        HookSet one;
        one.patch(point, copies);
        one.cache(HookPoint::headOut(l));
        model->forward(tokens, &one);
        const torch::Tensor change =
            (one.at(HookPoint::headOut(l)) - plain.at(HookPoint::headOut(l))).abs().amax({0, 1, 3});
        for (int64_t h = 0; h < H; ++h) {
          const bool reads = query ? h == 0 : h < group;
          const double c = change[h].item<double>();
          REQUIRE_MSG(reads ? c > 1e-4 : c < 1e-6,
                      label << ", " << point.name() << ", head " << h << ": " << c);
        }
      }
    }
  }
}

TEST_CASE(an_edit_of_the_mlp_input_changes_the_mlp_only_in_every_family) {
  for (const auto& [label, shape] : familyShapes()) {
    CausalLM model = sharpModel(shape, 16);
    const auto tokens = randomTokens(shape, 2, 9);
    torch::NoGradGuard noGrad;
    HookSet plain, edited;
    plain.cacheAll(shape.nLayer);
    edited.cacheAll(shape.nLayer);
    edited.zeroAblate(HookPoint::mlpInput(0));
    model->forward(tokens, &plain);
    model->forward(tokens, &edited);
    REQUIRE(maxAbsDiff(edited.at(HookPoint::residMid(0)), plain.at(HookPoint::residMid(0))) < 1e-6);
    REQUIRE_MSG(maxAbsDiff(edited.at(HookPoint::mlpOut(0)), plain.at(HookPoint::mlpOut(0))) > 1e-3, label);
    REQUIRE(maxAbsDiff(edited.at(HookPoint::residPost(0)),
                       edited.at(HookPoint::residMid(0)) + edited.at(HookPoint::mlpOut(0))) < 1e-5);
    // What it read: resid_mid, or resid_pre with a parallel residual.
    const HookPoint read = shape.parallelResidual ? HookPoint::residPre(0) : HookPoint::residMid(0);
    REQUIRE_MSG(maxAbsDiff(plain.at(HookPoint::mlpInput(0)), plain.at(read)) < 1e-6, label);
  }
}

TEST_MAIN()

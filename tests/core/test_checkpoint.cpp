// Hugging Face checkpoint loading and saving: round trips, layout variants, and malformed folders.
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "fixtures.h"
#include "io/atomic_file.h"
#include "io/file_format.h"
#include "model/model_folder.h"

using namespace nf;
using namespace nf::test;
namespace fs = std::filesystem;

namespace {

bool sameParameters(CausalLMImpl& a, CausalLMImpl& b, double tolerance = 0) {
  auto pa = a.named_parameters(), pb = b.named_parameters();
  if (pa.size() != pb.size()) return false;
  for (std::size_t i = 0; i < pa.size(); ++i) {
    if (pa[i].key() != pb[i].key()) return false;
    if (tolerance == 0 ? !torch::equal(pa[i].value(), pb[i].value())
                       : maxAbsDiff(pa[i].value(), pb[i].value()) > tolerance)
      return false;
  }
  return true;
}

// Writes a model folder by hand in F32, naming tensors as `rename` says (an empty name leaves one out).
void writeHandmade(CausalLMImpl& model, const std::string& folder,
                   const std::function<std::string(const std::string&)>& rename,
                   std::vector<TensorBlob> extra = {}) {
  fs::create_directories(folder);
  std::vector<torch::Tensor> keep;
  std::vector<TensorBlob> blobs;
  for (auto& p : model.named_parameters()) {
    if (rename(p.key()).empty()) continue;  // left out
    keep.push_back(p.value().detach().contiguous());
    blobs.push_back({rename(p.key()), DType::F32, keep.back().sizes().vec(), keep.back().data_ptr()});
  }
  blobs.insert(blobs.end(), extra.begin(), extra.end());
  writeSafetensors(folder + "/model.safetensors", blobs, {{"format", "pt"}});
  writeFileAtomic(folder + "/config.json", configToJson({model.config(), model.norms()}));
}

}  // namespace

TEST_CASE(save_then_load_gives_identical_tensors_and_norm_state) {
  TempDir dir;
  auto model = randomModel(smallConfig());
  model->norms().at({SiteKind::V, 1}) = {NormKind::FakeLN, 1.25, 4.5, true, true};
  model->norms().at({SiteKind::Final, -1}).kind = NormKind::RMSNorm;
  saveModel(*model, dir.path());
  auto loaded = loadModel(dir.path());
  REQUIRE(sameParameters(*model, *loaded));
  REQUIRE(loaded->norms() == model->norms());
  REQUIRE(loaded->config() == model->config());
}

TEST_CASE(untied_unembedding_round_trips) {
  TempDir dir;
  auto c = smallConfig();
  c.tiedUnembedding = false;
  auto model = randomModel(c);
  saveModel(*model, dir.path());
  auto loaded = loadModel(dir.path());
  REQUIRE(!loaded->config().tiedUnembedding);
  REQUIRE(sameParameters(*model, *loaded));
  REQUIRE(!torch::equal(loaded->unembedding(), gpt2Of(loaded).wte->weight));
}

TEST_CASE(half_precision_saves_load_as_rounded_float32) {
  auto model = randomModel(smallConfig());
  for (auto [dtype, torchType, name] : {std::tuple{DType::F16, torch::kFloat16, "float16"},
                                        std::tuple{DType::BF16, torch::kBFloat16, "bfloat16"}}) {
    TempDir dir;
    SaveOptions options;
    options.dtype = dtype;
    saveModel(*model, dir.path(), options);
    REQUIRE(inspectModelFolder(dir.path()).storedDTypes.at(dtypeName(dtype)) > 0);
    // config.json says so, as transformers' save_pretrained does (it had said float32 whatever was stored).
    REQUIRE_EQ(nlohmann::json::parse(readTextFile(dir.path("config.json")))["torch_dtype"], name);
    auto loaded = loadModel(dir.path());
    for (auto& p : model->named_parameters()) {
      auto expected = p.value().to(torchType).to(torch::kFloat32);
      REQUIRE_MSG(torch::equal(loaded->named_parameters()[p.key()], expected),
                  p.key() << " in " << dtypeName(dtype));
    }
  }
}

TEST_CASE(layout_variants_load_to_the_same_model) {
  auto model = randomModel(smallConfig());
  TempDir plain, prefixed, sharded, withBuffers;
  saveModel(*model, plain.path());
  SaveOptions p;
  p.basePrefix = true;
  saveModel(*model, prefixed.path(), p);
  // As GPT2LMHeadModel.save_pretrained names them: every tensor of the base model under "transformer.", the
  // tied embedding too; an untied head keeps its bare name.
  const SafetensorsFile prefixedFile = SafetensorsFile::open(prefixed.path("model.safetensors"));
  for (const TensorInfo& t : prefixedFile.tensors())
    REQUIRE_MSG(t.name.rfind("transformer.", 0) == 0, t.name);
  ModelShape untiedShape = smallConfig();
  untiedShape.tiedUnembedding = false;
  TempDir untied;
  saveModel(*randomModel(untiedShape), untied.path(), p);
  const SafetensorsFile untiedFile = SafetensorsFile::open(untied.path("model.safetensors"));
  REQUIRE(untiedFile.find("lm_head.weight") && untiedFile.find("transformer.wte.weight"));
  // Beside an untied head the base is prefixed even unasked: transformers (modeling_utils, loading a state
  // dict without the base prefix into GPT2LMHeadModel) refuses a bare lm_head.weight beside bare base names.
  TempDir untiedPlain;
  saveModel(*randomModel(untiedShape), untiedPlain.path());
  const SafetensorsFile untiedPlainFile = SafetensorsFile::open(untiedPlain.path("model.safetensors"));
  for (const TensorInfo& t : untiedPlainFile.tensors())
    REQUIRE_MSG(t.name == "lm_head.weight" || t.name.rfind("transformer.", 0) == 0, t.name);
  SaveOptions s;
  s.maxShardBytes = 20'000;  // several shards
  saveModel(*model, sharded.path(), s);
  // As in files from the Hub: attention-mask buffers and a tied lm_head copy are stored too.
  auto mask = torch::ones({1, 1, 16, 16}).tril().contiguous();
  auto wte = gpt2Of(model).wte->weight.detach().contiguous();
  writeHandmade(*model, withBuffers.path(), [](const std::string& n) { return n; },
                {{"h.0.attn.bias", DType::F32, {1, 1, 16, 16}, mask.data_ptr()},
                 {"h.1.attn.masked_bias", DType::F32, {}, mask.data_ptr()},
                 {"lm_head.weight", DType::F32, wte.sizes().vec(), wte.data_ptr()}});
  REQUIRE(fs::exists(sharded.path("model.safetensors.index.json")));
  REQUIRE(inspectModelFolder(sharded.path()).weightFiles.size() > 2);
  REQUIRE(!fs::exists(sharded.path("model.safetensors")));
  for (auto* dir : {&prefixed, &sharded, &withBuffers}) {
    auto loaded = loadModel(dir->path());
    REQUIRE_MSG(sameParameters(*model, *loaded), dir->path());
  }
  // The independent reference reads the sharded, prefixed layout too.
  auto tokens = randomTokens(model->config(), 1, 8);
  torch::NoGradGuard noGrad;
  REQUIRE(maxAbsDiff(referenceLogits(sharded.path(), tokens, 101), model->forward(tokens)) < 1e-5);
  // A shard named with a path or a control character (a NUL opened the name cut at it) is refused by name.
  const std::string index = readTextFile(sharded.path("model.safetensors.index.json"));
  for (const std::string& bad : {std::string("../model-00001-of-00003.safetensors"),
                                 std::string("model-00001-of-00003.safetensors\\u0000.bak")}) {
    std::string edited = index;
    const std::size_t at = edited.find("model-00001-of-");
    edited.replace(at, std::string("model-00001-of-00003.safetensors").size(), bad);
    writeFileAtomic(sharded.path("model.safetensors.index.json"), edited);
    REQUIRE_THROWS_WITH(loadModel(sharded.path()), "model.safetensors.index.json",
                        "is not a plain file name");
  }
}

TEST_CASE(resaving_unsharded_removes_stale_shards) {
  TempDir dir;
  auto model = randomModel(smallConfig());
  SaveOptions s;
  s.maxShardBytes = 20'000;
  saveModel(*model, dir.path(), s);
  saveModel(*model, dir.path());
  REQUIRE(!fs::exists(dir.path("model.safetensors.index.json")));
  REQUIRE_EQ(inspectModelFolder(dir.path()).weightFiles.size(), 1u);
}

TEST_CASE(saved_files_carry_what_hugging_face_requires) {
  TempDir dir;
  auto model = randomModel(smallConfig());
  saveModel(*model, dir.path());
  REQUIRE_EQ(SafetensorsFile::open(dir.path("model.safetensors")).metadata().at("format"), "pt");
  const std::string config = readTextFile(dir.path("config.json"));
  for (const char* key : {"\"model_type\": \"gpt2\"", "\"GPT2LMHeadModel\"", "\"n_embd\": 32",
                          "\"activation_function\": \"gelu_new\"", "\"layer_norm_epsilon\": 1e-05",
                          "\"tie_word_embeddings\": true"})
    REQUIRE_MSG(config.find(key) != std::string::npos, key);
  // Tied weights are stored once, as Hugging Face does.
  REQUIRE(SafetensorsFile::open(dir.path("model.safetensors")).find("lm_head.weight") == nullptr);
  // A model with norms other than its family's (a removal's checkpoint, final/, a folded export) gets a
  // model_type Hugging Face refuses: its GPT2LMHeadModel would run LayerNorm at the fake sites. It loads
  // here as before.
  for (const SiteNorm& norm : {SiteNorm{NormKind::FakeLN, 2.0}, SiteNorm{NormKind::Identity}}) {
    model->norms().at({SiteKind::Final, -1}) = norm;
    saveModel(*model, dir.path("changed"));
    REQUIRE_EQ(readJsonFile(dir.path("changed/config.json"))["model_type"], "normfree_gpt2");
    REQUIRE(loadModel(dir.path("changed"))->norms() == model->norms());
  }
  nlohmann::json unsaid = readJsonFile(dir.path("changed/config.json"));
  unsaid.erase("normfree");
  writeFileAtomic(dir.path("changed/config.json"), unsaid.dump());
  REQUIRE_THROWS_WITH(loadModel(dir.path("changed")), "config.json",
                      "normfree_gpt2' without the \"normfree\" block");
}

TEST_CASE(missing_config_is_named) {
  TempDir dir;
  auto model = randomModel(smallConfig());
  saveModel(*model, dir.path());
  fs::remove(dir.path("config.json"));
  REQUIRE_THROWS_WITH(loadModel(dir.path()), "config.json", "missing");
}

TEST_CASE(malformed_config_is_named) {
  TempDir dir;
  auto model = randomModel(smallConfig());
  saveModel(*model, dir.path());
  writeFileAtomic(dir.path("config.json"),
                  "{\"n_layer\": 2, \"n_head\": 5, \"n_embd\": 32, \"vocab_size\": 101}");
  REQUIRE_THROWS_WITH(loadModel(dir.path()), "config.json", "not divisible by n_head");
  writeFileAtomic(dir.path("config.json"), "{\"n_layer\": 2,");
  REQUIRE_THROWS_WITH(loadModel(dir.path()), "config.json", "not valid JSON");
  writeFileAtomic(dir.path("config.json"), "{\"n_layer\": 2, \"n_head\": 4, \"vocab_size\": 101}");
  REQUIRE_THROWS_WITH(loadModel(dir.path()), "config.json", "missing required field n_embd");
  writeFileAtomic(dir.path("config.json"),
                  "{\"n_layer\": 2, \"n_head\": 4, \"n_embd\": 32, \"vocab_size\": 101, \"n_inner\": 100}");
  REQUIRE_THROWS_WITH(loadModel(dir.path()), "config.json", "n_inner 100 is not supported");
  writeFileAtomic(dir.path("config.json"),
                  "{\"n_layer\": 2, \"n_head\": 4, \"n_embd\": 32, \"vocab_size\": 101, \"n_positions\": 16, "
                  "\"n_inner\": null}");
  REQUIRE(loadModel(dir.path())->config().nEmbd == 32);  // GPT-2's own configs say n_inner: null
  // A family the workbench does not know is named, with the ones it does.
  writeFileAtomic(dir.path("config.json"), "{\"model_type\": \"mamba\", \"n_layer\": 2}");
  REQUIRE_THROWS_WITH(loadModel(dir.path()), "config.json",
                      "model_type 'mamba' is not a supported model family", "supported: gpt2");
}

// GPT2Config's other names for its counts (attribute_map: num_attention_heads is n_head, …): a head count
// read from n_head while transformers takes num_attention_heads changes no tensor's shape, only every logit.
TEST_CASE(gpt2_counts_are_read_under_either_name_and_flags_as_transformers_reads_them) {
  TempDir dir;
  saveModel(*randomModel(smallConfig()), dir.path());
  auto loadWith = [&](const std::string& fields) {
    writeFileAtomic(dir.path("config.json"), "{\"vocab_size\": 101, " + fields + "}");
    return loadModel(dir.path());
  };
  const std::string rest = "\"n_layer\": 2, \"n_embd\": 32, \"n_positions\": 16";
  REQUIRE_EQ(loadWith(rest + ", \"num_attention_heads\": 8")->config().nHead, 8);
  REQUIRE_EQ(loadWith(rest + ", \"num_attention_heads\": 4, \"n_head\": 4")->config().nHead, 4);
  REQUIRE_THROWS_WITH(loadWith(rest + ", \"num_attention_heads\": 8, \"n_head\": 4"), "config.json",
                      "n_head = 4 and num_attention_heads = 8 disagree");
  const auto aliased = loadWith(
      "\"model_type\": \"gpt2\", \"num_hidden_layers\": 2, \"hidden_size\": 32, "
      "\"max_position_embeddings\": 16, \"n_head\": 4");
  REQUIRE(aliased->config().nLayer == 2 && aliased->config().nEmbd == 32 &&
          aliased->config().nPositions == 16);
  REQUIRE_THROWS_WITH(loadWith(rest + ", \"n_head\": 4, \"num_hidden_layers\": 3"), "n_layer = 2",
                      "num_hidden_layers = 3");
  // Flags and widths: null as transformers reads None, anything else named.
  const std::string shape = rest + ", \"n_head\": 4";
  REQUIRE_EQ(loadWith(shape + ", \"reorder_and_upcast_attn\": null")->config().nHead, 4);
  REQUIRE_THROWS_WITH(loadWith(shape + ", \"scale_attn_weights\": null"),
                      "scale_attn_weights = null is not supported");
  REQUIRE_THROWS_WITH(loadWith(shape + ", \"n_inner\": \"128\""), "n_inner must be an integer");
  REQUIRE_THROWS_WITH(loadWith(shape + ", \"n_inner\": 128.5"), "n_inner must be an integer");
  REQUIRE_THROWS_WITH(loadWith(shape + ", \"activation_function\": null"),
                      "activation_function null is not supported");
}

TEST_CASE(missing_unexpected_and_misshapen_tensors_are_named) {
  auto model = randomModel(smallConfig());
  TempDir missing, unexpected, misshapen, intType;
  writeHandmade(*model, missing.path(),
                [](const std::string& n) { return n == "h.1.mlp.c_fc.bias" ? "h.1.mlp.c_fc.bias_typo" : n; });
  REQUIRE_THROWS_WITH(loadModel(missing.path()), "tensor 'h.1.mlp.c_fc.bias_typo'",
                      "not part of a gpt2 model");
  auto extra = torch::zeros({3});
  writeHandmade(*model, unexpected.path(), [](const std::string& n) { return n; },
                {{"h.7.ln_1.weight", DType::F32, {3}, extra.data_ptr()}});
  REQUIRE_THROWS_WITH(loadModel(unexpected.path()), "model.safetensors", "'h.7.ln_1.weight'", "n_layer=2");
  // A config that disagrees with the weights: the file holds d=32, config claims d=64.
  writeHandmade(*model, misshapen.path(), [](const std::string& n) { return n; });
  ModelShape wider = model->config();
  wider.nEmbd = 64;
  writeFileAtomic(misshapen.path("config.json"), configToJson({wider, NormState(wider.nLayer)}));
  REQUIRE_THROWS_WITH(loadModel(misshapen.path()), "model.safetensors", "tensor 'h.0.attn.c_attn.bias'",
                      "shape [96] does not match [192] from config.json");
  auto ints = torch::zeros({32}, torch::kInt32);
  writeHandmade(*model, intType.path(), [](const std::string& n) { return n == "ln_f.bias" ? "" : n; },
                {{"ln_f.bias", DType::I32, {32}, ints.data_ptr()}});
  REQUIRE_THROWS_WITH(loadModel(intType.path()), "tensor 'ln_f.bias'", "I32 is not a float type");
}

TEST_CASE(missing_tensor_is_named) {
  auto model = randomModel(smallConfig());
  TempDir dir;
  saveModel(*model, dir.path());
  // Rewrite the file without ln_f.bias.
  auto f = SafetensorsFile::open(dir.path("model.safetensors"));
  std::vector<TensorBlob> blobs;
  for (auto& t : f.tensors())
    if (t.name != "ln_f.bias") blobs.push_back({t.name, t.dtype, t.shape, f.data(t)});
  writeSafetensors(dir.path("other.safetensors"), blobs);
  fs::rename(dir.path("other.safetensors"), dir.path("model.safetensors"));
  REQUIRE_THROWS_WITH(loadModel(dir.path()), dir.path(), "missing tensor 'ln_f.bias'");
}

TEST_CASE(truncated_weights_file_is_named) {
  auto model = randomModel(smallConfig());
  TempDir dir;
  saveModel(*model, dir.path());
  const auto size = fs::file_size(dir.path("model.safetensors"));
  fs::resize_file(dir.path("model.safetensors"), size - 100);
  REQUIRE_THROWS_WITH(loadModel(dir.path()), "model.safetensors", "outside the data buffer");
}

// A NaN in the weights made DLA's error 0 % and the sink rate 0, and crashed eval; an export's standard form
// stored as F16 holds infinities. Both are refused on load, naming the file and the tensor.
TEST_CASE(non_finite_weights_are_refused_by_tensor) {
  auto model = randomModel(smallConfig());
  {
    torch::NoGradGuard noGrad;
    model->named_parameters()["h.1.mlp.c_fc.weight"][0][0] = std::nan("");
  }
  TempDir dir;
  saveModel(*model, dir.path("nan"));
  REQUIRE_THROWS_WITH(loadModel(dir.path("nan")), dir.path("nan/model.safetensors"),
                      "h.1.mlp.c_fc.weight' holds 1 non-finite values");
  {
    torch::NoGradGuard noGrad;
    model->named_parameters()["h.1.mlp.c_fc.weight"][0][0] = 0.5;
    model->named_parameters()["ln_f.weight"].fill_(1e6);  // as a standard export's norm weights are
  }
  SaveOptions f16;
  f16.dtype = DType::F16;
  saveModel(*model, dir.path("f16"), f16);
  REQUIRE_THROWS_WITH(loadModel(dir.path("f16")), "ln_f.weight' holds 32 non-finite values",
                      "stored as F16, whose largest value is 65504");
  saveModel(*model, dir.path("f32"));  // in float32 the same values load
  REQUIRE(loadModel(dir.path("f32"))->named_parameters()["ln_f.weight"][0].item<float>() == 1e6f);
}

TEST_CASE(no_weights_file_is_explained) {
  TempDir dir;
  writeFileAtomic(dir.path("config.json"), configToJson({smallConfig(), NormState(2)}));
  std::ofstream(dir.path("pytorch_model.bin")) << "x";
  REQUIRE_THROWS_WITH(loadModel(dir.path()), "no model.safetensors", "pytorch_model.bin is not read");
}

TEST_CASE(inspect_reports_shape_and_norm_state_without_loading) {
  TempDir dir;
  auto model = randomModel(smallConfig());
  model->norms().at({SiteKind::Mlp, 0}) = {NormKind::FakeLN, 3.0};
  saveModel(*model, dir.path());
  ModelSummary s = inspectModelFolder(dir.path());
  REQUIRE_EQ(s.shape.family, "gpt2");
  REQUIRE_EQ(s.shape.nLayer, 2);
  REQUIRE_EQ(s.shape.nHead, 4);
  REQUIRE_EQ(s.parameterCount, smallConfig().parameterCount());
  REQUIRE_EQ(s.sites.size(), 7u);
  REQUIRE_EQ(s.sites[2].site, "LN_mlp.0");
  REQUIRE_EQ(s.sites[2].kind, "fakeln");
  REQUIRE_EQ(s.sites[2].scale, 3.0);
  REQUIRE(!s.layerNormFree);
  REQUIRE_EQ(s.norms, "1 of 7 sites FakeLN");
  REQUIRE_EQ(s.weightBytes, static_cast<uint64_t>(s.parameterCount) * 4);
  // A site in its interpolation ramp still divides by its token's σ in part: said, with its share (info had
  // shown a frozen scale and nothing else).
  model->norms().at({SiteKind::Mlp, 0}).realMix = 0.25;
  saveModel(*model, dir.path());
  s = inspectModelFolder(dir.path());
  REQUIRE_EQ(s.sites[2].realMix, 0.25);
  REQUIRE_EQ(s.norms, "0 of 7 sites FakeLN, 1 ramping");
  REQUIRE_MSG(summaryToJson(s).find("\"real_mix\": 0.25") != std::string::npos, summaryToJson(s));
}

TEST_MAIN()

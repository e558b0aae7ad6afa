#include "model/gpt2.h"

#include <torch/torch.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>

#include "io/atomic_file.h"
#include "model/family.h"
#include "model/gelu.h"
#include "model/norm.h"

namespace nf {
Conv1DImpl::Conv1DImpl(int64_t in, int64_t out) {
  weight = register_parameter("weight", torch::empty({in, out}));
  bias = register_parameter("bias", torch::zeros({out}));
}

torch::Tensor Conv1DImpl::forward(const torch::Tensor& x) {
  auto sizes = x.sizes().vec();
  sizes.back() = weight.size(1);
  return torch::addmm(bias, x.reshape({-1, x.size(-1)}), weight).view(sizes);
}

AttentionImpl::AttentionImpl(int64_t d)
    : c_attn(register_module("c_attn", Conv1D(d, 3 * d))), c_proj(register_module("c_proj", Conv1D(d, d))) {}

MlpImpl::MlpImpl(int64_t d)
    : c_fc(register_module("c_fc", Conv1D(d, 4 * d))), c_proj(register_module("c_proj", Conv1D(4 * d, d))) {}

BlockImpl::BlockImpl(int64_t d)
    : ln_1(register_module("ln_1", NormParams(d))),
      attn(register_module("attn", Attention(d))),
      ln_2(register_module("ln_2", NormParams(d))),
      mlp(register_module("mlp", Mlp(d))) {}

GPT2Impl::GPT2Impl(const ModelShape& config, bool initialize) : CausalLMImpl(config) {
  if (config.kvHeads() != config.nHead || config.mlpHidden() != 4 * config.nEmbd ||
      config.rotaryFraction != 0 || config.parallelResidual || !config.qkvBias ||
      !config.attentionOutputBias || !config.mlpBias)
    throw std::invalid_argument(
        "GPT-2 has learned positions, a 4·n_embd MLP, biases everywhere and one key/value head per head");
  wte = register_module("wte", Embedding(config.vocabSize, config.nEmbd));
  wpe = register_module("wpe", Embedding(config.nPositions, config.nEmbd));
  h = register_module("h", torch::nn::ModuleList());
  for (int l = 0; l < config.nLayer; ++l) {
    m_blocks.push_back(Block(config.nEmbd));
    h->push_back(m_blocks.back());
  }
  ln_f = register_module("ln_f", NormParams(config.nEmbd));
  if (!config.tiedUnembedding)
    lm_head = register_module("lm_head", Embedding(config.vocabSize, config.nEmbd));
  if (initialize) initWeights(0);
}

void GPT2Impl::initWeights(uint64_t seed) {
  torch::NoGradGuard noGrad;
  auto gen = at::detail::createCPUGenerator(seed);
  const double std = 0.02, residualStd = 0.02 / std::sqrt(2.0 * config().nLayer);
  for (auto& item : named_parameters()) {
    const std::string& name = item.key();
    torch::Tensor& p = item.value();
    torch::Tensor value = torch::empty(p.sizes(), torch::kFloat32);
    const bool isNorm = name.find("ln_") != std::string::npos;
    const bool isBias = name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    if (isNorm && !isBias)
      value.fill_(1.0);
    else if (isBias)
      value.zero_();
    else
      value.normal_(0.0, name.find("c_proj.weight") != std::string::npos ? residualStd : std, gen);
    p.copy_(value);
  }
}

torch::Tensor GPT2Impl::unembedding() const {
  return config().tiedUnembedding ? wte->weight : lm_head->weight;
}

torch::Tensor GPT2Impl::embed(const torch::Tensor& tokens, HookSet* hooks) {
  const int64_t T = tokens.size(1);
  auto tok = visit(hooks, {HookKind::EmbedTok}, torch::embedding(wte->weight, tokens));
  auto pos = visit(hooks, {HookKind::EmbedPos}, wpe->weight.slice(0, 0, T).unsqueeze(0));
  return tok + pos;
}

torch::Tensor GPT2Impl::block(int layer, torch::Tensor x, const torch::Tensor& tokens, HookSet* hooks) {
  Block& blk = m_blocks[layer];
  const int64_t B = x.size(0), T = x.size(1), D = config().nEmbd, H = config().nHead, dh = config().headDim();

  x = visit(hooks, HookPoint::residPre(layer), x);

  // Attention. LN_qk and LN_v share γ, β; compute once while both paths are in the same state.
  const SiteId qkSite{SiteKind::Qk, layer}, vSite{SiteKind::V, layer};
  torch::Tensor q, k, v;
  const auto& W = blk->attn->c_attn->weight;
  const auto& b = blk->attn->c_attn->bias;
  if (splitsAttentionInput(layer, hooks)) {
    const auto qkv =
        splitAttentionInputs(layer, blk->ln_1, x, tokens, hooks, [&](int role, const torch::Tensor& n) {
          return torch::matmul(n, W.slice(1, role * D, (role + 1) * D)) +
                 b.slice(0, role * D, (role + 1) * D);
        });
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else if (attentionNormShared(layer, hooks)) {
    auto qkv = blk->attn->c_attn(norm(qkSite, blk->ln_1, x, tokens, hooks, vSite)).split(D, -1);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    auto xqk = norm(qkSite, blk->ln_1, x, tokens, hooks).reshape({-1, D});
    auto xv = norm(vSite, blk->ln_1, x, tokens, hooks).reshape({-1, D});
    auto qk = torch::addmm(b.slice(0, 0, 2 * D), xqk, W.slice(1, 0, 2 * D)).view({B, T, 2 * D}).split(D, -1);
    q = qk[0], k = qk[1];
    v = torch::addmm(b.slice(0, 2 * D), xv, W.slice(1, 2 * D)).view({B, T, D});
  }
  auto heads = [&](const torch::Tensor& t) { return t.view({B, T, H, dh}).transpose(1, 2); };
  const torch::Tensor z = attend(layer, heads(q), heads(k), heads(v), hooks);
  const torch::Tensor attnOut =
      attentionOutput(layer, z, blk->attn->c_proj->weight, blk->attn->c_proj->bias, hooks);
  x = visit(hooks, HookPoint::residMid(layer), x + attnOut);

  // MLP.
  auto pre = visit(hooks, HookPoint::mlpPre(layer),
                   blk->mlp->c_fc(norm({SiteKind::Mlp, layer}, blk->ln_2,
                                       visit(hooks, HookPoint::mlpInput(layer), x), tokens, hooks)));
  auto post = visit(hooks, HookPoint::mlpPost(layer), geluTanh(pre));
  auto mlpOut = visit(hooks, HookPoint::mlpOut(layer), blk->mlp->c_proj(post));
  return visit(hooks, HookPoint::residPost(layer), x + mlpOut);
}

CausalLMImpl::NormWeights GPT2Impl::normWeights(SiteId site) const {
  if (site.kind == SiteKind::Final) return {ln_f->weight, ln_f->bias};
  const Block& blk = m_blocks.at(site.layer);
  const NormParams& params = site.kind == SiteKind::Mlp ? blk->ln_2 : blk->ln_1;
  return {params->weight, params->bias};
}

std::vector<CausalLMImpl::LinearView> GPT2Impl::readersOf(SiteId site) const {
  const Block& blk = m_blocks.at(site.layer);
  const int64_t D = config().nEmbd;
  // Conv1D weights are (in, out): transposed, they read along their last dimension.
  const auto& attn = blk->attn->c_attn;
  switch (site.kind) {
    case SiteKind::Qk:
      return {{attn->weight.t().narrow(0, 0, 2 * D), attn->bias.narrow(0, 0, 2 * D)}};
    case SiteKind::V:
      return {{attn->weight.t().narrow(0, 2 * D, D), attn->bias.narrow(0, 2 * D, D)}};
    case SiteKind::Mlp:
      return {{blk->mlp->c_fc->weight.t(), blk->mlp->c_fc->bias}};
    default:
      return {};
  }
}

std::vector<torch::Tensor> GPT2Impl::residualWriters() const {
  std::vector<torch::Tensor> writers = {wte->weight, wpe->weight};
  for (const Block& blk : m_blocks)
    for (const Conv1D& proj : {blk->attn->c_proj, blk->mlp->c_proj}) {
      writers.push_back(proj->weight);
      writers.push_back(proj->bias);
    }
  return writers;
}

// --- GPT-2's Hugging Face layout (model/family.h) ---------------------------------------------------------

namespace {

bool claimsGpt2(const nlohmann::json& j) {
  // Our own older files carry no model_type, but GPT-2's field names; another family's config.json that lost
  // its model_type (LLaMA's num_hidden_layers, …) is not GPT-2 and is refused by name.
  return j.contains("model_type") ? j["model_type"] == "gpt2" : j.contains("n_layer");
}

void applyGpt2Defaults(ModelShape& c) {
  const ModelShape gpt2;  // ModelShape's defaults are GPT-2's building blocks
  c.nKvHead = gpt2.nKvHead, c.mlpWidth = gpt2.mlpWidth, c.rotaryFraction = gpt2.rotaryFraction;
  c.parallelResidual = gpt2.parallelResidual;
  c.qkvBias = c.attentionOutputBias = c.mlpBias = true;
  c.layerNormEpsilon = gpt2.layerNormEpsilon;
}

void readGpt2Shape(const nlohmann::json& j, ModelShape& c, const std::string& source) {
  // Every field type-checked (ConfigReader): an n_head of 1.5 or true, or an n_layer of 2^32 + 2, is
  // refused, never converted.
  const ConfigReader read(j, source);
  // GPT2Config's attribute_map: each count also under the name other families use (a head count read from
  // one name while transformers takes the other changes no tensor's shape, only every logit).
  auto count = [&](const char* key, const char* alias) {
    if (const auto value = read.either(key, alias)) return *value;
    throw FileError(source, std::string("missing required field ") + key);
  };
  c.nLayer = count("n_layer", "num_hidden_layers");
  c.nHead = count("n_head", "num_attention_heads");
  c.nEmbd = count("n_embd", "hidden_size");
  c.vocabSize = read.required<int>("vocab_size");
  c.nPositions =
      read.either("n_positions", "max_position_embeddings").value_or(read.nullable<int>("n_ctx", 1024));
  c.layerNormEpsilon = read.optional<double>("layer_norm_epsilon", 1e-5);
  // Without one, the last id (GPT-2's 50256 for its 50257 tokens, and what our tokenizer trainer does).
  c.eotTokenId = read.endOfText(c.vocabSize);
  c.tiedUnembedding = read.optional<bool>("tie_word_embeddings", true);
  // Variants of Hugging Face's GPT-2 class that this model does not implement: refuse rather than misread.
  // Read as transformers reads them: a null n_inner is 4 × n_embd, a null flag false.
  if (const int inner = read.nullable<int>("n_inner", 4 * c.nEmbd); inner != 4 * c.nEmbd)
    throw FileError(source,
                    "n_inner " + std::to_string(inner) + " is not supported (the MLP width is 4 × n_embd)");
  for (const char* flag : {"scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"})
    if (read.optional<bool>(flag, false))
      throw FileError(source, std::string(flag) + " = true is not supported");
  if (!read.optional<bool>("scale_attn_weights", true))
    throw FileError(source, "scale_attn_weights = " + j["scale_attn_weights"].dump() +
                                " is not supported (attention scores are scaled by 1/√d_head)");
  if (j.contains("activation_function") && j["activation_function"] != "gelu_new")
    throw FileError(source, "activation_function " + j["activation_function"].dump() +
                                " is not supported (GPT-2 uses \"gelu_new\", the tanh approximation)");
}

void writeGpt2Shape(const ModelShape& c, nlohmann::ordered_json& j) {
  j["model_type"] = "gpt2";
  j["architectures"] = {"GPT2LMHeadModel"};
  j["n_layer"] = c.nLayer;
  j["n_head"] = c.nHead;
  j["n_embd"] = c.nEmbd;
  j["n_positions"] = c.nPositions;
  j["n_ctx"] = c.nPositions;
  j["vocab_size"] = c.vocabSize;
  j["layer_norm_epsilon"] = c.layerNormEpsilon;
  j["activation_function"] = "gelu_new";
  j["bos_token_id"] = c.eotTokenId;
  j["eos_token_id"] = c.eotTokenId;
  j["tie_word_embeddings"] = c.tiedUnembedding;
  // Dropout is never used by the workbench; zero keeps Hugging Face evaluation identical.
  j["resid_pdrop"] = 0.0;
  j["embd_pdrop"] = 0.0;
  j["attn_pdrop"] = 0.0;
  j["initializer_range"] = 0.02;
}

// Linear weights use Hugging Face's Conv1D layout (in, out): y = x·W + b.
std::vector<ParameterShape> gpt2ParameterShapes(const ModelShape& c) {
  const int64_t d = c.nEmbd;
  std::vector<ParameterShape> out = {{"wte.weight", {c.vocabSize, d}}, {"wpe.weight", {c.nPositions, d}}};
  for (int l = 0; l < c.nLayer; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    out.push_back({p + "ln_1.weight", {d}});
    out.push_back({p + "ln_1.bias", {d}});
    out.push_back({p + "attn.c_attn.weight", {d, 3 * d}});
    out.push_back({p + "attn.c_attn.bias", {3 * d}});
    out.push_back({p + "attn.c_proj.weight", {d, d}});
    out.push_back({p + "attn.c_proj.bias", {d}});
    out.push_back({p + "ln_2.weight", {d}});
    out.push_back({p + "ln_2.bias", {d}});
    out.push_back({p + "mlp.c_fc.weight", {d, 4 * d}});
    out.push_back({p + "mlp.c_fc.bias", {4 * d}});
    out.push_back({p + "mlp.c_proj.weight", {4 * d, d}});
    out.push_back({p + "mlp.c_proj.bias", {d}});
  }
  out.push_back({"ln_f.weight", {d}});
  out.push_back({"ln_f.bias", {d}});
  if (!c.tiedUnembedding) out.push_back({"lm_head.weight", {c.vocabSize, d}});
  return out;
}

// Stored names may carry GPT2LMHeadModel's "transformer." prefix; older checkpoints also store the causal
// mask as a buffer per block.
std::string gpt2CanonicalName(const std::string& storedName) {
  static const std::regex maskBuffer(R"(h\.\d+\.attn\.(masked_)?bias)");
  std::string name = storedName.rfind("transformer.", 0) == 0 ? storedName.substr(12) : storedName;
  if (std::regex_match(name, maskBuffer)) return "";
  return name;
}

std::shared_ptr<CausalLMImpl> makeGpt2(const ModelShape& shape, bool initialize) {
  return std::make_shared<GPT2Impl>(shape, initialize);
}

// The four sizes the paper removes LayerNorm from (ModelShape's defaults: GPT-2's vocabulary, context and
// building blocks).
std::vector<StandardShape> gpt2StandardShapes() {
  auto gpt2 = [](const char* name, int layers, int heads, int width) {
    ModelShape c;
    c.nLayer = layers, c.nHead = heads, c.nEmbd = width;
    return StandardShape{name, c};
  };
  return {gpt2("gpt2", 12, 12, 768), gpt2("gpt2-medium", 24, 16, 1024), gpt2("gpt2-large", 36, 20, 1280),
          gpt2("gpt2-xl", 48, 25, 1600)};
}

}  // namespace

extern const ModelFamily kGpt2Family;
const ModelFamily kGpt2Family{"gpt2",
                              NormKind::LayerNorm,
                              MlpKind::Gelu,
                              NF_MODULE(makeGpt2),
                              claimsGpt2,
                              applyGpt2Defaults,
                              readGpt2Shape,
                              writeGpt2Shape,
                              gpt2ParameterShapes,
                              gpt2CanonicalName,
                              "transformer.",
                              gpt2StandardShapes};

}  // namespace nf

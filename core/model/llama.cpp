#include "model/llama.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "model/family.h"

namespace nf {
LlamaAttentionImpl::LlamaAttentionImpl(const ModelShape& s) {
  const int64_t d = s.nEmbd, kv = s.kvHeads() * s.headDim();
  q_proj = register_module("q_proj", linearLayer(d, d, s.qkvBias));
  k_proj = register_module("k_proj", linearLayer(d, kv, s.qkvBias));
  v_proj = register_module("v_proj", linearLayer(d, kv, s.qkvBias));
  o_proj = register_module("o_proj", linearLayer(d, d, s.attentionOutputBias));
}

LlamaMlpImpl::LlamaMlpImpl(const ModelShape& s)
    : gate_proj(register_module("gate_proj", linearLayer(s.nEmbd, s.mlpHidden(), s.mlpBias))),
      up_proj(register_module("up_proj", linearLayer(s.nEmbd, s.mlpHidden(), s.mlpBias))),
      down_proj(register_module("down_proj", linearLayer(s.mlpHidden(), s.nEmbd, s.mlpBias))) {}

LlamaLayerImpl::LlamaLayerImpl(const ModelShape& s)
    : self_attn(register_module("self_attn", LlamaAttention(s))),
      mlp(register_module("mlp", LlamaMlp(s))),
      input_layernorm(register_module("input_layernorm", NormParams(s.nEmbd, /*withBias=*/false))),
      post_attention_layernorm(register_module("post_attention_layernorm", NormParams(s.nEmbd, false))) {}

LlamaBodyImpl::LlamaBodyImpl(const ModelShape& s)
    : embed_tokens(register_module("embed_tokens", Embedding(s.vocabSize, s.nEmbd))),
      layers(register_module("layers", torch::nn::ModuleList())) {
  for (int l = 0; l < s.nLayer; ++l) layers->push_back(LlamaLayer(s));
  norm = register_module("norm", NormParams(s.nEmbd, false));
}

LlamaImpl::LlamaImpl(const ModelShape& shape, bool initialize) : CausalLMImpl(shape) {
  // What Hugging Face's two classes can express: LLaMA's attention_bias covers q, k, v and o alike;
  // Qwen2 has q, k, v biases only.
  const bool llamaBiases = shape.qkvBias == shape.attentionOutputBias;
  const bool qwen2Biases = shape.qkvBias && !shape.attentionOutputBias && !shape.mlpBias;
  if (shape.family == "llama" ? !llamaBiases : !qwen2Biases)
    throw std::invalid_argument("a " + shape.family + " model cannot have these projection biases");
  if (shape.rotaryDims() != shape.headDim())
    throw std::invalid_argument("LLaMA-family models rotate every dimension of a head");
  model = register_module("model", LlamaBody(shape));
  for (int l = 0; l < shape.nLayer; ++l) m_layers.emplace_back(model->layers->ptr<LlamaLayerImpl>(l));
  if (!shape.tiedUnembedding) lm_head = register_module("lm_head", Embedding(shape.vocabSize, shape.nEmbd));
  if (initialize) initWeights(0);
}

void LlamaImpl::initWeights(uint64_t seed) { initLikeHuggingFace(*this, seed, 0.02); }

torch::Tensor LlamaImpl::unembedding() const {
  return config().tiedUnembedding ? model->embed_tokens->weight : lm_head->weight;
}

torch::Tensor LlamaImpl::attentionOutputBias(int layer) const {
  const auto& o = m_layers.at(layer)->self_attn->o_proj;
  return o->bias.defined() ? o->bias : torch::zeros_like(o->weight.select(1, 0));
}

torch::Tensor LlamaImpl::mlpOutputWeight(int layer) const {
  return m_layers.at(layer)->mlp->down_proj->weight.t();
}

torch::Tensor LlamaImpl::embed(const torch::Tensor& tokens, HookSet* hooks) {
  return visit(hooks, {HookKind::EmbedTok}, torch::embedding(model->embed_tokens->weight, tokens));
}

torch::Tensor LlamaImpl::block(int layer, torch::Tensor x, const torch::Tensor& tokens, HookSet* hooks) {
  LlamaLayer& blk = m_layers[layer];
  const int64_t B = x.size(0), T = x.size(1), dh = config().headDim();
  x = visit(hooks, HookPoint::residPre(layer), x);

  const SiteId qkSite{SiteKind::Qk, layer}, vSite{SiteKind::V, layer};
  auto& attn = blk->self_attn;
  torch::Tensor q, k, v;  // [B, T, heads·dh]
  if (splitsAttentionInput(layer, hooks)) {
    const auto qkv = splitAttentionInputs(
        layer, blk->input_layernorm, x, tokens, hooks, [&](int role, const torch::Tensor& n) {
          return (role == 0 ? attn->q_proj : role == 1 ? attn->k_proj : attn->v_proj)(n);
        });
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    const bool shared = attentionNormShared(layer, hooks);
    const torch::Tensor xqk = norm(qkSite, blk->input_layernorm, x, tokens, hooks,
                                   shared ? std::optional<SiteId>(vSite) : std::nullopt);
    const torch::Tensor xv = shared ? xqk : norm(vSite, blk->input_layernorm, x, tokens, hooks);
    q = attn->q_proj(xqk), k = attn->k_proj(xqk), v = attn->v_proj(xv);
  }
  auto heads = [&](const torch::Tensor& t) { return t.view({B, T, -1, dh}).transpose(1, 2); };
  const auto [rq, rk] = rotary(heads(q), heads(k));
  const torch::Tensor z = attend(layer, rq, rk, heads(v), hooks);
  const torch::Tensor attnOut =
      attentionOutput(layer, z, attn->o_proj->weight.t(), attn->o_proj->bias, hooks);
  x = visit(hooks, HookPoint::residMid(layer), x + attnOut);

  auto& mlp = blk->mlp;
  const torch::Tensor h = norm({SiteKind::Mlp, layer}, blk->post_attention_layernorm,
                               visit(hooks, HookPoint::mlpInput(layer), x), tokens, hooks);
  auto pre = visit(hooks, HookPoint::mlpPre(layer), mlp->gate_proj(h));
  auto post = visit(hooks, HookPoint::mlpPost(layer), torch::silu(pre) * mlp->up_proj(h));
  auto mlpOut = visit(hooks, HookPoint::mlpOut(layer), mlp->down_proj(post));
  return visit(hooks, HookPoint::residPost(layer), x + mlpOut);
}

CausalLMImpl::NormWeights LlamaImpl::normWeights(SiteId site) const {
  if (site.kind == SiteKind::Final) return {model->norm->weight, {}};
  const LlamaLayer& blk = m_layers.at(site.layer);
  return {(site.kind == SiteKind::Mlp ? blk->post_attention_layernorm : blk->input_layernorm)->weight, {}};
}

std::vector<CausalLMImpl::LinearView> LlamaImpl::readersOf(SiteId site) const {
  const LlamaLayer& blk = m_layers.at(site.layer);
  auto view = [](const torch::nn::Linear& l) { return LinearView{l->weight, l->bias}; };
  switch (site.kind) {
    case SiteKind::Qk:
      return {view(blk->self_attn->q_proj), view(blk->self_attn->k_proj)};
    case SiteKind::V:
      return {view(blk->self_attn->v_proj)};
    case SiteKind::Mlp:
      return {view(blk->mlp->gate_proj), view(blk->mlp->up_proj)};
    default:
      return {};
  }
}

std::vector<torch::Tensor> LlamaImpl::residualWriters() const {
  std::vector<torch::Tensor> writers = {model->embed_tokens->weight};
  for (const LlamaLayer& blk : m_layers)
    for (const torch::nn::Linear& proj : {blk->self_attn->o_proj, blk->mlp->down_proj}) {
      writers.push_back(proj->weight.t());
      if (proj->bias.defined()) writers.push_back(proj->bias);
    }
  return writers;
}

// --- The Hugging Face layouts of LLaMA and Qwen2 (model/family.h) -----------------------------------------

namespace {

// `defaultEndOfText`: the family's transformers config class's eos_token_id default, where it has one.
void readCommonShape(const ConfigReader& read, ModelShape& c, std::optional<int> defaultEndOfText) {
  c.nLayer = read.required<int>("num_hidden_layers");
  c.nHead = read.required<int>("num_attention_heads");
  c.nEmbd = read.required<int>("hidden_size");
  c.vocabSize = read.required<int>("vocab_size");
  c.mlpWidth = read.required<int>("intermediate_size");
  c.nKvHead = read.nullable<int>("num_key_value_heads", c.nHead);
  c.nPositions = read.nullable<int>("max_position_embeddings", 2048);
  c.layerNormEpsilon = read.optional<double>("rms_norm_eps", 1e-6);
  c.rotaryBase = read.rotary({"rope_theta"}, "rope_theta", 10000.0);
  c.rotaryFraction = 1.0;
  c.tiedUnembedding = read.optional<bool>("tie_word_embeddings", false);
  c.parallelResidual = false;
  c.eotTokenId = read.endOfText(c.vocabSize, defaultEndOfText);
  read.requireValue("hidden_act", "silu", "the SwiGLU MLP");
  if (read.rotary({"partial_rotary_factor"}, "partial_rotary_factor", 1.0) != 1.0)
    throw FileError(read.source(),
                    "partial_rotary_factor below 1 is not supported in this family (rotary "
                    "on every dimension of a head)");
  if (read.optional<bool>("rope_interleaved", false))
    throw FileError(read.source(),
                    "rope_interleaved = true is not supported (only Hugging Face's rotate-half)");
}

void requireStandardHeadDim(const nlohmann::json& j, const ModelShape& c, const std::string& source) {
  if (j.contains("head_dim") && !j["head_dim"].is_null() && j["head_dim"] != c.headDim())
    throw FileError(source, "head_dim " + j["head_dim"].dump() + " is not supported (only hidden_size / " +
                                "num_attention_heads = " + std::to_string(c.headDim()) + ")");
}

void applyLlamaDefaults(ModelShape& c) {
  c.nKvHead = 0, c.mlpWidth = 0, c.parallelResidual = false;
  c.rotaryFraction = 1, c.rotaryBase = 10000;
  c.qkvBias = c.attentionOutputBias = c.mlpBias = false;
  c.layerNormEpsilon = 1e-6;
}

void applyQwen2Defaults(ModelShape& c) {
  applyLlamaDefaults(c);
  c.qkvBias = true;
}

bool claimsLlama(const nlohmann::json& j) { return j.value("model_type", "") == "llama"; }

void readLlamaShape(const nlohmann::json& j, ModelShape& c, const std::string& source) {
  ConfigReader read(j, source);
  readCommonShape(read, c, 2);  // LlamaConfig's default
  c.qkvBias = c.attentionOutputBias = read.optional<bool>("attention_bias", false);
  c.mlpBias = read.optional<bool>("mlp_bias", false);
  requireStandardHeadDim(j, c, source);
}

bool claimsQwen2(const nlohmann::json& j) { return j.value("model_type", "") == "qwen2"; }

void readQwen2Shape(const nlohmann::json& j, ModelShape& c, const std::string& source) {
  ConfigReader read(j, source);
  readCommonShape(read, c, std::nullopt);  // Qwen2Config has none
  c.qkvBias = true;
  c.attentionOutputBias = c.mlpBias = false;
  if (read.optional<bool>("use_sliding_window", false))
    throw FileError(source, "use_sliding_window = true is not supported (only full causal attention)");
  requireStandardHeadDim(j, c, source);
}

void writeCommonShape(const ModelShape& c, nlohmann::ordered_json& j) {
  j["num_hidden_layers"] = c.nLayer;
  j["num_attention_heads"] = c.nHead;
  j["num_key_value_heads"] = c.kvHeads();
  j["hidden_size"] = c.nEmbd;
  j["intermediate_size"] = c.mlpHidden();
  j["vocab_size"] = c.vocabSize;
  j["max_position_embeddings"] = c.nPositions;
  j["rms_norm_eps"] = c.layerNormEpsilon;
  j["rope_theta"] = c.rotaryBase;
  j["rope_scaling"] = nullptr;
  j["hidden_act"] = "silu";
  j["tie_word_embeddings"] = c.tiedUnembedding;
  j["bos_token_id"] = c.eotTokenId;
  j["eos_token_id"] = c.eotTokenId;
  j["attention_dropout"] = 0.0;
  j["initializer_range"] = 0.02;
}

void writeLlamaShape(const ModelShape& c, nlohmann::ordered_json& j) {
  j["model_type"] = "llama";
  j["architectures"] = {"LlamaForCausalLM"};
  writeCommonShape(c, j);
  j["attention_bias"] = c.qkvBias;
  j["mlp_bias"] = c.mlpBias;
}

void writeQwen2Shape(const ModelShape& c, nlohmann::ordered_json& j) {
  j["model_type"] = "qwen2";
  j["architectures"] = {"Qwen2ForCausalLM"};
  writeCommonShape(c, j);
  j["use_sliding_window"] = false;
  // Qwen2Config's defaults are a window of 4,096 from layer 28: some transformers 4.4x releases window the
  // attention whenever sliding_window is set, use_sliding_window or not.
  j["sliding_window"] = nullptr;
  j["max_window_layers"] = c.nLayer;
}

std::vector<ParameterShape> llamaParameterShapes(const ModelShape& c) {
  const int64_t d = c.nEmbd, f = c.mlpHidden(), kv = c.kvHeads() * c.headDim();
  std::vector<ParameterShape> out = {{"model.embed_tokens.weight", {c.vocabSize, d}}};
  auto linear = [&](const std::string& name, int64_t in, int64_t outDim, bool bias) {
    out.push_back({name + ".weight", {outDim, in}});
    if (bias) out.push_back({name + ".bias", {outDim}});
  };
  for (int l = 0; l < c.nLayer; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    linear(p + "self_attn.q_proj", d, d, c.qkvBias);
    linear(p + "self_attn.k_proj", d, kv, c.qkvBias);
    linear(p + "self_attn.v_proj", d, kv, c.qkvBias);
    linear(p + "self_attn.o_proj", d, d, c.attentionOutputBias);
    linear(p + "mlp.gate_proj", d, f, c.mlpBias);
    linear(p + "mlp.up_proj", d, f, c.mlpBias);
    linear(p + "mlp.down_proj", f, d, c.mlpBias);
    out.push_back({p + "input_layernorm.weight", {d}});
    out.push_back({p + "post_attention_layernorm.weight", {d}});
  }
  out.push_back({"model.norm.weight", {d}});
  if (!c.tiedUnembedding) out.push_back({"lm_head.weight", {c.vocabSize, d}});
  return out;
}

// Older checkpoints store the rotary frequencies as a buffer per layer.
std::string llamaCanonicalName(const std::string& storedName) {
  const std::string buffer = ".self_attn.rotary_emb.inv_freq";
  const bool isBuffer = storedName.size() > buffer.size() &&
                        storedName.compare(storedName.size() - buffer.size(), buffer.size(), buffer) == 0;
  return isBuffer ? "" : storedName;
}

// Published models of the two families up to ~2B parameters, as their config.json files give them.
struct PublishedShape {
  const char* name;
  int layers, heads, kvHeads, width, mlpWidth, vocab, positions;
  bool tied;
  double epsilon, ropeTheta;
  int endOfText;
};

std::vector<StandardShape> shapesOf(void (*applyDefaults)(ModelShape&), const char* family,
                                    std::initializer_list<PublishedShape> published) {
  std::vector<StandardShape> out;
  for (const PublishedShape& p : published) {
    ModelShape c;
    c.family = family;
    applyDefaults(c);
    c.nLayer = p.layers, c.nHead = p.heads, c.nKvHead = p.kvHeads, c.nEmbd = p.width, c.mlpWidth = p.mlpWidth;
    c.vocabSize = p.vocab, c.nPositions = p.positions, c.tiedUnembedding = p.tied;
    c.layerNormEpsilon = p.epsilon, c.rotaryBase = p.ropeTheta, c.eotTokenId = p.endOfText;
    out.push_back({p.name, c});
  }
  return out;
}

std::shared_ptr<CausalLMImpl> makeLlama(const ModelShape& shape, bool initialize) {
  return std::make_shared<LlamaImpl>(shape, initialize);
}

std::vector<StandardShape> llamaShapes() {
  return shapesOf(applyLlamaDefaults, "llama",
                  {{"smollm2-135m", 30, 9, 3, 576, 1536, 49152, 8192, true, 1e-5, 100000, 0},
                   {"smollm2-360m", 32, 15, 5, 960, 2560, 49152, 8192, true, 1e-5, 100000, 0},
                   {"smollm2-1.7b", 24, 32, 32, 2048, 8192, 49152, 8192, true, 1e-5, 130000, 0},
                   {"tinyllama-1.1b", 22, 32, 4, 2048, 5632, 32000, 2048, false, 1e-5, 10000, 2},
                   {"llama-3.2-1b", 16, 32, 8, 2048, 8192, 128256, 131072, true, 1e-5, 500000, 128001}});
}

std::vector<StandardShape> qwen2Shapes() {
  return shapesOf(applyQwen2Defaults, "qwen2",
                  {{"qwen2.5-0.5b", 24, 14, 2, 896, 4864, 151936, 32768, true, 1e-6, 1000000, 151643},
                   {"qwen2.5-1.5b", 28, 12, 2, 1536, 8960, 151936, 32768, true, 1e-6, 1000000, 151643}});
}

}  // namespace

extern const ModelFamily kLlamaFamily, kQwen2Family;
const ModelFamily kLlamaFamily{"llama",
                               NormKind::RMSNorm,
                               MlpKind::SwiGlu,
                               NF_MODULE(makeLlama),
                               claimsLlama,
                               applyLlamaDefaults,
                               readLlamaShape,
                               writeLlamaShape,
                               llamaParameterShapes,
                               llamaCanonicalName,
                               "",
                               llamaShapes};
const ModelFamily kQwen2Family{"qwen2",
                               NormKind::RMSNorm,
                               MlpKind::SwiGlu,
                               NF_MODULE(makeLlama),
                               claimsQwen2,
                               applyQwen2Defaults,
                               readQwen2Shape,
                               writeQwen2Shape,
                               llamaParameterShapes,
                               llamaCanonicalName,
                               "",
                               qwen2Shapes};

}  // namespace nf

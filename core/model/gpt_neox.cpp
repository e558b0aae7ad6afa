#include "model/gpt_neox.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <tuple>

#include "io/atomic_file.h"
#include "model/family.h"

namespace nf {
GptNeoXAttentionImpl::GptNeoXAttentionImpl(const ModelShape& s)
    : query_key_value(register_module("query_key_value", linearLayer(s.nEmbd, 3 * s.nEmbd, s.qkvBias))),
      dense(register_module("dense", linearLayer(s.nEmbd, s.nEmbd, s.attentionOutputBias))) {}

GptNeoXMlpImpl::GptNeoXMlpImpl(const ModelShape& s)
    : dense_h_to_4h(register_module("dense_h_to_4h", linearLayer(s.nEmbd, s.mlpHidden(), s.mlpBias))),
      dense_4h_to_h(register_module("dense_4h_to_h", linearLayer(s.mlpHidden(), s.nEmbd, s.mlpBias))) {}

GptNeoXLayerImpl::GptNeoXLayerImpl(const ModelShape& s)
    : input_layernorm(register_module("input_layernorm", NormParams(s.nEmbd))),
      post_attention_layernorm(register_module("post_attention_layernorm", NormParams(s.nEmbd))),
      attention(register_module("attention", GptNeoXAttention(s))),
      mlp(register_module("mlp", GptNeoXMlp(s))) {}

GptNeoXBodyImpl::GptNeoXBodyImpl(const ModelShape& s)
    : embed_in(register_module("embed_in", Embedding(s.vocabSize, s.nEmbd))),
      layers(register_module("layers", torch::nn::ModuleList())) {
  for (int l = 0; l < s.nLayer; ++l) layers->push_back(GptNeoXLayer(s));
  final_layer_norm = register_module("final_layer_norm", NormParams(s.nEmbd));
}

GptNeoXImpl::GptNeoXImpl(const ModelShape& shape, bool initialize) : CausalLMImpl(shape) {
  if (shape.nKvHead != 0 && shape.kvHeads() != shape.nHead)
    throw std::invalid_argument("GPT-NeoX has no grouped-query attention (num_key_value_heads)");
  gpt_neox = register_module("gpt_neox", GptNeoXBody(shape));
  for (int l = 0; l < shape.nLayer; ++l) m_layers.emplace_back(gpt_neox->layers->ptr<GptNeoXLayerImpl>(l));
  if (!shape.tiedUnembedding)
    embed_out = register_module("embed_out", Embedding(shape.vocabSize, shape.nEmbd));
  if (initialize) initWeights(0);
}

void GptNeoXImpl::initWeights(uint64_t seed) { initLikeHuggingFace(*this, seed, 0.02); }

torch::Tensor GptNeoXImpl::unembedding() const {
  return config().tiedUnembedding ? gpt_neox->embed_in->weight : embed_out->weight;
}

torch::Tensor GptNeoXImpl::attentionOutputBias(int layer) const {
  const auto& dense = m_layers.at(layer)->attention->dense;
  return dense->bias.defined() ? dense->bias : torch::zeros_like(dense->weight.select(1, 0));
}

torch::Tensor GptNeoXImpl::mlpOutputWeight(int layer) const {
  return m_layers.at(layer)->mlp->dense_4h_to_h->weight.t();
}

torch::Tensor GptNeoXImpl::embed(const torch::Tensor& tokens, HookSet* hooks) {
  return visit(hooks, {HookKind::EmbedTok}, torch::embedding(gpt_neox->embed_in->weight, tokens));
}

torch::Tensor GptNeoXImpl::block(int layer, torch::Tensor x, const torch::Tensor& tokens, HookSet* hooks) {
  GptNeoXLayer& blk = m_layers[layer];
  const int64_t B = x.size(0), T = x.size(1), D = config().nEmbd, H = config().nHead, dh = config().headDim();
  x = visit(hooks, HookPoint::residPre(layer), x);

  // Attention: one projection whose output holds, per head, its query, key and value side by side.
  const SiteId qkSite{SiteKind::Qk, layer}, vSite{SiteKind::V, layer};
  const auto& W = blk->attention->query_key_value->weight;  // [3D, D]
  const auto& b = blk->attention->query_key_value->bias;    // [3D] or undefined
  torch::Tensor q, k, v;                                    // [B, T, H, dh]
  if (splitsAttentionInput(layer, hooks)) {
    const auto perHead = W.view({H, 3, dh, D});
    const auto qkv = splitAttentionInputs(
        layer, blk->input_layernorm, x, tokens, hooks, [&](int role, const torch::Tensor& n) {
          return torch::linear(
              n, perHead.select(1, role).reshape({H * dh, D}),
              b.defined() ? b.view({H, 3, dh}).select(1, role).reshape({-1}) : torch::Tensor());
        });
    q = qkv[0].view({B, T, H, dh}), k = qkv[1].view({B, T, H, dh}), v = qkv[2].view({B, T, H, dh});
  } else if (attentionNormShared(layer, hooks)) {
    auto qkv = torch::linear(norm(qkSite, blk->input_layernorm, x, tokens, hooks, vSite), W, b)
                   .view({B, T, H, 3, dh});
    q = qkv.select(3, 0), k = qkv.select(3, 1), v = qkv.select(3, 2);
  } else {
    const auto perHead = W.view({H, 3, dh, D});
    const torch::Tensor bqk =
        b.defined() ? b.view({H, 3, dh}).narrow(1, 0, 2).reshape({-1}) : torch::Tensor();
    const torch::Tensor bv = b.defined() ? b.view({H, 3, dh}).select(1, 2).reshape({-1}) : torch::Tensor();
    auto qk = torch::linear(norm(qkSite, blk->input_layernorm, x, tokens, hooks),
                            perHead.narrow(1, 0, 2).reshape({H * 2 * dh, D}), bqk)
                  .view({B, T, H, 2, dh});
    q = qk.select(3, 0), k = qk.select(3, 1);
    v = torch::linear(norm(vSite, blk->input_layernorm, x, tokens, hooks),
                      perHead.select(1, 2).reshape({H * dh, D}), bv)
            .view({B, T, H, dh});
  }
  const auto [rq, rk] = rotary(q.transpose(1, 2), k.transpose(1, 2));
  const torch::Tensor z = attend(layer, rq, rk, v.transpose(1, 2), hooks);
  const auto& dense = blk->attention->dense;
  const torch::Tensor attnOut = attentionOutput(layer, z, dense->weight.t(), dense->bias, hooks);

  // MLP: with the parallel residual it reads the block's input, as attention does.
  const torch::Tensor mid = visit(hooks, HookPoint::residMid(layer), x + attnOut);
  const torch::Tensor mlpIn = visit(hooks, HookPoint::mlpInput(layer), config().parallelResidual ? x : mid);
  auto pre = visit(hooks, HookPoint::mlpPre(layer),
                   blk->mlp->dense_h_to_4h(
                       norm({SiteKind::Mlp, layer}, blk->post_attention_layernorm, mlpIn, tokens, hooks)));
  auto post = visit(hooks, HookPoint::mlpPost(layer), torch::gelu(pre));
  auto mlpOut = visit(hooks, HookPoint::mlpOut(layer), blk->mlp->dense_4h_to_h(post));
  return visit(hooks, HookPoint::residPost(layer), mid + mlpOut);
}

CausalLMImpl::NormWeights GptNeoXImpl::normWeights(SiteId site) const {
  if (site.kind == SiteKind::Final) return {finalNorm()->weight, finalNorm()->bias};
  const GptNeoXLayer& blk = m_layers.at(site.layer);
  const NormParams& params =
      site.kind == SiteKind::Mlp ? blk->post_attention_layernorm : blk->input_layernorm;
  return {params->weight, params->bias};
}

std::vector<CausalLMImpl::LinearView> GptNeoXImpl::readersOf(SiteId site) const {
  const GptNeoXLayer& blk = m_layers.at(site.layer);
  const int64_t H = config().nHead, dh = config().headDim();
  const auto& qkv = blk->attention->query_key_value;
  const torch::Tensor W = qkv->weight.view({H, 3, dh, config().nEmbd});
  const torch::Tensor b = qkv->bias.defined() ? qkv->bias.view({H, 3, dh}) : torch::Tensor();
  switch (site.kind) {
    case SiteKind::Qk:
      return {{W.narrow(1, 0, 2), b.defined() ? b.narrow(1, 0, 2) : b}};
    case SiteKind::V:
      return {{W.select(1, 2), b.defined() ? b.select(1, 2) : b}};
    case SiteKind::Mlp:
      return {{blk->mlp->dense_h_to_4h->weight, blk->mlp->dense_h_to_4h->bias}};
    default:
      return {};
  }
}

std::vector<torch::Tensor> GptNeoXImpl::residualWriters() const {
  std::vector<torch::Tensor> writers = {gpt_neox->embed_in->weight};
  for (const GptNeoXLayer& blk : m_layers)
    for (const torch::nn::Linear& proj : {blk->attention->dense, blk->mlp->dense_4h_to_h}) {
      writers.push_back(proj->weight.t());
      if (proj->bias.defined()) writers.push_back(proj->bias);
    }
  return writers;
}

// --- GPT-NeoX's Hugging Face layout (model/family.h) ------------------------------------------------------

namespace {

bool claimsGptNeoX(const nlohmann::json& j) { return j.value("model_type", "") == "gpt_neox"; }

void applyGptNeoXDefaults(ModelShape& c) {
  c.nKvHead = 0, c.mlpWidth = 0;  // 4·hidden_size, as every Pythia
  c.rotaryFraction = 0.25, c.rotaryBase = 10000, c.parallelResidual = true;
  c.qkvBias = c.attentionOutputBias = c.mlpBias = true;
  c.tiedUnembedding = false;
  c.layerNormEpsilon = 1e-5;
}

void readGptNeoXShape(const nlohmann::json& j, ModelShape& c, const std::string& source) {
  ConfigReader read(j, source);
  c.nLayer = read.required<int>("num_hidden_layers");
  c.nHead = read.required<int>("num_attention_heads");
  c.nEmbd = read.required<int>("hidden_size");
  c.vocabSize = read.required<int>("vocab_size");
  c.mlpWidth = read.required<int>("intermediate_size");
  c.nPositions = read.nullable<int>("max_position_embeddings", 2048);
  // transformers 5 reads these inside rope_parameters (where both are given they must agree). transformers
  // 4's GPTNeoXConfig sets partial_rotary_factor and rope_theta from rotary_pct and rotary_emb_base (or
  // their defaults), over any top-level value of their own: one that differs is refused, never used.
  c.rotaryFraction = read.rotary({"rotary_pct"}, "partial_rotary_factor", 0.25);
  c.rotaryBase = read.rotary({"rotary_emb_base"}, "rope_theta", 10000.0);
  for (const auto& [key, used, from] : {std::tuple{"partial_rotary_factor", c.rotaryFraction, "rotary_pct"},
                                        std::tuple{"rope_theta", c.rotaryBase, "rotary_emb_base"}})
    if (j.contains(key) && !j[key].is_null() && !(j[key].is_number() && j[key].get<double>() == used))
      throw FileError(source, std::string(key) + " = " + j[key].dump() +
                                  " is not what transformers 4 uses for GPT-NeoX, which takes " + from +
                                  " (here " + nlohmann::json(used).dump() + ") and ignores " + key +
                                  ": give the value as " + from);
  c.layerNormEpsilon = read.optional<double>("layer_norm_eps", 1e-5);
  c.parallelResidual = read.optional<bool>("use_parallel_residual", true);
  c.tiedUnembedding = read.optional<bool>("tie_word_embeddings", false);
  c.qkvBias = c.attentionOutputBias = read.optional<bool>("attention_bias", true);
  c.mlpBias = true;
  c.eotTokenId = read.endOfText(c.vocabSize, 2);  // GPTNeoXConfig's default
  read.requireValue("hidden_act", "gelu", "Pythia's exact GELU");
}

void writeGptNeoXShape(const ModelShape& c, nlohmann::ordered_json& j) {
  j["model_type"] = "gpt_neox";
  j["architectures"] = {"GPTNeoXForCausalLM"};
  j["num_hidden_layers"] = c.nLayer;
  j["num_attention_heads"] = c.nHead;
  j["hidden_size"] = c.nEmbd;
  j["intermediate_size"] = c.mlpHidden();
  j["vocab_size"] = c.vocabSize;
  j["max_position_embeddings"] = c.nPositions;
  j["rotary_pct"] = c.rotaryFraction;
  j["rotary_emb_base"] = c.rotaryBase;
  j["rope_theta"] = c.rotaryBase;
  j["layer_norm_eps"] = c.layerNormEpsilon;
  j["use_parallel_residual"] = c.parallelResidual;
  j["hidden_act"] = "gelu";
  j["attention_bias"] = c.qkvBias;
  j["tie_word_embeddings"] = c.tiedUnembedding;
  j["bos_token_id"] = c.eotTokenId;
  j["eos_token_id"] = c.eotTokenId;
  j["attention_dropout"] = 0.0;
  j["hidden_dropout"] = 0.0;
  j["initializer_range"] = 0.02;
}

std::vector<ParameterShape> gptNeoXParameterShapes(const ModelShape& c) {
  const int64_t d = c.nEmbd, f = c.mlpHidden();
  std::vector<ParameterShape> out = {{"gpt_neox.embed_in.weight", {c.vocabSize, d}}};
  for (int l = 0; l < c.nLayer; ++l) {
    const std::string p = "gpt_neox.layers." + std::to_string(l) + ".";
    for (const char* norm : {"input_layernorm", "post_attention_layernorm"}) {
      out.push_back({p + norm + ".weight", {d}});
      out.push_back({p + norm + ".bias", {d}});
    }
    out.push_back({p + "attention.query_key_value.weight", {3 * d, d}});
    if (c.qkvBias) out.push_back({p + "attention.query_key_value.bias", {3 * d}});
    out.push_back({p + "attention.dense.weight", {d, d}});
    if (c.attentionOutputBias) out.push_back({p + "attention.dense.bias", {d}});
    out.push_back({p + "mlp.dense_h_to_4h.weight", {f, d}});
    if (c.mlpBias) out.push_back({p + "mlp.dense_h_to_4h.bias", {f}});
    out.push_back({p + "mlp.dense_4h_to_h.weight", {d, f}});
    if (c.mlpBias) out.push_back({p + "mlp.dense_4h_to_h.bias", {d}});
  }
  out.push_back({"gpt_neox.final_layer_norm.weight", {d}});
  out.push_back({"gpt_neox.final_layer_norm.bias", {d}});
  if (!c.tiedUnembedding) out.push_back({"embed_out.weight", {c.vocabSize, d}});
  return out;
}

// Older checkpoints store the causal mask and the rotary frequencies as buffers.
std::string gptNeoXCanonicalName(const std::string& storedName) {
  static const std::regex buffer(
      R"(gpt_neox\.layers\.\d+\.attention\.(bias|masked_bias|rotary_emb\.inv_freq))");
  return std::regex_match(storedName, buffer) ? "" : storedName;
}

std::shared_ptr<CausalLMImpl> makeGptNeoX(const ModelShape& shape, bool initialize) {
  return std::make_shared<GptNeoXImpl>(shape, initialize);
}

// The Pythia suite's models up to 1.4B (EleutherAI's config.json of each).
std::vector<StandardShape> pythiaShapes() {
  auto pythia = [](const char* name, int layers, int heads, int width) {
    ModelShape c;
    c.family = "gpt_neox";
    applyGptNeoXDefaults(c);
    c.nLayer = layers, c.nHead = heads, c.nEmbd = width, c.mlpWidth = 4 * width;
    c.vocabSize = 50304, c.nPositions = 2048, c.eotTokenId = 0;
    return StandardShape{name, c};
  };
  return {pythia("pythia-70m", 6, 8, 512), pythia("pythia-160m", 12, 12, 768),
          pythia("pythia-410m", 24, 16, 1024), pythia("pythia-1b", 16, 8, 2048),
          pythia("pythia-1.4b", 24, 16, 2048)};
}

}  // namespace

extern const ModelFamily kGptNeoXFamily;
const ModelFamily kGptNeoXFamily{"gpt_neox",
                                 NormKind::LayerNorm,
                                 MlpKind::Gelu,
                                 NF_MODULE(makeGptNeoX),
                                 claimsGptNeoX,
                                 applyGptNeoXDefaults,
                                 readGptNeoXShape,
                                 writeGptNeoXShape,
                                 gptNeoXParameterShapes,
                                 gptNeoXCanonicalName,
                                 "",
                                 pythiaShapes};

}  // namespace nf

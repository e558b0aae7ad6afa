#include "model/config.h"

#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/file_format.h"
#include "model/family.h"

namespace nf {

int64_t ModelShape::parameterCount() const {
  int64_t count = 0;
  for (const ParameterShape& p : parameterShapes(*this)) {
    int64_t n = 1;
    for (int64_t d : p.shape) n *= d;
    count += n;
  }
  return count;
}

void ModelShape::validate(const std::string& source) const {
  auto positive = [&](int value, const char* key) {
    if (value <= 0)
      throw FileError(source, std::string(key) + " must be positive, got " + std::to_string(value));
  };
  positive(nLayer, "n_layer");
  positive(nHead, "n_head");
  positive(nEmbd, "n_embd");
  positive(nPositions, "n_positions");
  positive(vocabSize, "vocab_size");
  if (nEmbd % nHead != 0)
    throw FileError(source, "n_embd (" + std::to_string(nEmbd) + ") is not divisible by n_head (" +
                                std::to_string(nHead) + ")");
  if (!(layerNormEpsilon >= 0)) throw FileError(source, "the norms' epsilon must be non-negative");
  if (nKvHead < 0 || nHead % kvHeads() != 0)
    throw FileError(source, "num_key_value_heads (" + std::to_string(nKvHead) + ") must divide n_head (" +
                                std::to_string(nHead) + ")");
  if (mlpWidth < 0) throw FileError(source, "intermediate_size must be positive");
  if (!(rotaryFraction >= 0 && rotaryFraction <= 1))
    throw FileError(source, "the rotary fraction must lie in [0, 1], got " + std::to_string(rotaryFraction));
  if (rotaryFraction > 0 && rotaryDims() == 0)
    throw FileError(source, "the rotary fraction " + std::to_string(rotaryFraction) +
                                " rotates no dimension of a head of " + std::to_string(headDim()));
  if (rotaryFraction > 0 && !(rotaryBase > 0)) throw FileError(source, "rope_theta must be positive");
  if (eotTokenId < 0 || eotTokenId >= vocabSize)
    throw FileError(source, "eos_token_id (" + std::to_string(eotTokenId) +
                                ") is outside the vocabulary of " + std::to_string(vocabSize));
}

int ModelShape::rotaryDims() const {
  // Hugging Face truncates (GPT-NeoX: int(head_size · rotary_pct)); rotate-half needs an even count.
  const int dims = static_cast<int>(headDim() * rotaryFraction);
  return dims - dims % 2;
}

bool ModelShape::operator==(const ModelShape& o) const {
  return family == o.family && nLayer == o.nLayer && nHead == o.nHead && nEmbd == o.nEmbd &&
         nPositions == o.nPositions && vocabSize == o.vocabSize && layerNormEpsilon == o.layerNormEpsilon &&
         eotTokenId == o.eotTokenId && tiedUnembedding == o.tiedUnembedding && kvHeads() == o.kvHeads() &&
         mlpHidden() == o.mlpHidden() && rotaryFraction == o.rotaryFraction && rotaryBase == o.rotaryBase &&
         parallelResidual == o.parallelResidual && qkvBias == o.qkvBias &&
         attentionOutputBias == o.attentionOutputBias && mlpBias == o.mlpBias;
}

namespace {

nlohmann::ordered_json siteToJson(const SiteNorm& n) {
  nlohmann::ordered_json j = {{"kind", normKindName(n.kind)}};
  if (isFakeNorm(n.kind)) {
    j["scale"] = n.scale;
    if (n.pos0Treatment || n.eotTreatment) j["scale_pos0"] = n.scalePos0;
    if (n.pos0Treatment) j["pos0_treatment"] = true;
    if (n.eotTreatment) j["eot_treatment"] = true;
    if (n.realMix > 0) j["real_mix"] = n.realMix;
  }
  return j;
}

SiteNorm siteFromJson(const nlohmann::json& j) {
  SiteNorm n;
  n.kind = parseNormKind(j.at("kind").get<std::string>());
  n.scale = j.value("scale", 1.0);
  n.scalePos0 = j.value("scale_pos0", 1.0);
  n.pos0Treatment = j.value("pos0_treatment", false);
  n.eotTreatment = j.value("eot_treatment", false);
  n.realMix = j.value("real_mix", 0.0);
  return n;
}

}  // namespace

ModelConfig parseConfigJson(const std::string& text, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw FileError(source, std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw FileError(source, "not a JSON object");
  ModelConfig config;
  ModelShape& c = config.shape;
  const ModelFamily& family = familyOfConfig(j, source);
  c.family = family.name;
  try {
    family.readShape(j, c, source);
  } catch (const nlohmann::json::exception& e) {
    throw FileError(source, std::string("malformed field: ") + e.what());
  }
  c.validate(source);

  config.norms = NormState(c.nLayer, family.norm);
  if (j.contains("normfree")) {
    const nlohmann::json& block = j["normfree"];
    // Written as {"format_version": 1} before every format carried "format" + "version".
    if (block.is_object() && block.contains("format_version") && !block.contains("format")) {
      nlohmann::json legacy{{"format", kModelBlockFormat.name}, {"version", block["format_version"]}};
      checkFileFormat(legacy, kModelBlockFormat, source + " (\"normfree\" block)");
    } else {
      checkFileFormat(block, kModelBlockFormat, source + " (\"normfree\" block)", WhenUnmarked::IsVersion1);
    }
    config.folded = block.value("folded", false);
  }
  if (j.contains("normfree") && j["normfree"].contains("sites")) {
    try {
      for (auto& [name, site] : j["normfree"]["sites"].items())
        config.norms.at(parseSiteName(name, c.nLayer)) = siteFromJson(site);
      config.norms.validate();
    } catch (const std::exception& e) {
      throw FileError(source, std::string("normfree.sites: ") + e.what());
    }
  }
  return config;
}

ModelConfig loadConfigFile(const std::string& path) { return parseConfigJson(readTextFile(path), path); }

std::string configToJson(const ModelConfig& config) {
  const ModelShape& c = config.shape;
  nlohmann::ordered_json j;
  familyNamed(c.family).writeShape(c, j);
  nlohmann::ordered_json sites = nlohmann::ordered_json::object();
  for (SiteId s : config.norms.sites()) sites[siteName(s)] = siteToJson(config.norms.at(s));
  j["normfree"] = {{"format", kModelBlockFormat.name},
                   {"version", kModelBlockFormat.version},
                   {"layernorm_free", config.norms.isLayerNormFree()},
                   {"folded", config.folded},
                   {"sites", sites}};
  return j.dump(2) + "\n";
}

std::vector<ParameterShape> parameterShapes(const ModelShape& c) {
  return familyNamed(c.family).parameterShapes(c);
}

}  // namespace nf

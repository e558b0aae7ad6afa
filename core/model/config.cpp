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
  if (!(layerNormEpsilon >= 0)) throw FileError(source, "layer_norm_epsilon must be non-negative");
  if (eotTokenId < 0 || eotTokenId >= vocabSize)
    throw FileError(source, "eos_token_id (" + std::to_string(eotTokenId) +
                                ") is outside the vocabulary of " + std::to_string(vocabSize));
}

bool ModelShape::operator==(const ModelShape& o) const {
  return family == o.family && nLayer == o.nLayer && nHead == o.nHead && nEmbd == o.nEmbd &&
         nPositions == o.nPositions && vocabSize == o.vocabSize && layerNormEpsilon == o.layerNormEpsilon &&
         eotTokenId == o.eotTokenId && tiedUnembedding == o.tiedUnembedding;
}

namespace {

nlohmann::ordered_json siteToJson(const SiteNorm& n) {
  nlohmann::ordered_json j = {{"kind", normKindName(n.kind)}};
  if (n.kind == NormKind::FakeLN) {
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

  config.norms = NormState(c.nLayer);
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

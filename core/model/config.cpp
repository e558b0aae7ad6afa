#include "model/config.h"

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "io/atomic_file.h"
#include "io/file_format.h"
#include "io/json_read.h"
#include "model/family.h"

namespace nf {

namespace {

// The parameters of a model of this shape, in double so that an absurd shape cannot overflow: those of a
// 1-layer model plus (n_layer − 1) times a layer's (every family's size is linear in n_layer), so a huge
// n_layer costs nothing to count.
double parameterEstimate(const ModelShape& shape) {
  auto count = [&](int layers) {
    ModelShape s = shape;
    s.nLayer = layers;
    double n = 0;
    for (const ParameterShape& p : parameterShapes(s)) {
      double size = 1;
      for (int64_t d : p.shape) size *= static_cast<double>(d);
      n += size;
    }
    return n;
  };
  const double one = count(1);
  return one + (shape.nLayer - 1) * (count(2) - one);
}

}  // namespace

int64_t ModelShape::parameterCount() const { return static_cast<int64_t>(parameterEstimate(*this)); }

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
  // Bounds far beyond any real model, checked before anything is sized by them (the norms' state is
  // allocated per layer): a corrupt n_layer of 10^8 is refused here, not by the allocator.
  auto atMost = [&](int value, int limit, const char* key) {
    if (value > limit)
      throw FileError(source, std::string(key) + " = " + std::to_string(value) + " is implausible (at most " +
                                  std::to_string(limit) + ")");
  };
  atMost(nLayer, 4096, "n_layer");
  atMost(nHead, 4096, "n_head");
  atMost(nEmbd, 1 << 20, "n_embd");
  atMost(vocabSize, 1 << 24, "vocab_size");
  atMost(mlpWidth, 1 << 22, "intermediate_size");
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
  if (const int dims = static_cast<int>(headDim() * rotaryFraction); dims % 2 != 0)
    throw FileError(source, "the rotary fraction " + std::to_string(rotaryFraction) + " gives " +
                                std::to_string(dims) + " rotary dimensions of a head of " +
                                std::to_string(headDim()) + ": rotate-half needs an even number");
  if (rotaryFraction > 0 && !(rotaryBase > 0)) throw FileError(source, "rope_theta must be positive");
  if (const double parameters = parameterEstimate(*this); parameters > kMaxParameters) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "a model of this shape has %.3g parameters, more than the %.3g this engine takes",
                  parameters, static_cast<double>(kMaxParameters));
    throw FileError(source, text);
  }
  if (eotTokenId < 0 || eotTokenId >= vocabSize)
    throw FileError(source, "eos_token_id (" + std::to_string(eotTokenId) +
                                ") is outside the vocabulary of " + std::to_string(vocabSize));
}

int ModelShape::rotaryDims() const {
  // Hugging Face truncates (GPT-NeoX: int(head_size · rotary_pct)); validate() refuses an odd count.
  return static_cast<int>(headDim() * rotaryFraction);
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

// A site's state, every field type-checked: a FakeLN's scale is required (a default would silently put a
// divisor of 1 where the file lost its value); the values' ranges are NormState::validate's.
SiteNorm siteFromJson(const JsonIn& j) {
  j.requireKnown({"kind", "scale", "scale_pos0", "pos0_treatment", "eot_treatment", "real_mix"});
  SiteNorm n;
  n.kind = parseNormKind(j["kind"].text());
  if (!isFakeNorm(n.kind)) return n;
  n.scale = j["scale"].real();
  if (j["scale_pos0"].present()) n.scalePos0 = j["scale_pos0"].real();
  if (j["pos0_treatment"].present()) n.pos0Treatment = j["pos0_treatment"].flag();
  if (j["eot_treatment"].present()) n.eotTreatment = j["eot_treatment"].flag();
  if (j["real_mix"].present()) n.realMix = j["real_mix"].real();
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
  std::optional<bool> claimsLayerNormFree;
  if (j.contains("normfree")) {
    const nlohmann::json& block = j["normfree"];
    // Written as {"format_version": 1} before every format carried "format" + "version".
    if (block.is_object() && block.contains("format_version") && !block.contains("format")) {
      nlohmann::json legacy{{"format", kModelBlockFormat.name}, {"version", block["format_version"]}};
      checkFileFormat(legacy, kModelBlockFormat, source + " (\"normfree\" block)");
    } else {
      checkFileFormat(block, kModelBlockFormat, source + " (\"normfree\" block)", WhenUnmarked::IsVersion1);
    }
    try {  // a misspelt "sites" would otherwise leave every site with the family's own norm, unsaid
      readJson(block, "\"normfree\" block", [&](const JsonIn& b) {
        b.requireKnown({"format", "version", "format_version", "layernorm_free", "folded", "sites"});
        if (b["folded"].present()) config.folded = b["folded"].flag();
        if (b["layernorm_free"].present()) claimsLayerNormFree = b["layernorm_free"].flag();
        return 0;
      });
    } catch (const std::invalid_argument& e) {
      throw FileError(source, e.what());
    }
  }
  if (j.contains("normfree") && j["normfree"].contains("sites")) {
    try {
      for (auto& [name, site] : j["normfree"]["sites"].items()) {
        const std::string what = "site " + name;
        config.norms.at(parseSiteName(name, c.nLayer)) = readJson(site, what.c_str(), siteFromJson);
      }
      config.norms.validate();
    } catch (const std::exception& e) {
      throw FileError(source, std::string("normfree.sites: ") + e.what());
    }
  }
  // Only the claim that matters is checked: sites edited to fake ones by hand may leave a stale false.
  if (claimsLayerNormFree.value_or(false) && !config.norms.isLayerNormFree())
    throw FileError(
        source,
        "normfree.layernorm_free is true but its sites say otherwise (a site missing from \"sites\" "
        "keeps the family's own norm)");
  // A folded model is LN-free by construction (its scales are in the weights): every header would say so.
  if (config.folded && !config.norms.isLayerNormFree())
    throw FileError(source,
                    "normfree.folded is true but its sites divide by each token's scale (a folded "
                    "model's sites are all identity or fake)");
  return config;
}

ModelConfig loadConfigFile(const std::string& path) { return parseConfigJson(readTextFile(path), path); }

std::vector<int32_t> endOfSequenceIds(const std::string& configPath) {
  const ModelConfig config = loadConfigFile(configPath);  // checks the ids as the model reads them
  const nlohmann::json j = readJsonFile(configPath);
  const nlohmann::json listed = j.value("eos_token_id", nlohmann::json());
  std::vector<int32_t> ids;
  if (listed.is_null()) return ids;
  for (const nlohmann::json& id : listed.is_array() ? listed : nlohmann::json::array({listed})) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= config.shape.vocabSize)
      throw FileError(configPath, "eos_token_id " + listed.dump() +
                                      " names an id outside the vocabulary of " +
                                      std::to_string(config.shape.vocabSize));
    ids.push_back(id.get<int32_t>());
  }
  return ids;
}

void keepTokenIds(const std::string& fromFolder, const std::string& toFolder) {
  const nlohmann::json from = readJsonFile(fromFolder + "/config.json");
  if (!from.is_object()) return;
  nlohmann::ordered_json to = nlohmann::ordered_json::parse(readTextFile(toFolder + "/config.json"));
  bool changed = false;
  for (const char* key : {"bos_token_id", "eos_token_id", "pad_token_id"}) {
    if (!from.contains(key)) {
      // A BOS id the source lacks is not claimed (configToJson writes the end-of-text id there); the
      // end-of-text id stays written, the one the model was read with (a later default cannot move it).
      if (std::string(key) == "bos_token_id") changed = to.erase(key) > 0 || changed;
      continue;
    }
    const auto value = nlohmann::ordered_json::parse(from[key].dump());
    if (to.contains(key) && to[key] == value) continue;
    to[key] = value;
    changed = true;
  }
  if (changed) writeFileAtomic(toFolder + "/config.json", to.dump(2) + "\n");
}

std::string configToJson(const ModelConfig& config, const std::string& torchDtype) {
  const ModelShape& c = config.shape;
  nlohmann::ordered_json j;
  const ModelFamily& family = familyNamed(c.family);
  family.writeShape(c, j);
  j["torch_dtype"] = torchDtype;
  if (config.folded || !(config.norms == NormState(c.nLayer, family.norm)))
    j["model_type"] = kNormFreeModelType + j["model_type"].get<std::string>();
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

namespace {
// A norm kind as the headers name it (as the GUI's grid does: widgets' normKindLabel).
std::string displayName(NormKind kind) {
  switch (kind) {
    case NormKind::LayerNorm:
      return "LayerNorm";
    case NormKind::FakeLN:
      return "FakeLN";
    case NormKind::RMSNorm:
      return "RMSNorm";
    case NormKind::FakeRMSNorm:
      return "FakeRMSNorm";
    case NormKind::LayerNormScaling:
      return "LN Scaling";
    case NormKind::Identity:
      break;
  }
  return "Identity";
}

}  // namespace

std::string normSummary(const ModelConfig& config) {
  const std::vector<SiteId> sites = config.norms.sites();
  // Each kind's sites, but for fake sites still mixing in their real norm (an interpolation ramp): they
  // divide per token, so are not fake yet, and are counted apart.
  std::map<NormKind, int> kinds;
  int ramping = 0;
  for (const SiteId& site : sites) {
    const SiteNorm& norm = config.norms.at(site);
    if (isFakeNorm(norm.kind) && dividesPerToken(norm))
      ++ramping;
    else
      ++kinds[norm.kind];
  }
  const int layerNorm = kinds[NormKind::LayerNorm], rmsNorm = kinds[NormKind::RMSNorm];
  const int fake = kinds[NormKind::FakeLN] + kinds[NormKind::FakeRMSNorm];
  const int all = static_cast<int>(sites.size());
  const std::string total = std::to_string(all);
  // LayerNorm families remove into FakeLN, RMSNorm families into FakeRMSNorm.
  const std::string fakeName =
      rmsNorm > 0 || config.norms.at(sites.back()).kind == NormKind::FakeRMSNorm ? "FakeRMSNorm" : "FakeLN";
  if (config.folded) return "LN-free (folded)";
  if ((layerNorm == all || rmsNorm == all) && config.shape.layerNormEpsilon >= kLayerNormFreeEpsilon)
    return "LN-free (standard form: " + std::string(layerNorm == all ? "LayerNorm" : "RMSNorm") +
           " with a huge ε)";
  if (layerNorm == all) return "LayerNorm";
  if (rmsNorm == all) return "RMSNorm";
  if (fake == all) return "LN-free (" + fakeName + " at all " + total + " sites)";
  if (config.norms.isLayerNormFree()) return "LN-free";
  const std::string ramps = ramping > 0 ? ", " + std::to_string(ramping) + " ramping" : "";
  // The family's norm with some sites fake: a removal under way.
  if (fake + ramping + layerNorm == all || fake + ramping + rmsNorm == all)
    return std::to_string(fake) + " of " + total + " sites " + fakeName + ramps;
  // Any other mix (sites edited by hand, a scaling treatment): each kind with its count.
  std::string mix;
  for (const auto& [kind, count] : kinds)
    if (count > 0) mix += (mix.empty() ? "" : ", ") + std::to_string(count) + " " + displayName(kind);
  return mix + ramps;
}

}  // namespace nf

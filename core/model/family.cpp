#include "model/family.h"

#include <limits>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "io/atomic_file.h"

namespace nf {

extern const ModelFamily kGpt2Family;     // model/gpt2.cpp
extern const ModelFamily kGptNeoXFamily;  // model/gpt_neox.cpp
extern const ModelFamily kLlamaFamily;    // model/llama.cpp
extern const ModelFamily kQwen2Family;    // model/llama.cpp

namespace {

template <typename T>
T convert(const nlohmann::json& value, const std::string& key, const std::string& source) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) throw FileError(source, key + " must be true or false, got " + value.dump());
    return value.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    const bool fits =
        value.is_number_integer() &&
        (value.is_number_unsigned() ? value.get<uint64_t>() <= uint64_t(std::numeric_limits<T>::max())
                                    : value.get<int64_t>() >= std::numeric_limits<T>::min() &&
                                          value.get<int64_t>() <= std::numeric_limits<T>::max());
    if (!fits) throw FileError(source, key + " must be an integer that fits in 32 bits, got " + value.dump());
    return value.get<T>();
  } else {
    if (!value.is_number()) throw FileError(source, key + " must be a number, got " + value.dump());
    return value.get<T>();
  }
}

}  // namespace

template <typename T>
T ConfigReader::required(const char* key) const {
  if (!m_config.contains(key)) throw FileError(m_source, std::string("missing required field ") + key);
  return convert<T>(m_config[key], key, m_source);
}

template <typename T>
T ConfigReader::optional(const char* key, T fallback) const {
  if (!m_config.contains(key)) return fallback;
  // GPT-NeoX's use_parallel_residual: None is the sequential residual. A number's null is convert's error.
  if constexpr (std::is_same_v<T, bool>)
    if (m_config[key].is_null()) return false;
  return convert<T>(m_config[key], key, m_source);
}

template <typename T>
T ConfigReader::nullable(const char* key, T fallback) const {
  if (!m_config.contains(key) || m_config[key].is_null()) return fallback;
  return convert<T>(m_config[key], key, m_source);
}

template int ConfigReader::required<int>(const char*) const;
template double ConfigReader::optional<double>(const char*, double) const;
template bool ConfigReader::optional<bool>(const char*, bool) const;
template int ConfigReader::nullable<int>(const char*, int) const;

std::optional<int> ConfigReader::either(const char* key, const char* alias) const {
  std::optional<int> found, aliased;
  if (m_config.contains(key) && !m_config[key].is_null()) found = convert<int>(m_config[key], key, m_source);
  if (m_config.contains(alias) && !m_config[alias].is_null())
    aliased = convert<int>(m_config[alias], alias, m_source);
  if (found && aliased && *found != *aliased)
    throw FileError(m_source, std::string(key) + " = " + std::to_string(*found) + " and " + alias + " = " +
                                  std::to_string(*aliased) + " disagree (Hugging Face reads " + alias +
                                  " as " + key + "): which one the model has is unclear");
  return found ? found : aliased;
}

int ConfigReader::endOfText(int vocabSize, std::optional<int> familyDefault) const {
  const nlohmann::json* id = m_config.contains("eos_token_id") ? &m_config["eos_token_id"] : nullptr;
  if (id && id->is_array() && !id->empty()) id = &(*id)[0];  // LLaMA 3 lists several
  if (!id || id->is_null())
    return familyDefault && *familyDefault < vocabSize ? *familyDefault : vocabSize - 1;
  return convert<int>(*id, "eos_token_id", m_source);
}

void ConfigReader::requireValue(const char* key, const std::string& value, const std::string& why) const {
  if (!m_config.contains(key) || m_config[key] == value) return;
  throw FileError(m_source, std::string(key) + " " + m_config[key].dump() + " is not supported (only \"" +
                                value + "\": " + why + ")");
}

double ConfigReader::rotary(std::initializer_list<const char*> keys, const char* parameter,
                            double fallback) const {
  if (m_config.contains("rope_scaling") && !m_config["rope_scaling"].is_null())
    throw FileError(m_source, "rope_scaling " + m_config["rope_scaling"].dump() +
                                  " is not supported (only unscaled rotary embeddings)");
  std::optional<double> found;
  std::string foundAt;
  auto consider = [&](const nlohmann::json& value, const std::string& name) {
    if (value.is_null()) return;
    const double v = convert<double>(value, name, m_source);
    if (found && *found != v)
      throw FileError(m_source, foundAt + " = " + nlohmann::json(*found).dump() + " and " + name + " = " +
                                    value.dump() +
                                    " disagree: which one the model was trained with is unclear");
    found = v, foundAt = name;
  };
  for (const char* key : keys)
    if (m_config.contains(key)) consider(m_config[key], key);
  if (m_config.contains("rope_parameters") && !m_config["rope_parameters"].is_null()) {
    const nlohmann::json& p = m_config["rope_parameters"];
    if (!p.is_object()) throw FileError(m_source, "rope_parameters must be an object, got " + p.dump());
    // The kind first: a scaled kind's own fields (factor, …) are not what is wrong with it.
    if (p.contains("rope_type") && p["rope_type"] != "default")
      throw FileError(m_source, "rope_parameters.rope_type " + p["rope_type"].dump() +
                                    " is not supported (only \"default\": unscaled rotary embeddings)");
    for (const auto& [name, value] : p.items())
      if (name != "rope_type" && name != "rope_theta" && name != "partial_rotary_factor")
        throw FileError(m_source, "rope_parameters." + name +
                                      " is not supported (only rope_type \"default\", rope_theta and "
                                      "partial_rotary_factor)");
    if (p.contains(parameter)) consider(p[parameter], std::string("rope_parameters.") + parameter);
  }
  return found.value_or(fallback);
}

const std::vector<const ModelFamily*>& modelFamilies() {
  static const std::vector<const ModelFamily*> families = {&kGpt2Family, &kGptNeoXFamily, &kLlamaFamily,
                                                           &kQwen2Family};
  return families;
}

NormState nativeNorms(const ModelShape& shape) {
  return NormState(shape.nLayer, familyNamed(shape.family).norm);
}

const ModelFamily& familyNamed(const std::string& name) {
  for (const ModelFamily* f : modelFamilies())
    if (f->name == name) return *f;
  throw std::invalid_argument("no model family is called '" + name + "'");
}

std::vector<std::string> standardShapeNames() {
  std::vector<std::string> names;
  for (const ModelFamily* f : modelFamilies())
    for (const StandardShape& s : f->standardShapes()) names.push_back(s.name);
  return names;
}

ModelShape standardShape(const std::string& name) {
  for (const ModelFamily* f : modelFamilies())
    for (const StandardShape& s : f->standardShapes())
      if (s.name == name) return s.shape;
  std::string known;
  for (const std::string& n : standardShapeNames()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown shape '" + name + "' (known: " + known + ")");
}

const ModelFamily& familyOfConfig(const nlohmann::json& config, const std::string& source) {
  if (config.contains("model_type") && !config["model_type"].is_string())  // the families read it as one
    throw FileError(source, "model_type must be a string, got " + config["model_type"].dump());
  const std::string type = config.value("model_type", "");
  if (type.rfind(kNormFreeModelType, 0) == 0) {
    if (!config.contains("normfree"))
      throw FileError(source, "model_type '" + type + "' without the \"normfree\" block that says its norms");
    nlohmann::json family = config;
    family["model_type"] = type.substr(std::string(kNormFreeModelType).size());
    return familyOfConfig(family, source);
  }
  for (const ModelFamily* f : modelFamilies())
    if (f->claims(config)) return *f;
  std::string known;
  for (const ModelFamily* f : modelFamilies()) known += (known.empty() ? "" : ", ") + f->name;
  throw FileError(source,
                  (type.empty() ? std::string("a config without model_type") : "model_type '" + type + "'") +
                      " is not a supported model family (supported: " + known + ")");
}

}  // namespace nf

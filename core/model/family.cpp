#include "model/family.h"

#include <stdexcept>

#include "io/atomic_file.h"

namespace nf {

extern const ModelFamily kGpt2Family;  // model/gpt2.cpp

const std::vector<const ModelFamily*>& modelFamilies() {
  static const std::vector<const ModelFamily*> families = {&kGpt2Family};
  return families;
}

const ModelFamily& familyNamed(const std::string& name) {
  for (const ModelFamily* f : modelFamilies())
    if (f->name == name) return *f;
  throw std::invalid_argument("no model family is called '" + name + "'");
}

const ModelFamily& familyOfConfig(const nlohmann::json& config, const std::string& source) {
  for (const ModelFamily* f : modelFamilies())
    if (f->claims(config)) return *f;
  std::string known;
  for (const ModelFamily* f : modelFamilies()) known += (known.empty() ? "" : ", ") + f->name;
  const std::string type = config.contains("model_type") && config["model_type"].is_string()
                               ? "model_type '" + config["model_type"].get<std::string>() + "'"
                               : "a config without model_type";
  throw FileError(source, type + " is not a supported model family (supported: " + known + ")");
}

}  // namespace nf

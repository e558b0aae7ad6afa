// A model family's Hugging Face layout: which config.json is its own, how the shape reads from and writes to
// it, which tensors the weights hold (names and shapes, in the order the family's module registers them) and
// which stored names are no parameters (buffers older checkpoints carry). Plain C++: model folders are read
// and written through it by the CLI and the GUI too. The family's module and these functions live in one
// file, model/<family>.cpp; to add a family, write that file and list its layout in family.cpp.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/config.h"

namespace nf {

struct ModelFamily {
  std::string name;  // ModelShape::family: "gpt2"
  // config.json is this family's (its model_type or architectures say so).
  bool (*claims)(const nlohmann::json& config);
  // Reads the shape's fields from config.json; throws FileError(source, …) for missing, malformed or
  // unsupported settings, naming them.
  void (*readShape)(const nlohmann::json& config, ModelShape& shape, const std::string& source);
  // Writes the fields Hugging Face's class for this family needs to load the folder without custom code.
  void (*writeShape)(const ModelShape& shape, nlohmann::ordered_json& config);
  std::vector<ParameterShape> (*parameterShapes)(const ModelShape& shape);
  // The parameter a stored tensor name holds, or "" for stored tensors that are no parameters.
  std::string (*canonicalName)(const std::string& storedName);
};

const std::vector<const ModelFamily*>& modelFamilies();
// The family of a shape; throws std::invalid_argument for a name no family has.
const ModelFamily& familyNamed(const std::string& name);
// The family that claims config.json; throws FileError(source, …) naming its model_type otherwise.
const ModelFamily& familyOfConfig(const nlohmann::json& config, const std::string& source);

}  // namespace nf

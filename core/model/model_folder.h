// A model folder in Hugging Face's layout: config.json plus model.safetensors, or sharded
// model-XXXXX-of-YYYYY.safetensors files listed by model.safetensors.index.json.
// Plain types only: the GUI reads this header.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "model/config.h"

namespace nf {

struct SiteSummary {
  std::string site;  // "LN_qk.0", ..., "LN_f"
  std::string kind;  // "layernorm", "fakeln", ...
  double scale = 1, scalePos0 = 1;
  bool pos0Treatment = false, eotTreatment = false;
  double realMix = 0;  // a fake site's share of the real norm during an interpolation ramp
};

struct ModelSummary {
  std::string folder;
  ModelShape shape;  // config.json's: the family, the sizes and the building blocks
  int64_t parameterCount = 0;
  uint64_t weightBytes = 0;
  std::vector<std::string> weightFiles;
  std::map<std::string, int> storedDTypes;  // dtype name → number of tensors stored in it
  bool layerNormFree = false;  // no site divides per token (or the standard form's ε swamps every variance)
  std::string norms;  // normSummary: "LN-free (standard form: …)", "0 of 13 sites FakeLN, 13 ramping"
  std::vector<SiteSummary> sites;
};

// Reads config.json and validates every weight file's header against it without loading the weights,
// so it is instant even for GPT-2 XL. Throws FileError naming the file and the problem.
ModelSummary inspectModelFolder(const std::string& folder);
std::string summaryToJson(const ModelSummary& summary);  // pretty-printed

// Where every parameter of the folder's model is stored: the files are open (memory-mapped) and every
// tensor is checked against config.json (names, shapes, float dtypes, nothing missing, nothing extra).
struct WeightIndex {
  std::string folder;
  ModelConfig config;
  std::vector<std::unique_ptr<SafetensorsFile>> files;
  struct Entry {
    const SafetensorsFile* file;
    const TensorInfo* info;
  };
  std::map<std::string, Entry> tensors;  // canonical name → stored tensor
};
WeightIndex indexModelFolder(const std::string& folder);

// A fingerprint of the folder's weights (16 hex digits): FNV-1a over every weight file's name, size and
// safetensors header, and 16 evenly spaced 4 KiB samples of its tensor data. Reads ~70 KiB per file, so it
// is instant for any model, and tells a folder whose weights were replaced or retrained from the original
// (a change confined to bytes between the samples goes unseen: it is a guard, not a checksum).
std::string weightsFingerprint(const std::string& folder);

}  // namespace nf

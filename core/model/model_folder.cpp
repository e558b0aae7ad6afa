#include "model/model_folder.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "io/atomic_file.h"
#include "model/family.h"

namespace fs = std::filesystem;

namespace nf {
namespace {

// The weight files of a folder: model.safetensors, or the shards its index names.
std::vector<std::string> weightFilePaths(const std::string& folder) {
  const fs::path dir(folder);
  if (fs::exists(dir / "model.safetensors")) return {(dir / "model.safetensors").string()};
  const fs::path indexPath = dir / "model.safetensors.index.json";
  if (!fs::exists(indexPath)) {
    std::string hint = fs::exists(dir / "pytorch_model.bin")
                           ? " (pytorch_model.bin is not read: convert it to safetensors first)"
                           : "";
    throw FileError(folder, "no model.safetensors or model.safetensors.index.json" + hint);
  }
  nlohmann::json index;
  try {
    index = nlohmann::json::parse(readTextFile(indexPath.string()));
  } catch (const nlohmann::json::exception& e) {
    throw FileError(indexPath.string(), std::string("not valid JSON: ") + e.what());
  }
  if (!index.contains("weight_map") || !index["weight_map"].is_object())
    throw FileError(indexPath.string(), "missing the weight_map object");
  std::set<std::string> shards;
  for (auto& [name, file] : index["weight_map"].items()) {
    if (!file.is_string())
      throw FileError(indexPath.string(), "weight_map entry '" + name + "' is not a file name");
    const std::string shard = file.get<std::string>();
    // A NUL would open the name cut at it (and cut the error's text there too): control characters are
    // refused with the rest, the name shown as JSON.
    const bool control =
        std::any_of(shard.begin(), shard.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
    if (shard.find('/') != std::string::npos || control)
      throw FileError(indexPath.string(), "shard " + file.dump() + " is not a plain file name");
    shards.insert(shard);
  }
  std::vector<std::string> paths;
  for (auto& s : shards) paths.push_back((dir / s).string());
  return paths;
}

bool isFloat(DType d) { return d == DType::F32 || d == DType::F16 || d == DType::BF16 || d == DType::F64; }

// A tied model's stored lm_head.weight must be the embedding itself: a different head means config.json's
// tie_word_embeddings is wrong for these weights, and dropping the head would change every logit silently.
void requireCopyOfEmbedding(const WeightIndex& index, const WeightIndex::Entry& head) {
  // Every family lists its token embedding first (parameterShapes); another tensor of its shape (GPT-2's
  // wpe when n_positions equals the vocabulary) is not it.
  const std::string name = parameterShapes(index.config.shape).front().name;
  if (!index.tensors.count(name)) return;  // missing: refused with the other missing weights
  const WeightIndex::Entry& embedding = index.tensors.at(name);
  const TensorInfo &a = *head.info, &b = *embedding.info;
  // Hugging Face writes both alike: a head in another dtype is not that copy either.
  const bool same = a.dtype == b.dtype && a.shape == b.shape && a.end - a.begin == b.end - b.begin &&
                    std::memcmp(head.file->data(a), embedding.file->data(b), a.end - a.begin) == 0;
  const std::string dtypes = a.dtype == b.dtype ? std::string()
                                                : " (stored as " + dtypeName(a.dtype) +
                                                      ", the embedding as " + dtypeName(b.dtype) + ")";
  if (!same)
    throw FileError(head.file->path(),
                    "tensor '" + a.name + "' differs from the embedding '" + b.name + "' it should copy" +
                        dtypes +
                        ": config.json says tie_word_embeddings is true, so the head would "
                        "be dropped (false if the model has its own)");
}

}  // namespace

WeightIndex indexModelFolder(const std::string& folder) {
  WeightIndex index;
  index.folder = folder;
  if (!fs::is_directory(folder)) throw FileError(folder, "not a folder");
  const std::string configPath = (fs::path(folder) / "config.json").string();
  if (!fs::exists(configPath))
    throw FileError(configPath, "missing: a model folder needs config.json (Hugging Face GPT-2 layout)");
  index.config = loadConfigFile(configPath);

  const ModelFamily& family = familyNamed(index.config.shape.family);
  std::map<std::string, std::vector<int64_t>> expected;
  for (auto& p : parameterShapes(index.config.shape)) expected[p.name] = p.shape;

  WeightIndex::Entry storedHead{nullptr, nullptr};
  for (const std::string& path : weightFilePaths(folder)) {
    index.files.push_back(std::make_unique<SafetensorsFile>(SafetensorsFile::open(path)));
    const SafetensorsFile& file = *index.files.back();
    for (const TensorInfo& t : file.tensors()) {
      const std::string name = family.canonicalName(t.name);
      if (name.empty()) continue;
      // A tied checkpoint may still store lm_head.weight, a copy of the embedding that Hugging Face ignores;
      // so do we, once it is checked to be that copy (below).
      if (name == "lm_head.weight" && index.config.shape.tiedUnembedding) {
        storedHead = {&file, &t};
        continue;
      }
      auto fail = [&](const std::string& problem) {
        throw FileError(path, "tensor '" + t.name + "': " + problem);
      };
      auto want = expected.find(name);
      if (want == expected.end())
        fail("not part of a " + family.name +
             " model with n_layer=" + std::to_string(index.config.shape.nLayer) +
             (index.config.shape.tiedUnembedding ? "" : " and an untied unembedding"));
      if (!isFloat(t.dtype))
        fail("dtype " + dtypeName(t.dtype) + " is not a float type (F32, F16, BF16, F64)");
      if (t.shape != want->second)
        fail("shape " + shapeString(t.shape) + " does not match " + shapeString(want->second) +
             " from config.json");
      if (index.tensors.count(name)) fail("stored twice (also in " + index.tensors[name].file->path() + ")");
      index.tensors[name] = {&file, &t};
    }
  }
  if (storedHead.file) requireCopyOfEmbedding(index, storedHead);
  std::vector<std::string> missing;
  for (auto& [name, shape] : expected)
    if (!index.tensors.count(name)) missing.push_back(name);
  if (!missing.empty())
    throw FileError(folder,
                    "missing tensor '" + missing.front() + "'" +
                        (missing.size() > 1 ? " and " + std::to_string(missing.size() - 1) + " more" : ""));
  return index;
}

ModelSummary inspectModelFolder(const std::string& folder) {
  WeightIndex index = indexModelFolder(folder);
  const ModelShape& c = index.config.shape;
  ModelSummary s;
  s.folder = folder;
  s.shape = c;
  s.parameterCount = c.parameterCount();
  for (auto& f : index.files) s.weightFiles.push_back(fs::path(f->path()).filename().string());
  for (auto& [name, e] : index.tensors) {
    s.weightBytes += e.info->end - e.info->begin;
    s.storedDTypes[dtypeName(e.info->dtype)]++;
  }
  // The standard export (LayerNorm with ε = 10¹²) is LN-free though its sites keep their family's norm.
  s.layerNormFree = index.config.norms.isLayerNormFree() || c.layerNormEpsilon >= kLayerNormFreeEpsilon;
  s.norms = normSummary(index.config);
  for (SiteId id : index.config.norms.sites()) {
    const SiteNorm& n = index.config.norms.at(id);
    s.sites.push_back({siteName(id), normKindName(n.kind), n.scale, n.scalePos0, n.pos0Treatment,
                       n.eotTreatment, n.realMix});
  }
  return s;
}

std::string summaryToJson(const ModelSummary& s) {
  nlohmann::ordered_json j;
  j["folder"] = s.folder;
  const ModelShape& c = s.shape;
  j["family"] = c.family;
  j["n_layer"] = c.nLayer;
  j["n_head"] = c.nHead;
  j["n_embd"] = c.nEmbd;
  j["n_positions"] = c.nPositions;
  j["kv_heads"] = c.kvHeads();
  j["mlp_width"] = c.mlpHidden();
  j["rotary_dims"] = c.rotaryDims();  // per head; 0: learned positions
  j["parallel_residual"] = c.parallelResidual;
  j["vocab_size"] = c.vocabSize;
  j["layer_norm_epsilon"] = c.layerNormEpsilon;
  j["tied_unembedding"] = c.tiedUnembedding;
  j["parameters"] = s.parameterCount;
  j["weight_bytes"] = s.weightBytes;
  j["weight_files"] = s.weightFiles;
  j["stored_dtypes"] = s.storedDTypes;
  j["layernorm_free"] = s.layerNormFree;
  j["norms"] = s.norms;
  nlohmann::ordered_json sites = nlohmann::ordered_json::array();
  for (auto& site : s.sites) {
    nlohmann::ordered_json e = {{"site", site.site}, {"kind", site.kind}};
    if (site.kind == "fakeln" || site.kind == "fakerms") {
      e["scale"] = site.scale;
      if (site.pos0Treatment || site.eotTreatment) e["scale_pos0"] = site.scalePos0;
      e["pos0_treatment"] = site.pos0Treatment;
      e["eot_treatment"] = site.eotTreatment;
      if (site.realMix > 0) e["real_mix"] = site.realMix;  // still dividing per token, in part
    }
    sites.push_back(e);
  }
  j["sites"] = sites;
  return j.dump(2);
}

}  // namespace nf

namespace nf {

std::string weightsFingerprint(const std::string& folder) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
  auto mix = [&hash](const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 0x100000001b3ULL;
  };
  std::vector<std::string> paths = weightFilePaths(folder);
  std::sort(paths.begin(), paths.end());
  std::vector<char> sample(4096);
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FileError(path, "cannot be read");
    const std::string name = fs::path(path).filename().string();
    const auto size = static_cast<uint64_t>(fs::file_size(path));
    mix(name.data(), name.size());
    mix(&size, sizeof(size));
    uint64_t headerBytes = 0;
    in.read(reinterpret_cast<char*>(&headerBytes), sizeof(headerBytes));
    const uint64_t header = std::min<uint64_t>(headerBytes, size < 8 ? 0 : size - 8);
    std::vector<char> text(static_cast<std::size_t>(std::min<uint64_t>(header, uint64_t{100} << 20)));
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    mix(text.data(), static_cast<std::size_t>(in.gcount()));
    const uint64_t dataStart = std::min(size, 8 + header), dataBytes = size - dataStart;
    for (int i = 0; i < 16 && dataBytes > 0; ++i) {
      in.clear();
      in.seekg(static_cast<std::streamoff>(dataStart + dataBytes * i / 16));
      in.read(sample.data(), static_cast<std::streamsize>(sample.size()));
      mix(sample.data(), static_cast<std::size_t>(in.gcount()));
    }
  }
  std::ostringstream hex;
  hex << std::hex << std::setw(16) << std::setfill('0') << hash;
  return hex.str();
}

}  // namespace nf

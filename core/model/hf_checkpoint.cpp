#include "model/hf_checkpoint.h"

#include <torch/torch.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "model/family.h"
#include "model/model_folder.h"
#include "text/tokenizer.h"

namespace fs = std::filesystem;

namespace nf {
namespace {

torch::ScalarType torchType(DType d) {
  switch (d) {
    case DType::F64:
      return torch::kFloat64;
    case DType::F32:
      return torch::kFloat32;
    case DType::F16:
      return torch::kFloat16;
    case DType::BF16:
      return torch::kBFloat16;
    default:
      throw std::invalid_argument("dtype " + dtypeName(d) + " is not a float type");
  }
}

// A CPU tensor holding a copy of the stored bytes (copied so the mapping can be closed and alignment is
// right).
torch::Tensor readTensor(const SafetensorsFile& file, const TensorInfo& info) {
  torch::Tensor t = torch::empty(info.shape, torch::TensorOptions().dtype(torchType(info.dtype)));
  std::memcpy(t.data_ptr(), file.data(info), info.end - info.begin);
  return t;
}

// A NaN or infinity in the weights makes every analysis quietly wrong (a DLA error of 0 %, no sinks) or
// crashes it, so it is refused where it enters, by tensor.
void requireFinite(const torch::Tensor& t, const SafetensorsFile& file, const TensorInfo& info) {
  const torch::Tensor finite = torch::isfinite(t);
  if (finite.all().item<bool>()) return;
  const int64_t bad = t.numel() - finite.sum().item<int64_t>();
  std::string message = "tensor '" + info.name + "' holds " + std::to_string(bad) +
                        " non-finite values (NaN or infinite): every result of this model would be wrong";
  if (info.dtype == DType::F64) message += " (stored as F64, with values beyond float32's range, ±3.4e38)";
  if (info.dtype == DType::F16)
    message +=
        " (stored as F16, whose largest value is 65504: save it as F32 or BF16 — an exported "
        "standard form's norm weights need that)";
  throw FileError(file.path(), message);
}

}  // namespace

CausalLM loadModel(const std::string& folder, torch::Device device) {
  WeightIndex index = indexModelFolder(folder);
  CausalLM model =
      makeModel(index.config.shape, /*initialize=*/false);  // every parameter is overwritten below
  model->norms() = index.config.norms;
  torch::NoGradGuard noGrad;
  for (auto& item : model->named_parameters()) {
    const auto& entry = index.tensors.at(item.key());
    // Checked as the model will hold it: an F64 value past float32's range turns infinite in the copy.
    const torch::Tensor stored = readTensor(*entry.file, *entry.info).to(item.value().scalar_type());
    requireFinite(stored, *entry.file, *entry.info);
    item.value().copy_(stored);
  }
  model->to(device);
  model->eval();
  return model;
}

void saveModel(CausalLMImpl& model, const std::string& folder, const SaveOptions& options) {
  if (options.dtype != DType::F32 && options.dtype != DType::F16 && options.dtype != DType::BF16)
    throw std::invalid_argument("models are saved as F32, F16 or BF16, not " + dtypeName(options.dtype));
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw FileError(folder, "cannot create folder: " + ec.message());
  const fs::path dir(folder);

  const std::string basePrefix = familyNamed(model.config().family).basePrefix;
  // CPU, contiguous, in the target dtype; kept alive until written.
  std::vector<torch::Tensor> storage;
  std::vector<TensorBlob> blobs;
  for (auto& item : model.named_parameters()) {
    torch::Tensor t = item.value().detach().to(torch::kCPU, torchType(options.dtype)).contiguous();
    storage.push_back(t);
    // An untied head is not the base model's: it keeps its bare name. Beside it the base model's names are
    // always prefixed, as save_pretrained writes them: transformers refuses bare base names beside a bare
    // lm_head.weight ("The state dictionary … is corrupted").
    const bool untied = !model.config().tiedUnembedding;
    const bool head = untied && item.value().is_same(model.unembedding());
    const bool prefixed = (options.basePrefix || untied) && !head;
    blobs.push_back(
        {(prefixed ? basePrefix : "") + item.key(), options.dtype, t.sizes().vec(), t.data_ptr()});
  }

  // Hugging Face refuses safetensors files without format metadata.
  std::map<std::string, std::string> metadata = {{"format", "pt"}};
  if (!options.checkpointId.empty()) metadata[kCheckpointIdKey] = options.checkpointId;
  uint64_t total = 0;
  for (auto& b : blobs) total += blobBytes(b);
  const fs::path single = dir / "model.safetensors", indexPath = dir / "model.safetensors.index.json";

  std::vector<fs::path> stale;
  if (options.maxShardBytes == 0 || total <= options.maxShardBytes) {
    writeSafetensors(single.string(), blobs, metadata);
    if (fs::exists(indexPath)) {
      for (auto& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("model-", 0) == 0 && entry.path().extension() == ".safetensors")
          stale.push_back(entry.path());
      }
      stale.push_back(indexPath);
    }
  } else {
    std::vector<std::vector<TensorBlob>> shards(1);
    uint64_t shardBytes = 0;
    for (auto& b : blobs) {
      if (shardBytes > 0 && shardBytes + blobBytes(b) > options.maxShardBytes) {
        shards.emplace_back();
        shardBytes = 0;
      }
      shards.back().push_back(b);
      shardBytes += blobBytes(b);
    }
    char name[64];
    nlohmann::ordered_json weightMap = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < shards.size(); ++i) {
      std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", i + 1, shards.size());
      writeSafetensors((dir / name).string(), shards[i], metadata);
      for (auto& b : shards[i]) weightMap[b.name] = name;
    }
    nlohmann::ordered_json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weightMap}};
    writeFileAtomic(indexPath.string(), index.dump(2) + "\n");
    if (fs::exists(single)) stale.push_back(single);
    for (auto& entry : fs::directory_iterator(dir)) {  // shards of an earlier, differently sharded save
      const std::string file = entry.path().filename().string();
      bool current = false;
      for (auto& [tensor, shard] : weightMap.items()) current = current || shard == file;
      if (file.rfind("model-", 0) == 0 && entry.path().extension() == ".safetensors" && !current)
        stale.push_back(entry.path());
    }
  }
  const char* torchDtype = options.dtype == DType::BF16  ? "bfloat16"
                           : options.dtype == DType::F16 ? "float16"
                                                         : "float32";
  writeFileAtomic((dir / "config.json").string(),
                  configToJson({model.config(), model.norms(), options.folded}, torchDtype));
  for (auto& p : stale) fs::remove(p, ec);
}

std::string saveModelBeside(CausalLMImpl& model, const std::string& folder, const std::string& companions,
                            const SaveOptions& options) {
  return writeFolderBeside(folder, [&](const std::string& tmp) {
    saveModel(model, tmp, options);
    copyTokenizerFiles(companions, tmp);
    keepTokenIds(companions, tmp);
  });
}

}  // namespace nf

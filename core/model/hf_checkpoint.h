// Loading and saving GPT-2 weights in Hugging Face's format (config.json + safetensors).
#pragma once
#include <cstdint>
#include <string>

#include "io/safetensors.h"
#include "model/causal_lm.h"

namespace nf {

// Loads config.json (with our norm state, if any) and the weights; F32, F16, BF16 and F64 are converted to
// float32. Names with or without "transformer." load the same. Throws FileError naming file and tensor.
CausalLM loadModel(const std::string& folder, torch::Device device = torch::kCPU);

struct SaveOptions {
  DType dtype = DType::F32;  // F32, F16 or BF16
  // Names under the family's base prefix, as its save_pretrained writes them (ModelFamily::basePrefix:
  // GPT-2's "transformer.h.0…"). Always so beside an untied head, which transformers reads only so.
  bool basePrefix = false;
  uint64_t maxShardBytes = 0;  // 0: one model.safetensors; else shards + model.safetensors.index.json
  bool folded = false;         // recorded in config.json: FakeLN scales are folded into the weights
  // Recorded in every weight file's metadata ("normfree_checkpoint"): ties a checkpoint's weights to its
  // state.json and optimizer.pt (train/checkpoint.h). Empty: none.
  std::string checkpointId;
};
inline constexpr const char* kCheckpointIdKey = "normfree_checkpoint";

// Writes config.json and the weights atomically; creates the folder; removes weight files of the other
// layout (single vs sharded) left by an earlier save so the folder is never ambiguous.
void saveModel(CausalLMImpl& model, const std::string& folder, const SaveOptions& options = {});

// A model folder readers can use on its own (a run's final/, an export): saved under a temporary name beside
// `folder` ("<folder>.tmp-<pid>") with the tokenizer files and token ids of the model folder `companions`,
// and that name returned for the caller to rename in whole (replaceFolder, replaceFolders in
// io/atomic_file.h), since readers take a folder with config.json as complete. A failure removes the
// temporary and throws (a FileError naming `folder` for the file system's).
std::string saveModelBeside(CausalLMImpl& model, const std::string& folder, const std::string& companions,
                            const SaveOptions& options = {});

}  // namespace nf

// How much memory one training step of a model of any family needs, from its shape alone (key/value heads,
// the MLP's kind and width, tied or untied unembedding, biases, the norms), and a plan that makes a run fit
// a device: the micro-batch × accumulation (keeping the preset's global batch exactly) and activation
// checkpointing.
// Plain C++ (no torch): the CLI's `plan` and `--fit` and the GUI's run setup ask it; the device's free memory
// comes from model/device_memory.h, or from the user when planning for a machine one is not on.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "model/config.h"
#include "train/settings.h"
#include "util/bytes.h"

namespace nf {

// Plan to this share of the device's free memory: the rest absorbs the estimate's error and whatever
// else allocates on the device while the run is going.
constexpr double kUsableMemoryFraction = 0.9;
// A micro-batch of this many tokens keeps a GPU busy; below it, activation checkpointing's extra forward
// pass (~1/3 more compute) is worth paying for a larger micro-batch, above it not.
constexpr int64_t kEfficientMicroBatchTokens = 8192;
// Added to the predicted peak: the caching allocator rounds and splits blocks (its reserved memory exceeds
// what is allocated by a few per cent), and kernels, cuBLAS and lazily loaded CUDA modules need room of
// their own.
constexpr int64_t kAllocatorSlackPercent = 5;
constexpr int64_t kWorkspaceBytes = int64_t{512} << 20;

// One training micro-batch, as far as memory is concerned.
struct StepShape {
  ModelShape model;
  int64_t microBatch = 1;       // sequences
  int64_t context = 1024;       // tokens per sequence
  bool bf16 = false;            // CUDA autocast: matmul outputs in bf16; weights, gradients, AdamW in fp32
  bool fusedAttention = false;  // scaled-dot-product attention kernel: no T×T matrix stored
  bool activationCheckpointing = false;
  // A removal run: LN_qk and LN_v of a block are in different states between their events, so ln_1 is
  // applied twice (pretrain and finetune apply it once).
  bool removal = true;
  // The loss over blocks of this many rows (train/cross_entropy.h), never the whole logits; 0: over the
  // whole logits. plannedLossBlockRows says which a run takes.
  int64_t lossBlockRows = 0;
};

// Bytes, per term. The terms held all run long add up; the others come and go within a step (see total).
struct MemoryEstimate {
  int64_t parameters = 0;
  int64_t weights = 0;       // fp32 master weights, 4 bytes per parameter
  int64_t gradients = 0;     // fp32, 4 bytes per parameter
  int64_t optimizer = 0;     // AdamW's two moments, fp32, 8 bytes per parameter
  int64_t weightCopies = 0;  // bf16 casts of the matmul weights: all held as forward returns
  int64_t activations = 0;   // what the forward pass keeps for backward, in all blocks and around them
  // One block in backward: its gradients' temporaries (and, with checkpointing, its recomputed activations).
  int64_t blockWorkingSet = 0;
  // The loss: over whole logits, at the start of backward, the logits, log-softmax and both their
  // gradients; in blocks, at the end of forward, one block's logits and the gradients it keeps for backward.
  int64_t logits = 0;
  int64_t optimizerStep = 0;  // temporaries of the AdamW update (after backward: no activations by then)
  int64_t peakAllocated = 0;  // what the allocator's peak (peakDeviceMemory) should read
  int64_t margin = 0;         // kAllocatorSlackPercent of the peak (rounded up) + kWorkspaceBytes
  int64_t total = 0;          // peakAllocated + margin: what the device must have free
};

// Throws std::invalid_argument for a micro-batch or context below 1.
MemoryEstimate estimateTrainingMemory(const StepShape& step);

struct PlanRequest {
  ModelShape model;
  int64_t globalBatch = 1;  // sequences per optimizer step: the preset's micro-batch × accumulation
  int64_t context = 1024;
  bool bf16 = false;
  bool fusedAttention = false;
  bool removal = true;
  int64_t lossBlockRows = 0;   // as StepShape's
  int64_t availableBytes = 0;  // the device's free memory
};

struct MemoryPlan {
  bool fits = false;
  std::string reason;      // why it does not fit, or why this micro-batch and checkpointing were chosen
  int64_t microBatch = 1;  // divides the global batch; when nothing fits, the smallest step (1, checkpointed)
  int64_t accumulation = 1;
  bool activationCheckpointing = false;
  int64_t usableBytes = 0;  // availableBytes × kUsableMemoryFraction
  MemoryEstimate estimate;  // for the settings above
};

// The micro-batch is the larger of: the largest divisor of the global batch that fits without checkpointing,
// and the largest one up to the efficient size (kEfficientMicroBatchTokens) that fits with it; checkpointing
// only when it is that second one and strictly larger. So checkpointing is chosen only when it lets a larger
// micro-batch run while the micro-batch is still small, and more memory never gives a smaller micro-batch.
// Throws std::invalid_argument for a global batch or context below 1.
MemoryPlan planTrainingMemory(const PlanRequest& request);

// The request for a run's settings: its global batch (micro-batch × accumulation), context, mode and device
// (bf16 counts only on CUDA: autocast does nothing on the CPU), with availableBytes free there.
PlanRequest planRequest(const RunConfig& config, const ModelShape& shape, int64_t availableBytes);
// Sets the run's micro-batch, accumulation and activation checkpointing to the plan's.
void applyPlan(const MemoryPlan& plan, RunConfig& config);

// Whether a run on this device uses the fused attention kernel. CUDA builds link an official LibTorch 2.x,
// whose scaled-dot-product attention stores no T×T matrix; the CPU keeps the math path. (To be replaced by
// the model's own nf::fusedAttentionAvailable when the CUDA path provides it.)
bool plannedFusedAttention(const std::string& device);
// The rows of the blocked loss a run on this device takes for a `vocab`-wide unembedding, or 0 where it
// takes the whole logits: the CPU always takes blocks, CUDA as train/cross_entropy_choice.h says (blocks by
// default where the engine's CUDA kernels are built).
int64_t plannedLossBlockRows(const std::string& device, int64_t vocab);

// "80G", "80 GiB", "79.5GB", "512M", "1T", "1000000": a byte count, K/M/G/T as powers of 1024 (with or
// without "B" or "iB"). Throws std::invalid_argument for anything else.
int64_t parseByteSize(const std::string& text);

nlohmann::json toJson(const MemoryEstimate& estimate);
nlohmann::json toJson(const MemoryPlan& plan);

}  // namespace nf

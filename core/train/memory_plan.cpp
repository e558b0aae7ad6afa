#include "train/memory_plan.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "model/family.h"
#include "train/cross_entropy_choice.h"

namespace nf {
namespace {

constexpr int64_t kFloat32 = 4;

// The key and value projections' width: fewer heads than the queries' with grouped-query attention.
int64_t keyValueWidth(const ModelShape& c) { return int64_t{c.kvHeads()} * c.headDim(); }

// Matrices of the block's MLP: GELU's two, SwiGLU's three (gate, up, down).
int64_t mlpMatrices(const ModelShape& c) { return familyNamed(c.family).mlp == MlpKind::SwiGlu ? 3 : 2; }

// Parameters of one block that a matmul reads, and so autocast casts to bf16: the query, key, value and
// output projections and the MLP's matrices, with their biases (not the norms' γ, β: norms run in fp32).
int64_t blockMatmulParameters(const ModelShape& c) {
  const int64_t D = c.nEmbd, KV = keyValueWidth(c), F = c.mlpHidden(), M = mlpMatrices(c);
  int64_t n = D * (D + 2 * KV) + D * D + M * D * F;
  if (c.qkvBias) n += D + 2 * KV;
  if (c.attentionOutputBias) n += D;
  if (c.mlpBias) n += (M - 1) * F + D;
  return n;
}

// The unembedding's [V, D], the other matrix a matmul reads (the position embedding is looked up, and so is
// the token embedding unless it is tied, when it is this matrix).
int64_t unembeddingParameters(const ModelShape& c) { return int64_t{c.vocabSize} * c.nEmbd; }

int64_t largestParameterTensor(const ModelShape& c) {
  int64_t largest = 0;
  for (const ParameterShape& p : parameterShapes(c)) {
    int64_t n = 1;
    for (int64_t d : p.shape) n *= d;
    largest = std::max(largest, n);
  }
  return largest;
}

int64_t largestDivisorAtMost(const std::vector<int64_t>& ascendingDivisors, int64_t limit,
                             const std::function<bool(int64_t)>& fits) {
  int64_t best = 0;
  for (int64_t d : ascendingDivisors) {
    if (d > limit) break;
    if (fits(d)) best = d;  // memory grows with the micro-batch: the last that fits is the largest
  }
  return best;
}

std::vector<int64_t> divisorsOf(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d * d <= n; ++d)
    if (n % d == 0) {
      small.push_back(d);
      if (d * d != n) large.push_back(n / d);
    }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

std::string sequences(int64_t n) { return std::to_string(n) + (n == 1 ? " sequence" : " sequences"); }

}  // namespace

MemoryEstimate estimateTrainingMemory(const StepShape& s) {
  if (s.microBatch < 1 || s.context < 1)
    throw std::invalid_argument("memory estimate: micro-batch and context must be at least 1");
  const ModelShape& c = s.model;
  const int64_t B = s.microBatch, T = s.context, N = B * T;  // N: tokens in the micro-batch
  const int64_t D = c.nEmbd, H = c.nHead, V = c.vocabSize, L = c.nLayer, F = c.mlpHidden();
  // Bytes of a matmul's output, and of its input as the product keeps it: autocast computes in bf16.
  const int64_t a = s.bf16 ? 2 : kFloat32;

  MemoryEstimate e;
  e.parameters = c.parameterCount();
  e.weights = kFloat32 * e.parameters;
  e.gradients = kFloat32 * e.parameters;
  e.optimizer = 2 * kFloat32 * e.parameters;
  // Autocast's cache holds a bf16 copy of every matmul's weights until forward returns; without
  // checkpointing the graph keeps them through backward too. With it, the blocks ran without a graph: in
  // backward only the unembedding's copy is kept, and the copies of the one block being recomputed.
  e.weightCopies = s.bf16 ? 2 * (L * blockMatmulParameters(c) + unembeddingParameters(c)) : 0;
  const int64_t weightCopiesInBackward = !s.bf16 ? 0
                                         : s.activationCheckpointing
                                             ? 2 * (blockMatmulParameters(c) + unembeddingParameters(c))
                                             : e.weightCopies;

  // --- What one block's forward pass keeps for backward (each family's block()). The residual stream stays
  // fp32 (fp32 + bf16 promotes), so the norms' inputs are fp32; every matmul keeps its input at `a` bytes.
  // Norm: LayerNorm's kernel keeps its mean and 1/σ per position; RMSNorm, made of elementwise operations
  // (model/norm.cpp), also x/rms for γ's gradient.
  const int64_t normStatistics = 2 * kFloat32 * N;
  const bool rmsNorm = familyNamed(c.family).norm == NormKind::RMSNorm;
  const int64_t normKeeps = normStatistics + (rmsNorm ? kFloat32 * N * D : 0);
  int64_t block = 0;
  block += kFloat32 * N * D + normKeeps;  // ln_1's input: the block's input x
  block += a * N * D;                     // the q, k, v projections' input: ln_1's output (its bf16 cast)
  if (s.removal)  // LN_qk ≠ LN_v: ln_1 a second time, its own kept input (or FakeLN's x/s) and matmul input
    block += (kFloat32 + a) * N * D + normKeeps;
  // q, k, v: the fused kernel keeps them as views of the projection's output, the math path's products as
  // copies in the heads' layout; as large either way. Grouped-query attention repeats k and v for every
  // query head before attending, and rotary embeddings make new q and k: still three of [N, D].
  block += 3 * a * N * D;
  if (s.fusedAttention) {
    // The kernel's log-sum-exp per query. Its output, laid out [B, T, H, dh], is z below: merging the heads
    // is a view.
    block += kFloat32 * B * H * T;
  } else {
    // The pattern softmax(q·kᵀ/√d + mask), [B, H, T, T]: softmax keeps its output in fp32 (autocast runs
    // softmax in fp32) and, under bf16, pattern·v keeps the bf16 cast of it as well; masked_fill keeps the
    // causal mask, [T, T] bools shared by all heads.
    block += (s.bf16 ? kFloat32 + 2 : kFloat32) * B * H * T * T + T * T;
  }
  block += a * N * D;  // the output projection's input: z, the heads merged (math path: a copy)
  // ln_2's input: the residual after attention, or with a parallel residual (GPT-NeoX) the block's input,
  // kept already.
  block += (s.model.parallelResidual ? 0 : kFloat32 * N * D) + normKeeps;
  block += a * N * D;  // the MLP's input: ln_2's output
  // GELU: its input (the pre-activation [N, F]) and output (the down projection's input). SwiGLU: the
  // gate's output (SiLU's input), SiLU's output, the up projection's output and their product.
  block += (mlpMatrices(c) == 3 ? 4 : 2) * a * N * F;

  // --- Around the blocks: the token ids the embedding keeps, ln_f's input and statistics, the unembedding's
  // input. (The auxiliary loss keeps a few [B, T] tensors: negligible.)
  const int64_t aroundBlocks = 8 * N + kFloat32 * N * D + normKeeps + a * N * D;

  // --- One block in backward, transient: the gradient arriving at its output and the one leaving through its
  // input (fp32, like the stream), plus the larger of two phases. MLP: the gradients of GELU's output and
  // input (SwiGLU: of the product, of SiLU's output and of the gate's). Attention, math path: the gradients
  // of the pattern and of the scores, fp32 and alive together in softmax's backward (the forward pass's
  // scores, masked scores and fp32 cast need as much). Fused: dq, dk, dv and the kernel's fp32 dq
  // accumulator.
  const int64_t mlpBackward = (mlpMatrices(c) == 3 ? 3 : 2) * a * N * F;
  const int64_t attentionBackward =
      s.fusedAttention ? 3 * a * N * D + kFloat32 * N * D : 2 * kFloat32 * B * H * T * T;
  const int64_t blockGradients = 2 * kFloat32 * N * D + std::max(mlpBackward, attentionBackward);

  // Checkpointing keeps only each block's input and recomputes the block in backward: then one block's full
  // activations exist again next to its gradients.
  if (s.activationCheckpointing) {
    e.activations = L * kFloat32 * N * D + aroundBlocks;
    e.blockWorkingSet = block + blockGradients;
  } else {
    e.activations = L * block + aroundBlocks;
    e.blockWorkingSet = blockGradients;
  }

  // --- The loss over whole logits (CUDA with NF_CUDA_CROSS_ENTROPY=logits, or without the engine's CUDA
  // kernels), [N, V] each. CausalLMImpl::forward returns the logits cast to fp32; as it returns, the bf16
  // product (under bf16) still exists. The trainer holds the fp32 logits through backward; cross_entropy's
  // log-softmax keeps its fp32 output; at the start of backward the gradients of the log-softmax and of the
  // logits are made: four fp32 [N, V] at once.
  int64_t lossAtEndOfForward = (s.bf16 ? 2 + kFloat32 : kFloat32) * N * V;
  int64_t lossAtStartOfBackward = 4 * kFloat32 * N * V;
  int64_t lossHeld = kFloat32 * N * V;
  if (s.lossBlockRows > 0) {
    // In blocks (train/cross_entropy.h), all within forward: the gradients of the hidden states [N, D] and
    // of the unembedding [V, D] (fp32; the latter summed transposed, then copied once), kept for backward;
    // one block's logits in the products' type with, under bf16, LibTorch's float32 softmax of them (the
    // engine's row kernel needs none: there this errs high), and the unembedding's bf16 copy and a product
    // of its size.
    const int64_t R = std::min(N, s.lossBlockRows);
    lossHeld = kFloat32 * N * D + kFloat32 * V * D;
    lossAtEndOfForward = lossHeld + kFloat32 * V * D + (s.bf16 ? 2 + kFloat32 : kFloat32) * R * V +
                         (s.bf16 ? 2 * 2 * V * D : 0);
    lossAtStartOfBackward = lossHeld;
  }
  e.logits = std::max(lossAtEndOfForward, lossAtStartOfBackward);

  // LibTorch's AdamW updates one tensor at a time; its denominator sqrt(v)/√(1−β₂ᵗ) + ε takes two
  // temporaries the size of that tensor. (A multi-tensor AdamW would need up to 4 bytes per parameter.)
  e.optimizerStep = 2 * kFloat32 * largestParameterTensor(c);

  // Peak: the persistent terms, plus the largest of the moments of a step. As forward returns: every bf16
  // weight copy, the kept activations, the logits. At the start of backward: the logits' peak. Then one block
  // in backward, with only the held logits left of the logits' terms. After backward, with the activations
  // freed, the AdamW update.
  const int64_t endOfForward = e.weightCopies + e.activations + lossAtEndOfForward;
  const int64_t backward =
      weightCopiesInBackward + e.activations + std::max(lossAtStartOfBackward, lossHeld + e.blockWorkingSet);
  const int64_t forwardBackward = std::max(endOfForward, backward);
  e.peakAllocated = e.weights + e.gradients + e.optimizer + std::max(forwardBackward, e.optimizerStep);
  e.margin = (e.peakAllocated * kAllocatorSlackPercent + 99) / 100 + kWorkspaceBytes;
  e.total = e.peakAllocated + e.margin;
  return e;
}

MemoryPlan planTrainingMemory(const PlanRequest& r) {
  if (r.globalBatch < 1 || r.context < 1)
    throw std::invalid_argument("memory plan: global batch and context must be at least 1");
  MemoryPlan plan;
  plan.usableBytes = static_cast<int64_t>(
      std::floor(kUsableMemoryFraction * static_cast<double>(std::max<int64_t>(0, r.availableBytes))));
  auto estimate = [&](int64_t micro, bool checkpointing) {
    StepShape s;
    s.model = r.model;
    s.microBatch = micro;
    s.context = r.context;
    s.bf16 = r.bf16;
    s.fusedAttention = r.fusedAttention;
    s.activationCheckpointing = checkpointing;
    s.removal = r.removal;
    s.lossBlockRows = r.lossBlockRows;
    return estimateTrainingMemory(s);
  };
  auto fitsWith = [&](bool checkpointing) {
    return [&, checkpointing](int64_t micro) {
      return estimate(micro, checkpointing).total <= plan.usableBytes;
    };
  };

  const std::vector<int64_t> divisors = divisorsOf(r.globalBatch);
  // The smallest micro-batch (a divisor, so the global batch stays exact) of at least the efficient size.
  int64_t efficient = r.globalBatch;
  for (int64_t d : divisors)
    if (d * r.context >= kEfficientMicroBatchTokens) {
      efficient = d;
      break;
    }
  const int64_t without = largestDivisorAtMost(divisors, r.globalBatch, fitsWith(false));
  const int64_t with = largestDivisorAtMost(divisors, efficient, fitsWith(true));

  if (without == 0 && with == 0) {
    plan.fits = false;
    plan.microBatch = 1;
    plan.accumulation = r.globalBatch;
    plan.activationCheckpointing = true;
    plan.estimate = estimate(1, true);
    const MemoryEstimate& e = plan.estimate;
    const int64_t persistent = e.weights + e.gradients + e.optimizer;
    const std::string usable = formatBytes(plan.usableBytes) + " usable (" +
                               std::to_string(static_cast<int>(std::lround(kUsableMemoryFraction * 100))) +
                               "% of " + formatBytes(r.availableBytes) + " free)";
    if (persistent > plan.usableBytes)
      plan.reason = "the fp32 weights, gradients and AdamW state alone need " + formatBytes(persistent) +
                    " (16 bytes × " + std::to_string(e.parameters) + " parameters) of " + usable;
    else
      plan.reason = "even one sequence of " + std::to_string(r.context) +
                    " tokens with activation checkpointing needs " + formatBytes(e.total) + " of " + usable +
                    ": shorten the context or use a device with more memory";
    return plan;
  }

  plan.fits = true;
  plan.activationCheckpointing = with > without;
  plan.microBatch = std::max(with, without);
  plan.accumulation = r.globalBatch / plan.microBatch;
  plan.estimate = estimate(plan.microBatch, plan.activationCheckpointing);
  if (!plan.activationCheckpointing)
    plan.reason = plan.microBatch == r.globalBatch
                      ? "the whole global batch fits in one micro-batch without activation checkpointing"
                      : "the largest micro-batch that divides the global batch and fits without activation "
                        "checkpointing";
  else
    plan.reason =
        "without activation checkpointing " +
        (without == 0 ? std::string("not even one sequence fits") : "only " + sequences(without) + " fit") +
        "; with it " + sequences(plan.microBatch) + " (up to " + std::to_string(kEfficientMicroBatchTokens) +
        " tokens a micro-batch, where it pays)";
  return plan;
}

PlanRequest planRequest(const RunConfig& config, const ModelShape& shape, int64_t availableBytes) {
  const bool cuda = config.device.rfind("cuda", 0) == 0;
  PlanRequest r;
  r.model = shape;
  r.globalBatch = config.optimizer.microBatch * config.optimizer.accumulation;
  r.context = config.optimizer.context;
  r.bf16 = config.optimizer.bf16 && cuda;
  r.fusedAttention = plannedFusedAttention(config.device);
  r.removal = config.mode == TrainingMode::Remove;
  r.lossBlockRows = plannedLossBlockRows(config.device, shape.vocabSize);
  r.availableBytes = availableBytes;
  return r;
}

void applyPlan(const MemoryPlan& plan, RunConfig& config) {
  config.optimizer.microBatch = plan.microBatch;
  config.optimizer.accumulation = plan.accumulation;
  config.optimizer.activationCheckpointing = plan.activationCheckpointing;
}

bool plannedFusedAttention(const std::string& device) { return device.rfind("cuda", 0) == 0; }

int64_t plannedLossBlockRows(const std::string& device, int64_t vocab) {
  const bool cuda = device.rfind("cuda", 0) == 0;
  if (cuda && cudaCrossEntropy() == CudaCrossEntropy::Logits) return 0;
  return lossRowsPerBlock(std::numeric_limits<int64_t>::max(), vocab, !cuda);
}

int64_t parseByteSize(const std::string& text) {
  auto invalid = [&] {
    return std::invalid_argument("'" + text + "' is not a size (e.g. 80G, 79.5GiB, 512M, or bytes)");
  };
  std::size_t end = 0;
  double value = 0;
  try {
    value = std::stod(text, &end);
  } catch (const std::exception&) {
    throw invalid();
  }
  std::string unit = text.substr(end);
  unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
  for (char& ch : unit) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (unit.size() == 3 && unit.compare(1, 2, "IB") == 0)
    unit.resize(1);  // "GiB" → "G"
  else if (unit.size() == 2 && unit.back() == 'B')
    unit.pop_back();  // "GB" → "G"; a lone "B" stays: bytes
  double scale = 1;
  if (unit == "K")
    scale = 1024.0;
  else if (unit == "M")
    scale = 1024.0 * 1024;
  else if (unit == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "T")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty() && unit != "B")
    throw invalid();
  const double bytes = value * scale;
  if (!std::isfinite(bytes) || bytes < 0 || bytes > 9.0e18) throw invalid();
  return static_cast<int64_t>(std::llround(bytes));
}

nlohmann::json toJson(const MemoryEstimate& e) {
  return {{"parameters", e.parameters},
          {"weights", e.weights},
          {"gradients", e.gradients},
          {"optimizer", e.optimizer},
          {"weight_copies", e.weightCopies},
          {"activations", e.activations},
          {"block_working_set", e.blockWorkingSet},
          {"logits", e.logits},
          {"optimizer_step", e.optimizerStep},
          {"peak_allocated", e.peakAllocated},
          {"margin", e.margin},
          {"total", e.total}};
}

nlohmann::json toJson(const MemoryPlan& p) {
  return {{"fits", p.fits},
          {"reason", p.reason},
          {"micro_batch", p.microBatch},
          {"accumulation", p.accumulation},
          {"activation_checkpointing", p.activationCheckpointing},
          {"usable_bytes", p.usableBytes},
          {"memory_bytes", toJson(p.estimate)}};
}

}  // namespace nf

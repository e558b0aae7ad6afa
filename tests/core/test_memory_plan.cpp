// The memory planner: its arithmetic on shapes small enough to count by hand, and the plan's promises (the
// global batch kept exactly, more memory never a smaller micro-batch, checkpointing only when it helps).
#include <limits>
#include <nlohmann/json.hpp>

#include "check.h"
#include "model/family.h"
#include "train/cross_entropy_choice.h"
#include "train/memory_plan.h"
#include "train/settings.h"

using namespace nf;
using namespace nf::test;

namespace {

constexpr int64_t GiB = int64_t{1} << 30;

ModelShape gpt2Small() { return ModelShape{}; }  // the defaults: 12 layers, 12 heads, 768, 1024, 50257, tied

ModelShape gpt2Xl() {
  ModelShape c;
  c.nLayer = 48;
  c.nHead = 25;
  c.nEmbd = 1600;
  return c;
}

// 2 layers, d_model 8, 2 heads, 11 tokens, 4 positions: 1880 parameters.
ModelShape handSized() {
  ModelShape c;
  c.nLayer = 2;
  c.nHead = 2;
  c.nEmbd = 8;
  c.nPositions = 4;
  c.vocabSize = 11;
  c.eotTokenId = 10;
  return c;
}

PlanRequest request(const ModelShape& model, int64_t globalBatch, int64_t context, int64_t available) {
  PlanRequest r;
  r.model = model;
  r.globalBatch = globalBatch;
  r.context = context;
  r.bf16 = true;
  r.fusedAttention = true;
  r.availableBytes = available;
  return r;
}

}  // namespace

TEST_CASE(gpt2_small_has_124439808_parameters_at_16_bytes_each) {
  StepShape s;
  s.model = gpt2Small();
  const MemoryEstimate e = estimateTrainingMemory(s);
  REQUIRE_EQ(e.parameters, 124439808);
  REQUIRE_EQ(e.weights, 4 * 124439808LL);
  REQUIRE_EQ(e.gradients, 4 * 124439808LL);
  REQUIRE_EQ(e.optimizer, 8 * 124439808LL);
  REQUIRE_EQ(e.weightCopies, 0);  // fp32: autocast makes no copies
}

TEST_CASE(the_logits_term_is_four_fp32_batch_by_tokens_by_vocab_tensors) {
  StepShape s;
  s.model = gpt2Small();
  s.microBatch = 32;
  s.context = 1024;
  s.bf16 = true;
  // The fp32 logits, the log-softmax and both gradients: 4 × 4 bytes × B·T·V, with bf16 too.
  REQUIRE_EQ(estimateTrainingMemory(s).logits, 16LL * 32 * 1024 * 50257);
}

TEST_CASE(fp32_math_attention_counted_by_hand) {
  StepShape s;
  s.model = handSized();
  s.microBatch = 3;
  s.context = 4;  // N = 12 tokens; N·D = 96 values
  s.removal = false;
  const MemoryEstimate e = estimateTrainingMemory(s);
  REQUIRE_EQ(e.parameters, 1880);  // 11·8 + 4·8 + 2·(12·64 + 13·8) + 2·8
  // One block, bytes: ln_1 input 384 + mean/rstd 96, c_attn input 384, q k v 1152, pattern 4·3·2·4·4 = 384
  // + mask 16, z 384, ln_2 input 384 + 96, c_fc input 384, MLP pre 1536, GELU output 1536 = 6736.
  // Around the blocks: token ids 96, ln_f input 384 + 96, unembedding input 384 = 960.
  REQUIRE_EQ(e.activations, 2 * 6736 + 960);
  // Residual gradients 2·384, then the larger phase: MLP 2·1536 over attention 2·384.
  REQUIRE_EQ(e.blockWorkingSet, 768 + 3072);
  REQUIRE_EQ(e.logits, 16 * 12 * 11);
  REQUIRE_EQ(e.optimizerStep, 2 * 4 * 256);  // AdamW's two temporaries of the largest tensor, c_fc's 8 × 32
  // 16 bytes per parameter, then the largest moment: backward (activations + the larger of the logits' peak
  // 2112 and the held logits 528 + the block's working set 3840), over the end of forward (activations +
  // the logits 528) and the AdamW update.
  REQUIRE_EQ(e.peakAllocated, 16 * 1880 + 14432 + (528 + 3840));
  REQUIRE_EQ(e.margin, 2444 + (int64_t{512} << 20));  // ⌈5% of 48880⌉ + 512 MiB
  REQUIRE_EQ(e.total, e.peakAllocated + e.margin);
}

TEST_CASE(bf16_fused_checkpointed_removal_counted_by_hand) {
  StepShape s;
  s.model = handSized();
  s.microBatch = 3;
  s.context = 4;
  s.bf16 = true;
  s.fusedAttention = true;
  s.activationCheckpointing = true;
  s.removal = true;
  const MemoryEstimate e = estimateTrainingMemory(s);
  // bf16 copies of the matmul weights as forward returns: 2 bytes × (2 blocks × (12·64 + 9·8) + the
  // unembedding 88). In backward only the unembedding's and the recomputed block's: 2 × (840 + 88).
  REQUIRE_EQ(e.weightCopies, 2 * (2 * 840 + 88));
  // Kept: each block's fp32 input (2 × 384) and the 768 around the blocks (ids 96, ln_f 480, its output 192).
  REQUIRE_EQ(e.activations, 2 * 384 + 768);
  // The recomputed block: ln_1 480, c_attn input 192, ln_1's second application 6·96 + 96, q k v 576, the
  // kernel's log-sum-exp 4·3·2·4, z (the kernel's output) 192, ln_2 480, c_fc input 192, MLP pre 768, GELU
  // 768 = 4416; its gradients: 768 + the MLP's 1536 (over the fused attention's 3·192 + 384).
  REQUIRE_EQ(e.blockWorkingSet, 4416 + 768 + 1536);
  // Backward (copies 1856 + activations + the held logits 528 + the block's 6720) over the end of forward
  // (copies 3536 + activations + the logits in bf16 and fp32, 6 · 132).
  REQUIRE_EQ(e.peakAllocated, 16 * 1880 + 1856 + 1536 + (528 + 6720));
}

TEST_CASE(math_attention_keeps_the_pattern_per_head_fused_does_not) {
  StepShape s;
  s.model = gpt2Small();
  s.microBatch = 8;
  s.context = 1024;
  s.bf16 = true;
  s.fusedAttention = false;
  const MemoryEstimate math = estimateTrainingMemory(s);
  s.fusedAttention = true;
  const MemoryEstimate fused = estimateTrainingMemory(s);
  // Per layer the math path keeps 6 bytes × B·H·T² (fp32 softmax + its bf16 cast) and the T×T mask; the
  // fused kernel keeps the log-sum-exp (fp32 [B, H, T]) instead.
  const int64_t B = 8, H = 12, T = 1024;
  REQUIRE_EQ(math.activations - fused.activations, 12 * (6 * B * H * T * T + T * T - 4 * B * H * T));
}

TEST_CASE(checkpointing_saves_memory_and_never_costs_more_for_a_real_model) {
  for (int64_t micro : {1, 4, 16}) {
    StepShape s;
    s.model = gpt2Xl();
    s.microBatch = micro;
    s.bf16 = true;
    s.fusedAttention = true;
    const int64_t without = estimateTrainingMemory(s).total;
    s.activationCheckpointing = true;
    REQUIRE_MSG(estimateTrainingMemory(s).total < without, "micro-batch " << micro);
  }
}

TEST_CASE(the_plan_keeps_the_global_batch_and_more_memory_never_shrinks_the_micro_batch) {
  for (int64_t global : {1, 7, 32, 504, 512}) {
    int64_t previousMicro = 0;
    for (int64_t gib = 1; gib <= 4096; gib = gib * 11 / 10 + 1) {
      const MemoryPlan p = planTrainingMemory(request(gpt2Small(), global, 1024, gib * GiB));
      if (!p.fits) {
        REQUIRE_MSG(previousMicro == 0, "fits at less memory but not at " << gib << " GiB");
        continue;
      }
      REQUIRE_EQ(p.microBatch * p.accumulation, global);
      REQUIRE_EQ(global % p.microBatch, 0);
      REQUIRE(p.estimate.total <= p.usableBytes);
      REQUIRE_MSG(p.microBatch >= previousMicro, "global " << global << ", " << gib << " GiB: micro-batch "
                                                           << p.microBatch << " after " << previousMicro);
      previousMicro = p.microBatch;
    }
    REQUIRE_MSG(previousMicro == global, "4 TiB should take the whole batch " << global << " at once");
  }
}

TEST_CASE(the_plan_uses_the_usable_fraction_of_free_memory) {
  const MemoryPlan p = planTrainingMemory(request(gpt2Small(), 512, 1024, 100 * GiB));
  REQUIRE_EQ(p.usableBytes, static_cast<int64_t>(kUsableMemoryFraction * 100 * GiB));
}

TEST_CASE(checkpointing_is_chosen_only_when_it_lets_a_larger_small_micro_batch_run) {
  const ModelShape xl = gpt2Xl();
  for (int64_t gib = 20; gib <= 200; gib += 2) {
    const MemoryPlan p = planTrainingMemory(request(xl, 504, 1024, gib * GiB));
    if (!p.fits) continue;
    // Without checkpointing, the micro-batch chosen would not fit, or it was chosen without.
    StepShape s;
    s.model = xl;
    s.microBatch = p.microBatch;
    s.bf16 = s.fusedAttention = true;
    const bool fitsWithout = estimateTrainingMemory(s).total <= p.usableBytes;
    if (p.activationCheckpointing) {
      REQUIRE_MSG(!fitsWithout,
                  gib << " GiB: checkpointing chosen although " << p.microBatch << " fits without");
      REQUIRE(p.microBatch <= 8);  // only up to the efficient size: 8 × 1024 tokens
    } else {
      REQUIRE(fitsWithout);
    }
  }
  // Plenty of memory: no checkpointing, the whole global batch per micro-batch.
  const MemoryPlan ample = planTrainingMemory(request(gpt2Small(), 32, 1024, 4096 * GiB));
  REQUIRE(ample.fits && !ample.activationCheckpointing && ample.microBatch == 32 && ample.accumulation == 1);
}

TEST_CASE(gpt2_xl_on_less_memory_turns_checkpointing_on) {
  // 40 GiB: the weights and AdamW state (23 GiB) leave room for one sequence of 1024 tokens without
  // checkpointing; with it, several.
  const MemoryPlan p = planTrainingMemory(request(gpt2Xl(), 504, 1024, 40 * GiB));
  REQUIRE_MSG(p.fits, p.reason);
  REQUIRE(p.activationCheckpointing);
  REQUIRE(p.microBatch > 1);
  REQUIRE_EQ(504 % p.microBatch, 0);
  REQUIRE_MSG(p.reason.find("with it") != std::string::npos, p.reason);
}

TEST_CASE(presets_on_an_80_gib_gpu) {
  // The gpt2 preset (32 × 16 of 1024 tokens), bf16 with fused attention: 32 sequences fit, 64 do not.
  const Preset& gpt2 = findPreset("gpt2");
  MemoryPlan p = planTrainingMemory(
      request(gpt2Small(), gpt2.optimizer.microBatch * gpt2.optimizer.accumulation, 1024, 80 * GiB));
  REQUIRE_MSG(p.fits && p.microBatch == 32 && p.accumulation == 16 && !p.activationCheckpointing, p.reason);
  // GPT-2 XL's preset (504 sequences per step) fits one 80 GiB GPU.
  const Preset& xl = findPreset("gpt2-xl");
  p = planTrainingMemory(
      request(gpt2Xl(), xl.optimizer.microBatch * xl.optimizer.accumulation, 1024, 80 * GiB));
  REQUIRE_MSG(p.fits && p.microBatch * p.accumulation == 504, p.reason);
}

TEST_CASE(does_not_fit_says_why) {
  // GPT-2 XL's 1.56 B parameters need 25 GB for weights, gradients and AdamW state alone.
  MemoryPlan p = planTrainingMemory(request(gpt2Xl(), 504, 1024, 16 * GiB));
  REQUIRE(!p.fits);
  REQUIRE_MSG(p.reason.find("weights, gradients and AdamW state alone need") != std::string::npos, p.reason);
  REQUIRE_MSG(p.reason.find("1557611200 parameters") != std::string::npos, p.reason);
  // Room for the state, not for one checkpointed sequence of 1024 tokens.
  p = planTrainingMemory(request(gpt2Xl(), 504, 1024, 30 * GiB));
  REQUIRE(!p.fits);
  REQUIRE_MSG(p.reason.find("even one sequence of 1024 tokens") != std::string::npos, p.reason);
  REQUIRE(p.microBatch == 1 && p.accumulation == 504 && p.activationCheckpointing);
  REQUIRE_THROWS_WITH(planTrainingMemory(request(gpt2Small(), 0, 1024, GiB)), "global batch");
}

TEST_CASE(sizes_read_and_written) {
  REQUIRE_EQ(parseByteSize("80G"), 80 * GiB);
  REQUIRE_EQ(parseByteSize("80GiB"), 80 * GiB);
  REQUIRE_EQ(parseByteSize("80 GB"), 80 * GiB);
  REQUIRE_EQ(parseByteSize("79.5g"), static_cast<int64_t>(79.5 * GiB));
  REQUIRE_EQ(parseByteSize("512M"), int64_t{512} << 20);
  REQUIRE_EQ(parseByteSize("1T"), int64_t{1} << 40);
  REQUIRE_EQ(parseByteSize("1000"), 1000);
  REQUIRE_EQ(parseByteSize("1000B"), 1000);
  for (const char* bad : {"", "G", "80X", "-1G", "nan", "80GG"})
    REQUIRE_THROWS_WITH(parseByteSize(bad), "is not a size");
  REQUIRE_EQ(formatBytes(12), "12 B");
  REQUIRE_EQ(formatBytes(512LL << 20), "512 MiB");
  REQUIRE_EQ(formatBytes(static_cast<int64_t>(41.63 * GiB)), "41.6 GiB");
  REQUIRE_EQ(formatBytes(3 * GiB / 2), "1.50 GiB");
}

TEST_CASE(fused_attention_is_planned_on_cuda_only) {
  REQUIRE(plannedFusedAttention("cuda"));
  REQUIRE(plannedFusedAttention("cuda:1"));
  REQUIRE(!plannedFusedAttention("cpu"));
}

TEST_CASE(the_plan_as_json) {
  const nlohmann::json j = toJson(planTrainingMemory(request(gpt2Small(), 512, 1024, 80 * GiB)));
  REQUIRE_EQ(j["micro_batch"], 32);
  REQUIRE_EQ(j["accumulation"], 16);
  REQUIRE_EQ(j["activation_checkpointing"], false);
  REQUIRE_EQ(j["memory_bytes"]["parameters"], 124439808);
  REQUIRE(j["memory_bytes"]["total"].get<int64_t>() <= j["usable_bytes"].get<int64_t>());
}

TEST_MAIN()

// Every published shape `plan --shape` knows has the parameter count its makers publish (the model cards'
// and Hugging Face's num_parameters; GPT-2's with the position embedding, Pythia's with its untied head).
TEST_CASE(published_shapes_have_their_published_parameter_counts) {
  const std::vector<std::pair<std::string, int64_t>> published = {{"gpt2", 124439808},
                                                                  {"gpt2-medium", 354823168},
                                                                  {"gpt2-large", 774030080},
                                                                  {"gpt2-xl", 1557611200},
                                                                  {"pythia-70m", 70426624},
                                                                  {"pythia-160m", 162322944},
                                                                  {"pythia-410m", 405334016},
                                                                  {"pythia-1b", 1011781632},
                                                                  {"pythia-1.4b", 1414647808},
                                                                  {"smollm2-135m", 134515008},
                                                                  {"smollm2-360m", 361821120},
                                                                  {"smollm2-1.7b", 1711376384},
                                                                  {"tinyllama-1.1b", 1100048384},
                                                                  {"llama-3.2-1b", 1235814400},
                                                                  {"qwen2.5-0.5b", 494032768},
                                                                  {"qwen2.5-1.5b", 1543714304}};
  REQUIRE_EQ(standardShapeNames().size(), published.size());
  for (const auto& [name, count] : published) {
    const ModelShape shape = standardShape(name);
    shape.validate(name);
    StepShape s;
    s.model = shape;
    REQUIRE_MSG(estimateTrainingMemory(s).parameters == count, name);
  }
  REQUIRE_THROWS_WITH(standardShape("gpt3"), "unknown shape 'gpt3'", "smollm2-135m");
}

// Under bf16, autocast copies every weight a matmul reads: all parameters but the norms' γ and β, GPT-2's
// position embedding and, when the unembedding is untied, the token embedding (looked up, not multiplied).
// Counted from each family's architecture for every published shape.
TEST_CASE(bf16_weight_copies_are_every_matmul_weight_of_every_family) {
  for (const std::string& name : standardShapeNames()) {
    const ModelShape c = standardShape(name);
    const int64_t D = c.nEmbd, V = c.vocabSize, L = c.nLayer;
    const bool layerNorm = c.family == "gpt2" || c.family == "gpt_neox";
    const int64_t norms = (2 * L + 1) * D * (layerNorm ? 2 : 1);
    const int64_t positions = c.family == "gpt2" ? int64_t{c.nPositions} * D : 0;
    const int64_t lookedUp = c.tiedUnembedding ? 0 : V * D;
    StepShape s;
    s.model = c;
    s.bf16 = true;
    const MemoryEstimate e = estimateTrainingMemory(s);
    REQUIRE_MSG(e.weightCopies == 2 * (e.parameters - norms - positions - lookedUp), name);
  }
}

// The MLP's kind and width and the norm decide what a block keeps: a SwiGLU block of the same sizes keeps
// two [N, F] more than a GELU one (the up projection's output and SiLU's output), and RMSNorm's x/rms is
// kept at each of its norms. Counted by hand for one block of 1 × 1 tokens, fp32, without removal.
TEST_CASE(a_swiglu_rmsnorm_block_keeps_more_than_a_gelu_layernorm_block) {
  ModelShape gelu = handSized();
  gelu.nLayer = 1;
  gelu.mlpWidth = 12;
  ModelShape swiglu = gelu;
  swiglu.family = "llama";
  swiglu.nPositions = 4;
  StepShape a, b;
  a.model = gelu, b.model = swiglu;
  a.microBatch = b.microBatch = 1, a.context = b.context = 1;
  a.removal = b.removal = false;
  const int64_t F = 12, D = 8, N = 1;
  // Two more [N, F] fp32, and x/rms [N, D] fp32 at ln_1, ln_2 and the final norm.
  REQUIRE_EQ(estimateTrainingMemory(b).activations - estimateTrainingMemory(a).activations,
             2 * 4 * N * F + 3 * 4 * N * D);
}

// The loss in blocks (the CPU's, and CUDA's by default where the engine's kernels are built) against the
// peaks an H200 measured on 2026-11-30 (docs/gpu-runs/2026-11-30-h200-kernel: bench_training's removal
// step, bf16, fused attention, the allocator's peak): the estimate never below a measured peak, and not far
// above it. The whole-logits path's estimate likewise against its own peak.
TEST_CASE(the_loss_in_blocks_is_counted_against_an_h200s_measured_peaks) {
  struct Measured {
    const char* shape;
    int64_t microBatch;
    bool blocks;
    int64_t peakBytes;
    const char* path;
  };
  const Measured measured[] = {
      {"gpt2", 32, true, 14803760128, "blocks"},         {"gpt2", 32, true, 13877787136, "kernel"},
      {"gpt2", 64, true, 25071184896, "kernel"},         {"pythia-160m", 16, true, 9037508096, "kernel"},
      {"smollm2-135m", 16, true, 18608366592, "kernel"}, {"gpt2", 32, false, 32740353536, "logits"},
      {"pythia-160m", 16, false, 18038813696, "logits"}, {"smollm2-135m", 16, false, 27489249792, "logits"}};
  for (const Measured& m : measured) {
    StepShape s;
    s.model = standardShape(m.shape);
    s.microBatch = m.microBatch;
    s.context = 1024;
    s.bf16 = s.fusedAttention = true;
    s.lossBlockRows =
        m.blocks ? lossRowsPerBlock(std::numeric_limits<int64_t>::max(), s.model.vocabSize, false) : 0;
    const double ratio = static_cast<double>(estimateTrainingMemory(s).peakAllocated) / m.peakBytes;
    REQUIRE_MSG(ratio >= 1 && ratio <= 1.3, m.shape << " × " << m.microBatch << ", loss " << m.path
                                                    << ": estimate / measured = " << ratio);
  }
  // On a GPU a block holds 256 Mi logits (GPT-2: 5,341 rows); on the CPU 4 Mi, and at least 256 rows.
  REQUIRE_EQ(lossRowsPerBlock(std::numeric_limits<int64_t>::max(), 50257, false), 5341);
  REQUIRE_EQ(lossRowsPerBlock(std::numeric_limits<int64_t>::max(), 50257, true), 256);
  REQUIRE_EQ(lossRowsPerBlock(100, 50257, false), 100);
  REQUIRE_EQ(plannedLossBlockRows("cpu", 50257), 256);
}

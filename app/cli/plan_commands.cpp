// normfree-cli plan: the memory a training run will need on a device, and the micro-batch × accumulation and
// activation checkpointing that make it fit (train/memory_plan.h) — what `remove --fit` would choose.
#include <torch/torch.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "commands.h"
#include "model/device_memory.h"
#include "model/family.h"
#include "model/model_folder.h"
#include "options.h"
#include "run/run_directory.h"
#include "train/memory_plan.h"

namespace nf::cli {
namespace {

// A published model's shape (model/family.h), for planning without its folder.
ModelShape namedShape(const std::string& name) {
  try {
    return standardShape(name);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--shape: ") + e.what());
  }
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string withThousands(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string row(const std::string& label, int64_t bytes, const std::string& note = "") {
  char text[160];
  std::snprintf(text, sizeof text, "  %-34s %10s", label.c_str(), formatBytes(bytes).c_str());
  return std::string(text) + (note.empty() ? "" : "  " + note) + "\n";
}

struct PlanReport {
  std::string model;  // the folder, or the standard shape's name
  ModelShape shape;
  RunConfig run;
  int64_t availableBytes = 0;
  bool memoryGiven = false;  // --memory, not the device's
  PlanRequest request;
  MemoryPlan plan;
};

std::string table(const PlanReport& r) {
  const ModelShape& c = r.shape;
  const MemoryEstimate& e = r.plan.estimate;
  std::ostringstream out;
  out << "model        " << r.model << " (" << c.family << "): " << c.nLayer << " layers, " << c.nHead
      << " heads";
  if (c.kvHeads() != c.nHead) out << " (" << c.kvHeads() << " key/value)";
  out << ", d_model " << c.nEmbd << ", MLP " << c.mlpHidden() << ", " << c.nPositions
      << " positions, vocabulary " << c.vocabSize
      << (c.tiedUnembedding ? " (tied unembedding)" : " (own unembedding)") << "\n";
  out << "parameters   " << withThousands(e.parameters) << "\n";
  out << "run          " << trainingModeName(r.run.mode) << ", preset " << r.run.preset << ": "
      << r.request.globalBatch << " sequences × " << r.request.context << " tokens per step\n";
  out << "device       " << r.run.device << ": " << (r.request.bf16 ? "bf16 autocast" : "float32") << ", "
      << (r.request.fusedAttention ? "fused attention" : "math attention (T×T pattern stored)") << "; "
      << formatBytes(r.availableBytes) << (r.memoryGiven ? " given (--memory)" : " free") << ", planned to "
      << std::lround(kUsableMemoryFraction * 100) << "%: " << formatBytes(r.plan.usableBytes) << "\n";
  out << "\nmemory of one training step (micro-batch " << r.plan.microBatch << ", activation checkpointing "
      << (r.plan.activationCheckpointing ? "on" : "off") << ")\n";
  out << row("weights (fp32)", e.weights);
  out << row("gradients (fp32)", e.gradients);
  out << row("AdamW moments (fp32)", e.optimizer);
  if (e.weightCopies > 0) out << row("bf16 weight copies", e.weightCopies);
  out << row("activations kept for backward", e.activations);
  out << row("one block in backward", e.blockWorkingSet);
  out << row(
      "logits and cross-entropy", e.logits,
      r.request.lossBlockRows > 0
          ? "(in blocks of " +
                withThousands(std::min(r.request.lossBlockRows, r.plan.microBatch * r.request.context)) +
                " rows, in forward)"
          : std::string("(whole logits, at the start of backward)"));
  out << row("AdamW update temporaries", e.optimizerStep, "(after backward, in place of the activations)");
  out << row("predicted peak (allocated)", e.peakAllocated);
  out << row("margin", e.margin,
             "(" + std::to_string(kAllocatorSlackPercent) + "% + " + formatBytes(kWorkspaceBytes) + ")");
  out << row("predicted total", e.total, "of " + formatBytes(r.plan.usableBytes) + " usable");
  out << "\n";
  if (r.plan.fits)
    out << "plan         micro-batch " << r.plan.microBatch << " × accumulation " << r.plan.accumulation
        << ", activation checkpointing " << (r.plan.activationCheckpointing ? "on" : "off") << "\n"
        << "             " << r.plan.reason << "\n";
  else
    out << "plan         does not fit: " << r.plan.reason << "\n";
  return out.str();
}

nlohmann::json machineReport(const PlanReport& r) {
  const ModelShape& c = r.shape;
  nlohmann::json j{{"model", r.model},
                   {"shape",
                    {{"family", c.family},
                     {"n_layer", c.nLayer},
                     {"n_head", c.nHead},
                     {"n_kv_head", c.kvHeads()},
                     {"n_embd", c.nEmbd},
                     {"mlp_width", c.mlpHidden()},
                     {"n_positions", c.nPositions},
                     {"vocab_size", c.vocabSize},
                     {"tied_unembedding", c.tiedUnembedding}}},
                   {"preset", r.run.preset},
                   {"mode", trainingModeName(r.run.mode)},
                   {"global_batch", r.request.globalBatch},
                   {"context", r.request.context},
                   {"device", r.run.device},
                   {"bf16", r.request.bf16},
                   {"fused_attention", r.request.fusedAttention},
                   {"loss_block_rows", r.request.lossBlockRows},
                   {"available_bytes", r.availableBytes},
                   {"available_from", r.memoryGiven ? "--memory" : "device"},
                   {"usable_fraction", kUsableMemoryFraction}};
  j.update(toJson(r.plan));
  return j;
}

}  // namespace

void cmdPlan(CLI::App& command) {
  command.description(
      "Predict the peak memory of a training step on a device and choose the micro-batch × accumulation (the "
      "preset's global batch kept exactly) and activation checkpointing that fit it: what 'remove --fit' "
      "uses. --memory plans for a device this machine does not have (e.g. --device cuda --memory 80G).");
  struct Options {
    std::string model, shape, preset, device = "cpu", memory, mode = "remove";
    std::optional<int64_t> context;
    bool bf16 = false, json = false;
  };
  auto o = std::make_shared<Options>();
  auto* model = command
                    .add_option("--model", o->model,
                                "model folder (or run directory) whose config.json gives the shape")
                    ->type_name("folder");
  auto* shape = command
                    .add_option("--shape", o->shape,
                                "a published model's shape instead: " + joined(standardShapeNames()))
                    ->type_name("name");
  model->excludes(shape);
  command
      .add_option("--preset", o->preset,
                  "preset whose global batch and context to plan (default: the one "
                  "made for the model's depth)")
      ->type_name("name");
  command.add_option("--device", o->device, "device to plan for")
      ->type_name("cpu|cuda[:N]")
      ->capture_default_str();
  command
      .add_option("--memory", o->memory, "plan for this much free memory instead of the device's (e.g. 80G)")
      ->type_name("size");
  addOptional(command, "--context", o->context,
              "tokens per sequence (default: the preset's, at most the model's)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1));
  command.add_flag("--bf16", o->bf16, "bf16 autocast (CUDA only; the CPU computes in float32)");
  command
      .add_option("--mode", o->mode,
                  "remove, finetune or pretrain (a removal applies ln_1 twice for a while)")
      ->type_name("mode")
      ->capture_default_str();
  command.add_flag("--json", o->json, "one JSON line instead of the table");
  onRun(command, [o] {
    if (o->model.empty() == o->shape.empty()) throw UsageError("give --model or --shape");
    PlanReport r;
    r.model = o->model.empty() ? o->shape : run::modelFolder(o->model);  // a run directory: its final model
    r.shape = o->model.empty() ? namedShape(o->shape) : loadConfigFile(r.model + "/config.json").shape;
    TrainingMode mode;
    try {
      mode = parseTrainingMode(o->mode);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--mode: ") + e.what());
    }
    const std::string presetName = o->preset.empty() ? presetForDepth(r.shape.nLayer).name : o->preset;
    try {
      findPreset(presetName);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    RunChoices choices;
    try {
      const torch::Device device(o->device);  // the name only: the device need not be on this machine
      if (!device.is_cpu() && !device.is_cuda()) throw std::invalid_argument(o->device);
      choices.device = device.str();
    } catch (const std::exception&) {
      throw UsageError("unknown device '" + o->device + "' (expected cpu, cuda or cuda:N)");
    }
    choices.context = o->context;
    choices.bf16 = o->bf16;
    choices.schedule = Schedule{};  // memory does not depend on it: a preset made for another depth plans too
    try {
      r.run = makeRunConfig(presetName, mode, r.shape, choices);
    } catch (const std::invalid_argument& e) {  // a context past the model's
      throw UsageError(e.what());
    }
    r.memoryGiven = !o->memory.empty();
    if (r.memoryGiven) {
      try {
        r.availableBytes = parseByteSize(o->memory);
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--memory: ") + e.what());
      }
    } else {
      try {
        r.availableBytes = deviceMemory(r.run.device).freeBytes;
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string(e.what()) + "; give --memory to plan for a device that is not here");
      }
    }
    r.request = planRequest(r.run, r.shape, r.availableBytes);
    r.plan = planTrainingMemory(r.request);
    if (o->json)
      printJson(machineReport(r));
    else
      std::cout << table(r);
    return 0;
  });
}

}  // namespace nf::cli

// normfree-cli: every engine feature, headless, for servers without Qt. Data goes to stdout as JSON,
// progress and errors to stderr; the exit status is 0 on success, 1 on failure, 2 on bad usage.
#include <torch/torch.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"

namespace nf::cli {

void printJson(const nlohmann::json& result) {
  std::cout << result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

torch::Device parseDevice(const std::string& name) {
  torch::Device device(torch::kCPU);
  try {
    device = torch::Device(name);
  } catch (const std::exception&) {
    throw UsageError("unknown device '" + name + "' (expected cpu, cuda or cuda:N)");
  }
  if (device.is_cuda() && !torch::cuda::is_available())
    throw UsageError("device '" + name +
                     "' requested, but this LibTorch build has no CUDA or no GPU is visible");
  return device;
}

}  // namespace nf::cli

namespace {

struct Command {
  const char* name;
  int (*run)(const nf::cli::Argv&);
  const char* summary;
};

const Command kCommands[] = {
    {"info", nf::cli::cmdInfo, "shape, parameter count and norm state of a model folder"},
    {"init", nf::cli::cmdInit, "write a randomly initialised GPT-2 of a given shape and seed"},
    {"logits", nf::cli::cmdLogits, "logits for given token ids (JSON or safetensors)"},
    {"corpus", nf::cli::cmdCorpus,
     "write the synthetic corpus: train, val and a differently distributed eval set"},
    {"train-tokenizer", nf::cli::cmdTrainTokenizer, "learn a GPT-2 byte-level BPE (vocab.json + merges.txt)"},
    {"tokenize", nf::cli::cmdTokenize, "text (.txt, .jsonl) → nanoGPT token file (.bin)"},
    {"ioi", nf::cli::cmdIoi, "write an IOI prompt set (clean/corrupted pairs) for patching"},
    {"eval", nf::cli::cmdEval, "cross-entropy, loss percentiles, entropy and calibration on a token file"},
    {"generate", nf::cli::cmdGenerate, "continue a prompt (greedy or sampled, deterministic for a seed)"},
    {"pretrain", nf::cli::cmdPretrain, "train a GPT-2 from scratch (with LayerNorm) into a run directory"},
    {"finetune", nf::cli::cmdFinetune, "the vanilla control: fine-tune with nothing removed"},
    {"remove", nf::cli::cmdRemove, "remove LayerNorm by fine-tuning on a schedule (the protocol)"},
    {"resume", nf::cli::cmdResume, "continue a run from its newest checkpoint"},
    {"export", nf::cli::cmdExport, "export an LN-free model: folded, and standard GPT-2 (1e6/1e12 trick)"},
    {"schedule", nf::cli::cmdSchedule, "list or print presets, validate a schedule file"},
    {"analyze", nf::cli::cmdAnalyze,
     "analyses of a model: ioi (logit difference), induction (repeated spans)"},
};

void printUsage(std::ostream& out) {
  out << "usage: normfree-cli <command> [options]\n\n"
         "NormFree Workbench, headless: remove LayerNorm from GPT-2 and inspect the result.\n\ncommands:\n";
  for (const auto& c : kCommands) {
    std::string name = c.name;
    out << "  " << name << std::string(18 - name.size(), ' ') << c.summary << "\n";
  }
  out << "\nRun 'normfree-cli <command> --help' for a command's options.\n";
}

}  // namespace

int main(int argc, char** argv) {
  const nf::cli::Argv rest(argv + std::min(argc, 2), argv + argc);
  const std::string command = argc >= 2 ? argv[1] : "";
  if (command == "--help" || command == "-h" || command == "help") {
    printUsage(std::cout);
    return 0;
  }
  for (const auto& c : kCommands) {
    if (command != c.name) continue;
    try {
      return c.run(rest);
    } catch (const nf::cli::UsageError& e) {
      std::cerr << "normfree-cli " << command << ": " << e.what() << "\n";
      return 2;
    } catch (const c10::Error& e) {  // a LibTorch error: its message, without the C++ stack trace
      std::cerr << "normfree-cli " << command << ": error: " << e.what_without_backtrace() << "\n";
      return 1;
    } catch (const std::exception& e) {
      std::cerr << "normfree-cli " << command << ": error: " << e.what() << "\n";
      return 1;
    }
  }
  std::cerr << (command.empty() ? std::string("missing command") : "unknown command '" + command + "'")
            << "\n\n";
  printUsage(std::cerr);
  return 2;
}

// Every normfree-cli command: parse its arguments, call the engine, print JSON on stdout.
// Return the exit status; throw UsageError for bad arguments (exit 2), anything else for failures (exit 1).
#pragma once
#include <torch/types.h>

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace nf::cli {

using Argv = std::vector<std::string>;

int cmdInfo(const Argv& argv);
int cmdInit(const Argv& argv);
int cmdLogits(const Argv& argv);
int cmdTrainTokenizer(const Argv& argv);
int cmdTokenize(const Argv& argv);
int cmdCorpus(const Argv& argv);
int cmdIoi(const Argv& argv);
int cmdEval(const Argv& argv);
int cmdGenerate(const Argv& argv);
int cmdPretrain(const Argv& argv);
int cmdFinetune(const Argv& argv);
int cmdRemove(const Argv& argv);
int cmdResume(const Argv& argv);
int cmdExport(const Argv& argv);
int cmdSchedule(const Argv& argv);
int cmdAnalyze(const Argv& argv);

// One JSON line on stdout. Bytes that are not UTF-8 (a model can sample half a character) become U+FFFD.
void printJson(const nlohmann::json& result);

// "cpu", "cuda", "cuda:1" → a device that exists here, or UsageError.
torch::Device parseDevice(const std::string& name);

}  // namespace nf::cli

// Every normfree-cli command is one function: it declares its positionals and options on its CLI11
// subcommand, then hands onRun (options.h) the work: call the engine, print JSON on stdout, return the exit
// status. The work throws UsageError for bad arguments that CLI11 cannot see (exit 2), anything else for
// failures (exit 1). CLI11 itself turns unknown options, missing values and numbers out of range into exit 2.
#pragma once
#include <torch/types.h>

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace CLI {
class App;
}
namespace nf {
class TokenFile;
class Tokenizer;
}  // namespace nf

namespace nf::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void cmdInfo(CLI::App& command);
void cmdInit(CLI::App& command);
void cmdLogits(CLI::App& command);
void cmdTrainTokenizer(CLI::App& command);
void cmdTokenize(CLI::App& command);
void cmdRareJobs(CLI::App& command);
void cmdCorpus(CLI::App& command);
void cmdIoi(CLI::App& command);
void cmdEval(CLI::App& command);
void cmdBench(CLI::App& command);
void cmdGenerate(CLI::App& command);
void cmdPretrain(CLI::App& command);
void cmdFinetune(CLI::App& command);
void cmdRemove(CLI::App& command);
void cmdResume(CLI::App& command);
void cmdJoin(CLI::App& command);
void cmdExport(CLI::App& command);
void cmdSchedule(CLI::App& command);
void cmdPlan(CLI::App& command);
void cmdAnalyze(CLI::App& command);  // a group: one subcommand per kind of analysis
void cmdSteer(CLI::App& command);    // a group: one subcommand per request (built with NF_STEERING)

// The help text of every --tokenizer option: the files loadTokenizer (text/tokenizer.h) reads.
inline constexpr const char* kTokenizerFolderHelp =
    "folder with tokenizer.json, vocab.json + merges.txt or tokenizer.model (a model folder or run directory "
    "works)";
// The folder a --tokenizer names: a run directory stands for its model's (run::tokenizerFolder).
std::string tokenizerOption(const std::string& folder);

// One JSON line on stdout. Bytes that are not UTF-8 (a model can sample half a character) become U+FFFD.
void printJson(const nlohmann::json& result);
// A command's result: on stdout, or (with --out) written atomically to `out`, stdout then saying
// {"written": out} with `note`'s fields.
void printOrWrite(const std::string& out, const nlohmann::json& result,
                  const nlohmann::json& note = nlohmann::json::object());
// A comma-separated option's items, empty ones left out: "a,,b" → a, b.
std::vector<std::string> splitList(const std::string& text);

// The command line as given (argv[1…]): what `--nproc` starts its workers with.
const std::vector<std::string>& commandLineArguments();

// A folder a command writes into, refused (UsageError naming the file) when it already holds one of `files`
// without --overwrite: `init --out` into the bundled model's folder replaced its weights unsaid.
// Other files stay welcome (a tokenizer's folder becomes a model's).
void refuseToReplace(const std::string& folder, const std::vector<std::string>& files, bool overwrite);

// "cpu", "cuda", "cuda:1" → a device that exists here, or UsageError. With `bf16` (a command's --bf16):
// UsageError off CUDA, where autocast does nothing and the model would compute in float32 unsaid.
torch::Device parseDevice(const std::string& name, bool bf16 = false);

// A note on stderr when a token file was likely made by another tokenizer than the model's
// (otherTokenizerProblem: the sidecar's tokenizer fingerprint, else its end-of-text id): such data reads as
// valid ids and gives plausible, wrong numbers. Said, not refused: some configs name another end token
// than their tokenizer's (Qwen2.5-Instruct's eos is <|im_end|>). modelTokenizer may be null (none found).
void noteOtherTokenizer(const TokenFile& file, int64_t modelEndOfText, const Tokenizer* modelTokenizer);

}  // namespace nf::cli

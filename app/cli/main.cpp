// normfree-cli: every engine feature, headless, for servers without Qt. Data goes to stdout as JSON,
// progress and errors to stderr; the exit status is 0 on success, 1 on failure, 2 on bad usage, 3 when
// Ctrl-C (or a stop request) stopped a training run before its last step, 4 when the run diverged and
// stopped.
//
// The command line is parsed by CLI11: a maintained, header-only library that Debian packages
// (libcli11-dev), with subcommands, typed options, range checks and generated help. It replaces a parser of
// our own that had to grow each of those by hand. Each command declares its options on its own subcommand
// (the *_commands.cpp files); this file builds the tree, formats help the way the workbench always showed
// it, and turns errors into exit statuses.
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "commands.h"
#include "data/token_file.h"
#include "io/atomic_file.h"
#include "options.h"
#include "run/run_directory.h"
#include "text/tokenizer.h"
#include "train/trainer.h"
#include "util/allocator.h"
#include "util/blas_threads.h"
#include "util/exit_status.h"

namespace nf::cli {

void printJson(const nlohmann::json& result) {
  std::cout << result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

void printOrWrite(const std::string& out, const nlohmann::json& result, const nlohmann::json& note) {
  if (out.empty()) {
    printJson(result);
    return;
  }
  writeFileAtomic(out, result.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  nlohmann::json written = {{"written", out}};
  written.update(note);
  printJson(written);
}

std::string tokenizerOption(const std::string& folder) {
  const std::string found = run::tokenizerFolder(folder);
  return found.empty() ? folder : found;  // none: the error names what the user gave
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

void refuseToReplace(const std::string& folder, const std::vector<std::string>& files, bool overwrite) {
  if (overwrite) return;
  for (const std::string& name : files) {
    const std::filesystem::path file = std::filesystem::path(folder) / name;
    if (std::filesystem::exists(file))
      throw UsageError(file.string() +
                       " exists: this would replace it (choose another folder, or --overwrite)");
  }
}

namespace {
std::vector<std::string> g_arguments;
}
const std::vector<std::string>& commandLineArguments() { return g_arguments; }

torch::Device parseDevice(const std::string& name, bool bf16) {
  torch::Device device(torch::kCPU);
  try {
    device = torch::Device(name);
  } catch (const std::exception&) {
    throw UsageError("unknown device '" + name + "' (expected cpu, cuda or cuda:N)");
  }
  // LibTorch knows more device types (meta, mps, xpu…) than this build computes on: each had ended in an
  // internal error. A CPU has no index to choose.
  if (!(device.is_cpu() && !device.has_index()) && !device.is_cuda())
    throw UsageError("unknown device '" + name + "' (expected cpu, cuda or cuda:N)");
  if (device.is_cuda() && !torch::cuda::is_available())
    throw UsageError("device '" + name +
                     "' requested, but this LibTorch build has no CUDA or no GPU is visible");
  if (bf16 && !device.is_cuda())
    throw UsageError("--bf16 is bf16 autocast on CUDA: on " + device.str() +
                     " the model computes in float32 whatever it says (drop --bf16, or use --device cuda)");
  return device;
}

void noteOtherTokenizer(const TokenFile& file, int64_t modelEndOfText, const Tokenizer* modelTokenizer) {
  const std::string problem = otherTokenizerProblem(file, modelEndOfText, modelTokenizer);
  if (problem.empty()) return;
  std::cerr << "note: " << problem
            << ": if another tokenizer made it, every number here is wrong (tokenize it with --tokenizer set "
               "to the model's folder)\n";
}

namespace {

// A subcommand's line in its parent's help, and what it does when chosen.
std::map<const CLI::App*, std::string>& summaries() {
  static std::map<const CLI::App*, std::string> s;
  return s;
}
std::map<const CLI::App*, std::function<int()>>& works() {
  static std::map<const CLI::App*, std::function<int()>> w;
  return w;
}

// What the subcommands of a group are called in help and errors: normfree-cli has commands, analyze has
// analyses, steer has requests.
struct Noun {
  std::string one, many;
};
Noun subcommandNoun(const CLI::App& group) {
  if (!group.get_parent()) return {"command", "commands"};
  return group.get_name() == "steer" ? Noun{"request", "requests"} : Noun{"analysis", "analyses"};
}

std::vector<const CLI::App*> subcommandsOf(const CLI::App& group) {
  return group.get_subcommands([](const CLI::App*) { return true; });
}

// "normfree-cli analyze dla": the program and the subcommands chosen so far.
std::string commandPath(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* at = &app; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    path += " " + at->get_name();
  }
  return path;
}

const CLI::App* chosenCommand(const CLI::App& app) {
  const CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  return at;
}

// Help as the workbench always printed it: usage first, then the description, then each argument and
// option with its help on an indented line of its own.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode) const override {
    const auto positionals = app->get_options([](const CLI::Option* o) { return o->get_positional(); });
    const auto options = app->get_options([](const CLI::Option* o) { return o->nonpositional(); });
    const auto commands = subcommandsOf(*app);
    std::ostringstream out;
    out << "usage: " << name;
    if (!commands.empty()) out << " <" << subcommandNoun(*app).one << ">";
    for (const CLI::Option* p : positionals) out << " <" << p->get_name() << ">" << (isList(p) ? "..." : "");
    out << " [options]\n\n" << app->get_description() << "\n";
    if (!positionals.empty()) out << "\narguments:\n";
    for (const CLI::Option* p : positionals)
      out << "  " << p->get_name() << (isList(p) ? "..." : "") << "\n      " << p->get_description() << "\n";
    out << "\noptions:\n";
    for (const CLI::Option* o : options) {
      std::string names = o->get_name(false, true);
      for (std::size_t comma = names.find(','); comma != std::string::npos;
           comma = names.find(',', comma + 2))
        names.replace(comma, 1, ", ");
      const auto [valueName, range] = splitTypeName(o->get_type_name());
      // What it goes with and what it excludes (.needs, .excludes), which otherwise only an error would tell.
      std::string needs, excludes;
      for (const CLI::Option* other : o->get_needs())
        needs += (needs.empty() ? "needs " : ", ") + other->get_name();
      for (const CLI::Option* other : o->get_excludes())
        excludes += (excludes.empty() ? "not with " : ", ") + other->get_name();
      std::string notes;
      for (const std::string& note :
           {std::string(o->get_required() ? "required" : ""), needs, excludes, range,
            o->get_default_str().empty() ? "" : "default: " + o->get_default_str()})
        if (!note.empty()) notes += (notes.empty() ? "" : "; ") + note;
      // Notes join a closing parenthesis of the help's own: "(default: the preset's; ≥ 1)".
      std::string help = o->get_description();
      if (!notes.empty() && !help.empty() && help.back() == ')')
        help.insert(help.size() - 1, "; " + notes);
      else if (!notes.empty())
        help += " (" + notes + ")";
      out << "  " << names << (valueName.empty() ? "" : " <" + valueName + ">") << "\n      " << help << "\n";
    }
    if (!commands.empty()) out << "\n" << subcommandNoun(*app).many << ":\n";
    for (const CLI::App* c : commands) {
      const std::string& command = c->get_name();
      out << "  " << command << std::string(command.size() < 18 ? 18 - command.size() : 1, ' ')
          << summaries()[c] << "\n";
    }
    if (!app->get_footer().empty()) out << "\n" << app->get_footer() << "\n";
    return out.str();
  }

 private:
  static bool isList(const CLI::Option* o) { return o->get_expected_max() > 1; }

  // CLI11 appends each check's description to the type name after a ':'; ours (options.h) start with
  // "≥", ">" or "in". Not any ':', because "cpu|cuda[:N]" has one of its own.
  static std::pair<std::string, std::string> splitTypeName(const std::string& full) {
    for (const char* mark : {":≥ ", ":> ", ":in "}) {
      const auto at = full.find(mark);
      if (at != std::string::npos) return {full.substr(0, at), full.substr(at + 1)};
    }
    return {full, ""};
  }
};

// CLI11 would report an unknown command as an unexpected argument; say what it is, with the list. Returns
// the exit status when argv names no command that exists (or asks for "help"), else nothing.
std::optional<int> checkCommandNames(const CLI::App& app, int argc, char** argv) {
  const CLI::App* group = &app;
  for (int i = 1; !subcommandsOf(*group).empty(); ++i) {
    const std::string arg = i < argc ? argv[i] : "";
    if (!arg.empty() && arg[0] == '-') return std::nullopt;  // --help, or an option CLI11 will report
    if (group == &app && arg == "help") {
      std::cout << app.help();
      return 0;
    }
    const CLI::App* next = nullptr;
    std::string names;
    for (const CLI::App* c : subcommandsOf(*group)) {
      if (c->get_name() == arg) next = c;
      names += (names.empty() ? "" : ", ") + c->get_name();
    }
    if (next) {
      group = next;
      continue;
    }
    const std::string noun = subcommandNoun(*group).one;
    const std::string problem = arg.empty() ? "missing " + noun : "unknown " + noun + " '" + arg + "'";
    if (group == &app)
      std::cerr << problem << "\n\n" << app.help();
    else
      std::cerr << app.get_name() << " " << group->get_name() << ": " << problem << " (" << names << ")\n";
    return nf::exit_status::kUsage;
  }
  return std::nullopt;
}

// CLI11's message, except where it reads better as the workbench always said it: "missing --out",
// "unknown option --frob", "--layers needs a value".
std::string usageMessage(const CLI::App& app, const CLI::ParseError& e) {
  if (dynamic_cast<const CLI::RequiredError*>(&e)) {
    for (const CLI::Option* o : chosenCommand(app)->get_options())
      if (o->get_required() && o->count() == 0)
        return "missing " + (o->get_positional() ? "<" + o->get_name() + ">" : o->get_name());
  } else if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    const std::vector<std::string> extras = app.remaining(true);
    for (const std::string& extra : extras)
      if (extra.size() > 1 && extra[0] == '-') return "unknown option " + extra.substr(0, extra.find('='));
    if (!extras.empty()) return "unexpected argument '" + extras.front() + "'";
  } else if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
    const std::string what = e.what();  // "--layers: 1 required n:≥ 1 missing"
    const auto colon = what.find(": ");
    if (colon != std::string::npos && what.compare(0, 2, "--") == 0 && what.size() >= 8 &&
        what.compare(what.size() - 8, 8, " missing") == 0)
      return what.substr(0, colon) + " needs a value";
  }
  return e.what();
}

// The files a model folder is read from: an output among them would replace the model (`logits m --out
// m/model.safetensors` did), or be read as part of it next time (a .safetensors beside the weights).
bool isModelFolderFile(const std::string& name) {
  auto endsWith = [&](const std::string& end) {
    return name.size() >= end.size() && name.compare(name.size() - end.size(), end.size(), end) == 0;
  };
  return name == "config.json" || endsWith(".safetensors") || endsWith(".safetensors.index.json") ||
         std::find(std::begin(TokenizerFiles::kAll), std::end(TokenizerFiles::kAll), name) !=
             std::end(TokenizerFiles::kAll);
}

// The files a run directory's engine writes, wherever they are in it (state.json and optimizer.pt are a
// checkpoint's), and its folders of models (checkpoints/, final/, source/): an output there would corrupt
// the run (`analyze run --out run/metrics.jsonl` replaced its log, `--out run/final/config.json` its model).
bool isRunFile(const std::filesystem::path& inRun) {
  const std::string first = inRun.begin()->string(), name = inRun.filename().string();
  for (const std::string& folder :
       {nf::run::checkpointsPath(""), nf::run::finalModelPath(""), nf::run::sourceModelPath("")})
    if (first == std::filesystem::path(folder).filename()) return true;
  for (const std::string& file :
       {nf::run::configPath(""), nf::run::schedulePath(""), nf::run::metricsPath(""), nf::run::servePath(""),
        nf::run::lockPath(""), nf::run::checkpointStatePath(""), nf::run::optimizerStatePath("")})
    if (name == std::filesystem::path(file).filename()) return true;
  return false;
}

// An output (--out, --csv) never replaces what the command reads: a file given to another option or
// argument (or a token file's sidecar), a model's file in a folder given, or a run's own file in a run
// directory given. `analyze … --data v.bin --out v.bin` had replaced the tokens with JSON.
void refuseOutputsOverInputs(const CLI::App& command) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> outputs, inputs;  // (option, path)
  // Not every value is a path (a prompt, token ids): one the file system cannot even look up (a name too
  // long) names no input.
  auto exists = [](const std::string& path) {
    std::error_code ec;
    return fs::exists(path, ec);
  };
  for (const CLI::Option* o : command.get_options()) {
    const std::string name = o->get_positional() ? "<" + o->get_name() + ">" : o->get_name();
    for (const std::string& value : o->results()) {
      if (name == "--out" || name == "--csv") {
        outputs.emplace_back(name, value);
        continue;
      }
      std::vector<std::string> paths = {value};
      if (!exists(value)) paths = splitList(value);  // --compare a,b
      for (const std::string& path : paths)
        if (exists(path)) inputs.emplace_back(name, path);
    }
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [outName, out] = outputs[i];
    std::error_code ec;
    const fs::path where = fs::weakly_canonical(fs::absolute(out, ec), ec);
    for (std::size_t k = 0; k < i; ++k)  // the one written last had replaced the other
      if (fs::weakly_canonical(fs::absolute(outputs[k].second, ec), ec) == where)
        throw UsageError(outputs[k].first + " and " + outName + " are both " + out +
                         ": give each its own file");
    for (const auto& [inName, in] : inputs) {
      if (fs::is_directory(in)) {
        const fs::path folder = fs::weakly_canonical(fs::absolute(in, ec), ec);
        // The run a folder given is, or is a model of (its final/, a checkpoints/step-N/).
        for (const fs::path& run : {folder, folder.parent_path(), folder.parent_path().parent_path()}) {
          const fs::path inRun = where.lexically_relative(run);
          if (!inRun.empty() && *inRun.begin() != ".." && nf::run::isRunDirectory(run.string()) &&
              isRunFile(inRun))
            throw UsageError(
                outName + " " + out + " is in the run " + run.string() + " (" + inName + " " + in +
                ") among the files it trains, checkpoints and resumes from: it would corrupt the "
                "run; write it elsewhere");
        }
        // Where the output is inside the folder given, its path from there ("" when it is not inside).
        const fs::path inside = where.lexically_relative(folder);
        if (inside.empty() || *inside.begin() == "..") continue;
        if (isModelFolderFile(inside.filename().string()))
          throw UsageError(outName + " " + out + " is a file of the model folder " + in + " (" + inName +
                           "): it would replace the model's own, or be read as part of the model; write it "
                           "elsewhere");
        continue;
      }
      for (const std::string& file : {in, in + ".json"})
        if (fs::equivalent(file, out, ec))
          throw UsageError(outName + " " + out + " is the input " + file + " (" + inName +
                           "): it would be replaced");
    }
  }
}

struct Command {
  const char* name;
  void (*declare)(CLI::App&);
  const char* summary;
};

const Command kCommands[] = {
    {"info", cmdInfo, "shape, parameter count and norm state of a model folder"},
    {"init", cmdInit, "write a randomly initialised model of a family, shape and seed"},
    {"logits", cmdLogits, "logits for given token ids (JSON or safetensors)"},
    {"corpus", cmdCorpus, "write the synthetic corpus: train, val and a differently distributed eval set"},
    {"train-tokenizer", cmdTrainTokenizer, "learn a GPT-2 byte-level BPE (vocab.json + merges.txt)"},
    {"tokenize", cmdTokenize, "text (.txt, .jsonl) → nanoGPT token file (.bin)"},
    {"rare-jobs", cmdRareJobs,
     "documents of rare jobs, which grow attention sinks (a text's bigrams + events)"},
    {"ioi", cmdIoi, "write an IOI prompt set (clean/corrupted pairs) for patching"},
    {"eval", cmdEval, "cross-entropy, loss percentiles, entropy and calibration on a token file"},
    {"bench", cmdBench,
     "downstream benchmarks (HellaSwag, PIQA, WinoGrande, BoolQ, ARC, LAMBADA) as lm-eval scores them"},
    {"generate", cmdGenerate, "continue a prompt (greedy or sampled, deterministic for a seed)"},
    {"pretrain", cmdPretrain, "train a model from scratch (with its norms) into a run directory"},
    {"finetune", cmdFinetune, "the vanilla control: fine-tune with nothing removed"},
    {"remove", cmdRemove, "remove LayerNorm by fine-tuning on a schedule (the protocol)"},
    {"resume", cmdResume, "continue a run from its newest checkpoint"},
    {"join", cmdJoin,
     "train as one of a new run's workers, with worker 0's settings (the workbench's helpers)"},
    {"export", cmdExport, "export an LN-free model: folded, and its family's standard form (1e6/1e12 trick)"},
    {"schedule", cmdSchedule, "list or print presets, validate a schedule file"},
    {"plan", cmdPlan, "predict a run's memory; choose micro-batch × accumulation and checkpointing to fit"},
    {"analyze", cmdAnalyze, "analyses of a model: "},  // their names follow, read off its subcommands
#ifdef NF_STEERING
    {"steer", cmdSteer,
     "a served run from a terminal: status, pause, continue, checkpoint, stop, edits, watch"},
#endif
};

}  // namespace

CLI::App& addCommand(CLI::App& parent, const std::string& name, const std::string& summary) {
  CLI::App& command = *parent.add_subcommand(name, summary);
  summaries()[&command] = summary;
  return command;
}

void onRun(CLI::App& command, std::function<int()> work) { works()[&command] = std::move(work); }

}  // namespace nf::cli

int main(int argc, char** argv) {
  using namespace nf::cli;
  nf::keepFreedMemoryForReuse();  // before any thread starts
  nf::letIdleBlasThreadsSleep();
  CLI::App app(
      "NormFree Workbench, headless: remove LayerNorm from GPT-2, Pythia and LLaMA-family models and "
      "inspect the result.",
      "normfree-cli");
  // Inherited by every subcommand made after this.
  app.formatter(std::make_shared<HelpFormatter>());
  app.set_help_flag("-h,--help", "show this help");
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // the last one counts
  app.require_subcommand(1);
  for (const Command& c : kCommands) c.declare(addCommand(app, c.name, c.summary));
  const CLI::App* analyze = app.get_subcommand("analyze");
  for (const CLI::App* kind : subcommandsOf(*analyze))
    summaries()[analyze] += kind->get_name() + (kind == subcommandsOf(*analyze).back() ? "" : ", ");
  app.footer("Run 'normfree-cli <command> --help' for a command's options.");  // after: subcommands copy it

  if (auto status = checkCommandNames(app, argc, argv)) return *status;
  g_arguments.assign(argv + 1, argv + argc);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help: printed to stdout
    std::cerr << commandPath(app) << ": " << usageMessage(app, e) << " (see '" << commandPath(app)
              << " --help')\n";
    return nf::exit_status::kUsage;
  }

  const std::string command = commandPath(app);
  try {
    refuseOutputsOverInputs(*chosenCommand(app));
    return works().at(chosenCommand(app))();
  } catch (const UsageError& e) {
    std::cerr << command << ": " << e.what() << "\n";
    return nf::exit_status::kUsage;
  } catch (const nf::Diverged& e) {  // its own exit status, for scripts that retry with a lower learning rate
    std::cerr << command << ": diverged: " << e.what() << "\n";
    return nf::exit_status::kDiverged;
  } catch (const c10::Error& e) {  // a LibTorch error: its message, without the C++ stack trace
    std::cerr << command << ": error: " << e.what_without_backtrace() << "\n";
    return nf::exit_status::kFailure;
  } catch (const std::exception& e) {
    std::cerr << command << ": error: " << e.what() << "\n";
    return nf::exit_status::kFailure;
  }
}

// normfree-cli as a user runs it: JSON on stdout, errors on stderr with a non-zero exit status.
#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_process.h"
#include "data/ioi.h"
#include "data/token_file.h"
#include "fixtures.h"
#include "io/atomic_file.h"
#include "model/hf_checkpoint.h"
#include "model/model_folder.h"
#include "run/run_directory.h"
#include "text/tokenizer.h"
#include "tokenizer_fixtures.h"
#include "train/settings.h"

using namespace nf;
using namespace nf::test;

namespace {

using Result = CliResult;

}  // namespace

TEST_CASE(init_then_info_reports_the_shape) {
  TempDir dir;
  auto r = cli("init --out " + dir.path("m") +
               " --layers 3 --heads 2 --d-model 16 --context 8 --vocab 50 --seed 4");
  REQUIRE_MSG(r.status == 0, r.err);
  r = cli("info " + dir.path("m"));
  REQUIRE_MSG(r.status == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE_EQ(j["n_layer"], 3);
  REQUIRE_EQ(j["n_head"], 2);
  REQUIRE_EQ(j["n_embd"], 16);
  REQUIRE_EQ(j["vocab_size"], 50);
  REQUIRE_EQ(j["sites"].size(), 10u);
  REQUIRE_EQ(j["sites"][9]["site"], "LN_f");
  REQUIRE_EQ(j["sites"][9]["kind"], "layernorm");
}

TEST_CASE(init_writes_every_family_with_its_defaults) {
  TempDir dir;
  auto r = cli("init --out " + dir.path("llama") +
               " --family llama --layers 2 --heads 4 --kv-heads 2 --d-model 32 --mlp-width 40 --vocab 60");
  REQUIRE_MSG(r.status == 0, r.err);
  auto j = nlohmann::json::parse(cli("info " + dir.path("llama")).out);
  REQUIRE_EQ(j["family"], "llama");
  REQUIRE_EQ(j["kv_heads"], 2);
  REQUIRE_EQ(j["mlp_width"], 40);
  REQUIRE_EQ(j["rotary_dims"], 8);
  REQUIRE_EQ(j["sites"][0]["kind"], "rmsnorm");
  r = cli("init --out " + dir.path("neox") +
          " --family gpt_neox --layers 1 --heads 2 --d-model 16 --vocab 60");
  REQUIRE_MSG(r.status == 0, r.err);
  j = nlohmann::json::parse(cli("info " + dir.path("neox")).out);
  REQUIRE_EQ(j["family"], "gpt_neox");
  REQUIRE_EQ(j["rotary_dims"], 2);  // Pythia's quarter of each 8-dimensional head
  REQUIRE_EQ(j["parallel_residual"], true);
  REQUIRE_EQ(j["tied_unembedding"], false);
  r = cli("init --out " + dir.path("bad") + " --family llama --heads 4 --kv-heads 3 --d-model 32");
  REQUIRE(r.status != 0 && r.err.find("num_key_value_heads") != std::string::npos);
  r = cli("init --out " + dir.path("bad") + " --family mistral");
  REQUIRE(r.status != 0 && r.err.find("--family") != std::string::npos);
}

TEST_CASE(init_is_reproducible_from_the_seed) {
  TempDir dir;
  REQUIRE_EQ(
      cli("init --out " + dir.path("a") + " --layers 1 --d-model 16 --heads 2 --vocab 40 --seed 3").status,
      0);
  REQUIRE_EQ(
      cli("init --out " + dir.path("b") + " --layers 1 --d-model 16 --heads 2 --vocab 40 --seed 3").status,
      0);
  REQUIRE_EQ(
      cli("init --out " + dir.path("c") + " --layers 1 --d-model 16 --heads 2 --vocab 40 --seed 4").status,
      0);
  auto bytes = [&](const std::string& m) { return readTextFile(dir.path(m) + "/model.safetensors"); };
  REQUIRE(bytes("a") == bytes("b"));
  REQUIRE(bytes("a") != bytes("c"));
}

TEST_CASE(logits_match_the_engine_in_json_and_safetensors) {
  TempDir dir;
  auto model = randomModel(smallConfig());
  saveModel(*model, dir.path("m"));
  auto tokens = randomTokens(model->config(), 2, 5);
  torch::NoGradGuard noGrad;
  auto expected = model->forward(tokens);

  auto r = cli("logits " + dir.path("m") + " --tokens '" + tokensArg(tokens) + "'");
  REQUIRE_MSG(r.status == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["shape"] == std::vector<int64_t>({2, 5, 101}));
  double worst = 0;
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 5; ++t)
      for (int v = 0; v < 101; ++v)
        worst =
            std::max(worst, std::abs(j["logits"][b][t][v].get<double>() - expected[b][t][v].item<double>()));
  REQUIRE_MSG(worst < 1e-5, worst);

  r = cli("logits " + dir.path("m") + " --tokens '" + tokensArg(tokens) + "' --out " +
          dir.path("l.SafeTensors"));  // the extension in any case (it had been written as JSON)
  REQUIRE_MSG(r.status == 0, r.err);
  auto f = SafetensorsFile::open(dir.path("l.SafeTensors"));
  const TensorInfo* info = f.find("logits");
  REQUIRE(info && info->shape == std::vector<int64_t>({2, 5, 101}));
  auto stored = torch::from_blob(const_cast<std::byte*>(f.data(*info)), {2, 5, 101}).clone();
  REQUIRE(torch::equal(stored, expected));
  r = cli("logits " + dir.path("m") + " --tokens 1,2 --out " + dir.path("l.st"));  // neither: which is it?
  REQUIRE_MSG(r.status == 2 && r.err.find("name a .json or .safetensors file") != std::string::npos, r.err);
  REQUIRE(!std::filesystem::exists(dir.path("l.st")));
}

TEST_CASE(bad_input_gives_a_message_and_a_nonzero_exit) {
  TempDir dir;
  auto model = randomModel(smallConfig());
  saveModel(*model, dir.path("m"));
  auto r = cli("logits " + dir.path("m") + " --tokens 1,2,101");
  REQUIRE(r.status != 0);
  REQUIRE_MSG(r.err.find("token id 101") != std::string::npos, r.err);
  REQUIRE(r.out.empty());
  r = cli("logits " + dir.path("m") + " --tokens 1,x");
  REQUIRE(r.status == 2 && r.err.find("'x' is not an integer") != std::string::npos);
  // A separator with nothing after it had been dropped unsaid ("1,2," ran as 1,2; "1;2;" as two rows).
  r = cli("logits " + dir.path("m") + " --tokens 1,2,");
  REQUIRE_MSG(r.status == 2 && r.err.find("',' with no token id") != std::string::npos, r.err);
  r = cli("logits " + dir.path("m") + " --tokens '1,;2,3'");
  REQUIRE_MSG(r.status == 2 && r.err.find("',' with no token id") != std::string::npos, r.err);
  r = cli("logits " + dir.path("m") + " --tokens '1;2;'");
  REQUIRE_MSG(r.status == 2 && r.err.find("';' with no sequence") != std::string::npos, r.err);
  r = cli("info " + dir.path("nowhere"));
  REQUIRE(r.status != 0 && r.err.find(dir.path("nowhere")) != std::string::npos);
  r = cli("frobnicate");
  REQUIRE(r.status == 2 && r.err.find("unknown command 'frobnicate'") != std::string::npos);
  r = cli("init --layers 2");
  REQUIRE(r.status == 2 && r.err.find("missing --out") != std::string::npos);
  r = cli("init --out " + dir.path("x") + " --d-model 30 --heads 4");
  REQUIRE(r.status == 2 && r.err.find("not divisible") != std::string::npos);
  // Document windows need the end-of-text token (the model's, 100) in the data; the share is checked.
  std::vector<int32_t> noMarker(500);
  for (int i = 0; i < 500; ++i) noMarker[i] = i % 100;
  writeTokens(dir.path("plain.bin"), noMarker, 101);
  r = cli("pretrain " + dir.path("run") + " --model " + dir.path("m") + " --train " + dir.path("plain.bin") +
          " --steps 2 --micro-batch 2 --document-windows 1");
  REQUIRE_MSG(r.status != 0 && r.err.find("plain.bin") != std::string::npos &&
                  r.err.find("no end-of-text token (id 100)") != std::string::npos,
              r.err);
  r = cli("pretrain " + dir.path("run2") + " --model " + dir.path("m") + " --train " + dir.path("plain.bin") +
          " --document-windows 1.5");
  REQUIRE_MSG(r.status == 2 && r.err.find("--document-windows") != std::string::npos, r.err);
  r = cli("pretrain " + dir.path("run3") + " --model " + dir.path("m") + " --train " + dir.path("plain.bin") +
          " --keep-checkpoints -1");
  REQUIRE_MSG(r.status == 2 && r.err.find("--keep-checkpoints") != std::string::npos, r.err);
}

TEST_CASE(every_command_has_help) {
  for (const char* command :
       {"info", "init", "logits", "corpus", "train-tokenizer", "tokenize", "ioi", "eval", "generate",
        "pretrain", "finetune", "remove", "resume", "export", "schedule", "plan"}) {
    auto r = cli(std::string(command) + " --help");
    REQUIRE_MSG(
        r.status == 0 && r.out.find("usage: normfree-cli " + std::string(command)) != std::string::npos,
        command);
  }
  for (const char* kind :
       {"norms", "sinks", "dla", "patching", "neurons", "calibration", "ioi", "induction"}) {
    auto r = cli(std::string("analyze ") + kind + " --help");
    REQUIRE_MSG(
        r.status == 0 && r.out.find("usage: normfree-cli analyze " + std::string(kind)) != std::string::npos,
        kind);
  }
  auto r = cli("--help");
  REQUIRE(r.status == 0 && r.out.find("commands:") != std::string::npos);
  // The top list names every analysis (it had left out the three newest), read off analyze's own list.
  REQUIRE_MSG(r.out.find("analyses of a model: norms, sinks, dla, logit-lens, tokens, patching, circuit,") !=
                  std::string::npos,
              r.out);
  // An option's partners and exclusions are in its help, not only in the error once it is misused.
  r = cli("remove --help");
  REQUIRE_MSG(r.out.find("(needs --autopilot; ≥ 1; default: 10)") != std::string::npos, r.out);
  r = cli("analyze patching --help");
  REQUIRE_MSG(r.out.find("not with --prompts") != std::string::npos, r.out);
}

namespace {

// The commands under `path` ("" for the top), each with its path, from the lists their help prints
// (commands, analyses, requests).
std::vector<std::string> commandsUnder(const std::string& path) {
  std::vector<std::string> found;
  std::istringstream help(cli(path + " --help").out);
  bool inList = false;
  for (std::string line; std::getline(help, line);) {
    if (!line.empty() && line.back() == ':' && line[0] != ' ') {
      inList = line != "arguments:" && line != "options:";
      continue;
    }
    if (!inList || line.size() < 3 || line[0] != ' ' || line[2] == ' ') continue;
    const std::string name = line.substr(2, line.find(' ', 2) - 2);
    const std::string command = path.empty() ? name : path + " " + name;
    found.push_back(command);
    for (const std::string& below : commandsUnder(command)) found.push_back(below);
  }
  return found;
}

}  // namespace

// Every whole-number option (<n>) says its range: the range check is also what reads it in base 10
// (CLI11 alone took "010" as octal eight and "0x20" as 32: `--autopilot-min-gap 010` ran with 8) and
// refuses -1 for a count or a seed (which wrapped to 2^64 − 1).
TEST_CASE(every_whole_number_option_is_read_in_base_10_within_its_range) {
  const std::vector<std::string> commands = commandsUnder("");
  REQUIRE(std::find(commands.begin(), commands.end(), "analyze sinks") != commands.end());
  REQUIRE(std::find(commands.begin(), commands.end(), "steer delete") != commands.end());
  int checked = 0;
  for (const std::string& command : commands) {
    std::istringstream help(cli(command + " --help").out);
    std::string option;
    for (std::string line; std::getline(help, line);) {
      if (line.rfind("  --", 0) == 0) {
        option = line.size() > 4 && line.compare(line.size() - 4, 4, " <n>") == 0 ? line.substr(2) : "";
      } else if (!option.empty() && line.rfind("      ", 0) == 0) {
        const bool ranged = line.find("≥ ") != std::string::npos || line.find("> ") != std::string::npos ||
                            line.find("in [") != std::string::npos || line.find("in (") != std::string::npos;
        REQUIRE_MSG(ranged, command << " " << option << ": " << line);
        ++checked;
        option.clear();
      }
    }
  }
  REQUIRE(checked > 30);
  auto r = cli("remove r --model m --train t.bin --autopilot --autopilot-min-gap 0x10");
  REQUIRE_MSG(
      r.status == 2 && r.err.find("--autopilot-min-gap: expects an integer, got '0x10'") != std::string::npos,
      r.err);
  r = cli("tokenize t.txt --tokenizer m --out t.bin --repeat-seed -1");
  REQUIRE_MSG(r.status == 2 && r.err.find("--repeat-seed") != std::string::npos, r.err);
}

TEST_CASE(every_analysis_runs_from_the_command_line) {
  TempDir dir;
  const std::string d = dir.path();
  const ModelShape c = smallConfig();
  saveModel(*randomModel(c), d + "/m");
  const auto tokens = randomTokens(c, 1, 400, 4).flatten();
  writeTokens(d + "/t.bin",
              std::vector<int32_t>(tokens.data_ptr<int64_t>(), tokens.data_ptr<int64_t>() + 400), 101);
  const std::string data = " --data " + d + "/t.bin --sequences 3 --length 16";

  auto r = cli("analyze norms " + d + "/m" + data);
  REQUIRE_MSG(r.status == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE_EQ(j["header"]["sequences"], 3);
  REQUIRE_EQ(j["header"]["norms"], "LayerNorm");
  REQUIRE_EQ(j["residual_norms"].size(), size_t(c.nLayer + 1));

  r = cli("analyze sinks " + d + "/m" + data + " --threshold 0 --out " + d + "/sinks.json");
  REQUIRE_MSG(r.status == 2 && r.err.find("--threshold") != std::string::npos, r.err);  // every head a sink
  r = cli("analyze sinks " + d + "/m" + data + " --threshold 0.2 --out " + d + "/sinks.json");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(nlohmann::json::parse(readTextFile(d + "/sinks.json"))["sink_share"].size(),
             size_t(c.nLayer * c.nHead));

  // --document-starts: the sequences that start at the end-of-text token (100) before a document; the same
  // sinks as consecutive chunks of a file that holds just those sequences.
  std::vector<int32_t> documents, starts;
  for (int i = 0; i < 200; ++i) documents.push_back(i % 20 == 7 ? 100 : (i * 37) % 100);
  for (int at : {7, 27, 47}) starts.insert(starts.end(), documents.begin() + at, documents.begin() + at + 16);
  writeTokens(d + "/documents.bin", documents, 101);
  writeTokens(d + "/starts.bin", starts, 101);
  r = cli("analyze sinks " + d + "/m --data " + d + "/documents.bin --sequences 3 --document-starts");
  REQUIRE_MSG(r.status == 0, r.err);
  const auto fromDocuments = nlohmann::json::parse(r.out);
  REQUIRE_EQ(fromDocuments["header"]["data"],
             "documents.bin: 3 documents × 16 tokens, each from the end-of-text token before it");
  r = cli("analyze sinks " + d + "/m --data " + d + "/starts.bin --sequences 3");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(fromDocuments["mean_position0_attention"],
             nlohmann::json::parse(r.out)["mean_position0_attention"]);

  r = cli("analyze dla " + d + "/m" + data + " --head 1.3 --trace-sequence 2 --csv " + d + "/nmae.csv");
  REQUIRE_MSG(r.status == 0, r.err);
  j = nlohmann::json::parse(r.out);
  REQUIRE(j["overall_nmae_percent"].get<double>() > 1.0);
  REQUIRE_EQ(j["trace"]["dla"].size(), 15u);
  REQUIRE(readTextFile(d + "/nmae.csv").rfind("nmae_percent,H0,H1,H2,H3\nL0,", 0) == 0);

  r = cli("analyze neurons " + d + "/m" + data + " --top 2");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(nlohmann::json::parse(r.out)["ablations"].size(), 2u);
  r = cli("analyze neurons " + d + "/m" + data + " --top 200");  // more than the layer's 128: all, said so
  REQUIRE_MSG(r.status == 0 && r.err.find("note: --top 200: the layer has 128 neurons; all are ablated") !=
                                   std::string::npos,
              r.err);
  REQUIRE_EQ(nlohmann::json::parse(r.out)["ablations"].size(), 128u);

  // Patching with a prompt set from a file; every grid also as CSV.
  IoiPromptSet set;
  set.frame = "{A} {B} {S}";
  set.length = 6;
  set.firstNamePosition = 1;
  set.secondNamePosition = 2;
  set.subjectPosition = 3;
  set.endPosition = 5;
  for (int i = 0; i < 4; ++i) {
    IoiPrompt p;
    p.order = "ABBA";
    p.clean = {100, 10 + i, 20 + i, 20 + i, 30, 31};
    p.corrupted = {100, 10 + i, 20 + i, 10 + i, 30, 31};
    p.correctId = 10 + i;
    p.wrongId = 20 + i;
    set.prompts.push_back(p);
  }
  writeFileAtomic(d + "/ioi.json", toJson(set).dump());
  r = cli("analyze patching " + d + "/m --prompts " + d + "/ioi.json --csv-dir " + d + "/grids");
  REQUIRE_MSG(r.status == 0, r.err);
  j = nlohmann::json::parse(r.out);
  REQUIRE_EQ(j["grids"].size(), 3u);
  REQUIRE_EQ(j["grids"][0]["activation"].size(), size_t(c.nLayer * 6));
  REQUIRE(std::filesystem::exists(d + "/grids/head_positions_error.csv"));
  r = cli("analyze circuit " + d + "/m --prompts " + d + "/ioi.json --edges 100000 --check 4096");
  REQUIRE_MSG(r.status == 0, r.err);
  const auto edgeCount = nlohmann::json::parse(r.out)["edges"].size();
  REQUIRE_EQ(nlohmann::json::parse(r.out)["circuit"]["edges"], edgeCount);
  for (const std::string& said :
       {"note: --edges 100000: the graph has " + std::to_string(edgeCount) +
            " edges; the circuit is all of them",
        "note: --check 4096: the graph has " + std::to_string(edgeCount) + " edges; all are checked"})
    REQUIRE_MSG(r.err.find(said) != std::string::npos, r.err);

  r = cli("analyze calibration " + d + "/m --compare " + d + "/m" + data);
  REQUIRE_MSG(r.status == 2 && r.err.find("no tokenizer files") != std::string::npos,
              r.err);  // prompts need one
  r = cli("analyze calibration " + d + "/m --compare " + d + "/m --prompt ''" + data + " --seed 3");
  REQUIRE_MSG(r.status == 0, r.err);
  // The header names what chose the continuations; at temperature 0 the sampled one had been the greedy one.
  REQUIRE_EQ(nlohmann::json::parse(r.out)["header"]["seed"].get<int>(), 3);
  REQUIRE_EQ(nlohmann::json::parse(r.out)["header"]["temperature"].get<double>(), 1.0);
  r = cli("analyze calibration " + d + "/m --prompt ''" + data + " --temperature 0");
  REQUIRE_MSG(r.status == 2 && r.err.find("--temperature") != std::string::npos, r.err);

  // Mistakes are named.
  r = cli("analyze dla " + d + "/m" + data + " --head 7.0");
  REQUIRE(r.status == 2 && r.err.find("head L7H0 does not exist") != std::string::npos);
  r = cli("analyze nonsense " + d + "/m");
  REQUIRE(r.status == 2 && r.err.find("unknown analysis 'nonsense' (norms, sinks,") != std::string::npos);
  r = cli("analyze norms " + d + "/m --data " + d + "/t.bin --length 99");
  REQUIRE(r.status == 2 && r.err.find("longer than the model's context (16)") != std::string::npos);
  r = cli("analyze norms " + d + "/m --step 5 --data " + d + "/t.bin");
  REQUIRE_MSG(
      r.status == 2 && r.err.find("/m is not a run directory (--step picks one of a run's checkpoints)") !=
                           std::string::npos,
      r.err);
  // Limits are named by the option, not by the request field behind it ("\"sequences\" must be …").
  r = cli("analyze norms " + d + "/m --data " + d + "/t.bin --sequences 100000");
  REQUIRE_MSG(r.status == 2 && r.err.find("--sequences") != std::string::npos, r.err);
  r = cli("analyze logit-lens " + d + "/m --data " + d + "/t.bin --sequences 4 --trace-sequence 4");
  REQUIRE_MSG(
      r.status == 2 && r.err.find("--trace-sequence 4 is not among the sequences read") != std::string::npos,
      r.err);
  // An output never replaces what its command reads: the tokens had become JSON, the weights logits.
  const std::string tokenBytes = readTextFile(d + "/t.bin"),
                    weights = readTextFile(d + "/m/model.safetensors");
  r = cli("analyze norms " + d + "/m --data " + d + "/t.bin --out " + d + "/t.bin");
  REQUIRE_MSG(r.status == 2 && r.err.find("--out " + d + "/t.bin is the input") != std::string::npos, r.err);
  r = cli("analyze dla " + d + "/m --data " + d + "/t.bin --out " + d + "/r.json --csv " + d + "/./r.json");
  REQUIRE_MSG(r.status == 2 && r.err.find("are both") != std::string::npos, r.err);  // the CSV had been lost
  r = cli("logits " + d + "/m --tokens 1,2 --out " + d + "/m/model.safetensors");
  REQUIRE_MSG(r.status == 2 && r.err.find("is a file of the model folder") != std::string::npos, r.err);
  REQUIRE(readTextFile(d + "/t.bin") == tokenBytes && readTextFile(d + "/m/model.safetensors") == weights);
  r = cli("analyze norms " + d + "/m --data " + d + "/t.bin --out " + d + "/m/norms.json");
  REQUIRE_MSG(r.status == 0, r.err);  // a result of its own beside the model is welcome
}

TEST_CASE(text_pipeline_from_corpus_to_evaluation_and_generation) {
  TempDir dir;
  const std::string d = dir.path();
  auto r = cli("corpus --out " + d + "/data --train-mb 0.4 --val-mb 0.05 --alt-mb 0.05 --seed 3");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(nlohmann::json::parse(r.out)["files"]["alt.txt"]["style"], "alternative");
  REQUIRE(r.err.find("corpus main") != std::string::npos);  // progress goes to stderr
  REQUIRE_EQ(nlohmann::json::parse(readTextFile(d + "/data/corpus.json"))["format"], "normfree-corpus");

  r = cli("train-tokenizer " + d + "/data/train.txt --out " + d + "/m --vocab 1000");
  REQUIRE_MSG(r.status == 0, r.err);
  const int vocab = nlohmann::json::parse(r.out)["vocab_size"];
  REQUIRE(vocab > 300 && vocab <= 1000);

  r = cli("tokenize " + d + "/data/val.txt --tokenizer " + d + "/m --out " + d + "/data/val.bin");
  REQUIRE_MSG(r.status == 0, r.err);
  const auto tokenized = nlohmann::json::parse(r.out);
  REQUIRE(tokenized["tokens"].get<int64_t>() > 5000);
  REQUIRE_EQ(TokenFile::open(d + "/data/val.bin").size(), tokenized["tokens"].get<int64_t>());

  r = cli("ioi --tokenizer " + d + "/m --count 8 --out " + d + "/ioi.json");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(nlohmann::json::parse(readTextFile(d + "/ioi.json"))["prompts"].size(), 8u);

  // A model for that tokenizer, evaluated and sampled.
  r = cli("init --out " + d + "/m --layers 1 --heads 2 --d-model 16 --context 32 --vocab " +
          std::to_string(vocab));
  REQUIRE_MSG(r.status == 0, r.err);
  r = cli("eval " + d + "/m " + d + "/data/val.bin --max-tokens 640");
  REQUIRE_MSG(r.status == 0, r.err);
  auto e = nlohmann::json::parse(r.out);
  REQUIRE_EQ(e["tokens"], 640);
  REQUIRE_EQ(e["chunks"], 20);
  REQUIRE(std::abs(e["mean_loss"].get<double>() - std::log(vocab)) < 1.0);  // untrained: near uniform
  REQUIRE_MSG(r.err.find("note:") == std::string::npos, r.err);  // its own tokenizer's data: nothing to say
  // Data whose end-of-text is not the model's: evaluated, with a note that it may be another tokenizer's.
  r = cli("init --out " + d + "/other --layers 1 --heads 2 --d-model 16 --context 32 --vocab " +
          std::to_string(vocab) + " --eot 5");
  REQUIRE_MSG(r.status == 0, r.err);
  r = cli("eval " + d + "/other " + d + "/data/val.bin --max-tokens 640");
  REQUIRE_MSG(
      r.status == 0 && r.err.find("val.bin was tokenized with end-of-text id " + std::to_string(vocab - 1) +
                                  ", the model's is 5") != std::string::npos,
      r.err);
  // Data of another tokenizer of the same size (trained on other text, with the same end-of-text id) reads
  // as valid ids: the sidecar's tokenizer fingerprint tells, for eval and for a training run.
  r = cli("train-tokenizer " + d + "/data/alt.txt --out " + d + "/tok2 --min-frequency 1 --vocab " +
          std::to_string(vocab));
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(nlohmann::json::parse(r.out)["vocab_size"].get<int>(), vocab);
  r = cli("tokenize " + d + "/data/val.txt --tokenizer " + d + "/tok2 --out " + d + "/data/val2.bin");
  REQUIRE_MSG(r.status == 0, r.err);
  r = cli("eval " + d + "/m " + d + "/data/val2.bin --max-tokens 640");
  REQUIRE_MSG(r.status == 0 &&
                  r.err.find("val2.bin was tokenized by another tokenizer than the model's " + d + "/m/") !=
                      std::string::npos &&
                  r.err.find("it names the tokenizer in " + d + "/tok2") != std::string::npos,
              r.err);
  r = cli("finetune " + d + "/other-run --model " + d + "/m --train " + d +
          "/data/val2.bin --steps 1 --micro-batch 1 --context 16");
  REQUIRE_MSG(
      r.status == 0 && r.err.find("warning: " + d + "/data/val2.bin was tokenized by another tokenizer") !=
                           std::string::npos,
      r.err);
  REQUIRE(readTextFile(d + "/other-run/metrics.jsonl").find("\"other_tokenizer\"") != std::string::npos);
  r = cli("resume " + d + "/other-run --steps 2");  // its files are read again: said again
  REQUIRE_MSG(r.status == 0 && r.err.find("val2.bin was tokenized by another tokenizer") != std::string::npos,
              r.err);
  // Its training file made again in place from other text: a resume had trained on, unsaid.
  r = cli("tokenize " + d + "/data/alt.txt --tokenizer " + d + "/tok2 --out " + d +
          "/data/val2.bin --overwrite");
  REQUIRE_MSG(r.status == 0, r.err);
  r = cli("resume " + d + "/other-run --steps 3");
  REQUIRE_MSG(r.status == 0 &&
                  r.err.find("val2.bin is not the file the checkpoint of step 2 read") != std::string::npos,
              r.err);

  const std::string generate =
      "generate " + d + "/m --prompt 'When Mary and John' --max-new-tokens 8 --no-stop";
  auto g1 = cli(generate + " --seed 5"), g2 = cli(generate + " --seed 5"), g3 = cli(generate + " --seed 6");
  REQUIRE_MSG(g1.status == 0, g1.err);
  REQUIRE_EQ(nlohmann::json::parse(g1.out)["tokens"].size(), 8u);
  REQUIRE(g1.out == g2.out);
  REQUIRE(nlohmann::json::parse(g1.out)["tokens"] != nlohmann::json::parse(g3.out)["tokens"]);
  REQUIRE(nlohmann::json::parse(g1.out).count("unknown_tokens") == 0);
  // The record names every setting that chose the text: its top-p and stop had been left out, so a rerun from
  // the record gave another continuation.
  const auto nucleus = nlohmann::json::parse(cli(generate + " --seed 5 --top-p 0.5").out);
  REQUIRE_EQ(nucleus["top_p"].get<double>(), 0.5);
  REQUIRE_EQ(nucleus["stop_at_end_of_text"].get<bool>(), false);
  REQUIRE_EQ(nlohmann::json::parse(g1.out)["top_p"].get<double>(), 1.0);
  // Greedy decoding samples nothing: a top-k or seed given with it had been ignored and reported as used.
  r = cli(generate + " --temperature 0 --top-k 5");
  REQUIRE_MSG(r.status == 2 && r.err.find("--temperature 0 is greedy") != std::string::npos, r.err);
  r = cli(generate + " --temperature 0");
  REQUIRE_MSG(r.status == 0 && nlohmann::json::parse(r.out).count("seed") == 0, r.err);
  // A model with four times the tokenizer's ids chooses ids it cannot spell: the text had just left them out.
  r = cli("init --out " + d + "/wide --layers 1 --heads 2 --d-model 16 --context 32 --vocab " +
          std::to_string(4 * vocab));
  REQUIRE_MSG(r.status == 0, r.err);
  r = cli("generate " + d + "/wide --tokenizer " + d +
          "/m --prompt 'When Mary' --max-new-tokens 16 --no-stop");
  REQUIRE_MSG(
      r.status == 0 && r.err.find("which the tokenizer in " + d + "/m does not have") != std::string::npos,
      r.err);
  REQUIRE(nlohmann::json::parse(r.out)["unknown_tokens"].get<int>() > 0);
  // A run directory stands for its model where a model or a tokenizer is asked for.
  r = cli("finetune " + d + "/run --model " + d + "/m --train " + d +
          "/data/val.bin --steps 1 --micro-batch 1 --context 16");
  REQUIRE_MSG(r.status == 0, r.err);
  r = cli("ioi --tokenizer " + d + "/run --count 4");
  REQUIRE_MSG(r.status == 0, r.err);
  r = cli("generate " + d + "/m --tokenizer " + d + "/run --prompt 'When Mary' --max-new-tokens 2");
  REQUIRE_MSG(r.status == 0, r.err);
  r = cli("plan --model " + d + "/run --memory 1G --json");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(nlohmann::json::parse(r.out)["model"], d + "/run/final");
  r = cli("finetune " + d + "/run2 --model " + d + "/run --train " + d +
          "/data/val.bin --steps 1 --micro-batch 1 --context 16");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(nlohmann::json::parse(readTextFile(d + "/run2/config.json"))["model"], d + "/run/final");

  // Data made with a larger vocabulary than the model's: the error names the file and the token.
  r = cli("init --out " + d + "/small --layers 1 --heads 2 --d-model 16 --context 32 --vocab 100");
  REQUIRE_MSG(r.status == 0, r.err);
  r = cli("eval " + d + "/small " + d + "/data/val.bin");
  REQUIRE_EQ(r.status, 1);
  REQUIRE_MSG(r.err.find("val.bin") != std::string::npos &&
                  r.err.find("outside the model's vocabulary of 100") != std::string::npos,
              r.err);
  r = cli("tokenize " + d + "/nothing.txt --tokenizer " + d + "/m --out " + d + "/x.bin");
  REQUIRE(r.status == 1 && r.err.find("nothing.txt") != std::string::npos);
  // --out naming the input would replace the text by its tokens: refused, the text kept.
  const std::string text = readTextFile(d + "/data/val.txt");
  r = cli("tokenize " + d + "/data/val.txt --tokenizer " + d + "/m --out " + d + "/data/../data/val.txt");
  REQUIRE_MSG(r.status == 2 && r.err.find("is the input") != std::string::npos, r.err);
  REQUIRE(readTextFile(d + "/data/val.txt") == text);
}

// Hugging Face's LlamaTokenizer starts a prompt with <s>, and TinyLlama continues one without it otherwise:
// generate had left it out, unsaid.
TEST_CASE(generate_starts_a_llama_prompt_with_bos_as_hugging_face_does) {
  TempDir dir;
  trainSentencePiece(dir.path("sp"), corpusLines(1, 300), 1000);
  const std::unique_ptr<Tokenizer> tokenizer = loadTokenizer(dir.path("sp"));
  REQUIRE(tokenizer->huggingFaceAddsBos());
  auto r = cli("init --out " + dir.path("m") +
               " --family llama --layers 1 --heads 2 --d-model 16 --context 32 --vocab " +
               std::to_string(tokenizer->vocabSize()));
  REQUIRE_MSG(r.status == 0, r.err);
  std::vector<int32_t> expected{tokenizer->bosId()};
  for (int32_t id : tokenizer->encode("When Mary and John")) expected.push_back(id);
  for (const char* prompt : {"'When Mary and John'", "'<s>When Mary and John'"}) {  // <s> by hand: not twice
    r = cli("generate " + dir.path("m") + " --tokenizer " + dir.path("sp") + " --prompt " + prompt +
            " --max-new-tokens 2 --temperature 0");
    REQUIRE_MSG(r.status == 0, r.err);
    REQUIRE_EQ(nlohmann::json::parse(r.out)["prompt_tokens"].get<std::vector<int32_t>>(), expected);
  }
  // GPT-2's tokenizer adds nothing: the prompt's own tokens only.
  const std::string tinyGpt2 = std::string(NF_REFERENCE_DIR) + "/../../resources/tiny-gpt2";
  r = cli("generate " + tinyGpt2 + " --prompt 'When Mary' --max-new-tokens 1 --temperature 0");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(nlohmann::json::parse(r.out)["prompt_tokens"].get<std::vector<int32_t>>(),
             loadTokenizer(tinyGpt2)->encode("When Mary"));
}

// A folder that holds a model, a tokenizer or a corpus, and a token file, are not written over unless asked:
// `init --out` aimed at the bundled model's folder replaced its weights unsaid.
TEST_CASE(init_and_train_tokenizer_refuse_to_replace_what_a_folder_holds) {
  TempDir dir;
  const std::string m = dir.path("m");
  const std::string shape = " --layers 1 --heads 2 --d-model 16 --context 8 --vocab 300";
  REQUIRE_EQ(cli("init --out " + m + shape + " --seed 1").status, 0);
  const std::string weights = readTextFile(m + "/model.safetensors");
  auto r = cli("init --out " + m + shape + " --seed 2");
  REQUIRE_MSG(r.status == 2 && r.err.find(m + "/config.json exists") != std::string::npos &&
                  r.err.find("--overwrite") != std::string::npos,
              r.err);
  REQUIRE(readTextFile(m + "/model.safetensors") == weights);
  r = cli("init --out " + m + shape + " --seed 2 --overwrite");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE(readTextFile(m + "/model.safetensors") != weights);

  // A model's folder takes a tokenizer (the usual order is the other way round), but not a second one.
  writeFileAtomic(dir.path("text.txt"), "the cat sat on the mat<|endoftext|>the dog sat on the log");
  r = cli("train-tokenizer " + dir.path("text.txt") + " --out " + m + " --vocab 270 --min-frequency 1");
  REQUIRE_MSG(r.status == 0, r.err);
  const std::string merges = readTextFile(m + "/merges.txt");
  r = cli("train-tokenizer " + dir.path("text.txt") + " --out " + m + " --vocab 260 --min-frequency 1");
  REQUIRE_MSG(r.status == 2 && r.err.find(m + "/vocab.json exists") != std::string::npos, r.err);
  REQUIRE(readTextFile(m + "/merges.txt") == merges);
  // Replaced, no other tokenizer is left to be read before the new one.
  writeFileAtomic(m + "/tokenizer.json", "{}");
  r = cli("train-tokenizer " + dir.path("text.txt") + " --out " + m +
          " --vocab 260 --min-frequency 1 --overwrite");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE(readTextFile(m + "/merges.txt") != merges);
  REQUIRE(!std::filesystem::exists(m + "/tokenizer.json"));

  // Nor are a corpus and a token file (the data a run may resume on) made again in place unasked.
  const std::string data = dir.path("data");
  REQUIRE_EQ(cli("corpus --out " + data + " --train-mb 0.02 --val-mb 0.01 --alt-mb 0.01").status, 0);
  const std::string train = readTextFile(data + "/train.txt");
  r = cli("corpus --out " + data + " --train-mb 0 --val-mb 0.01 --alt-mb 0.01 --seed 4");
  REQUIRE_MSG(r.status == 2 && r.err.find(data + "/train.txt exists") != std::string::npos, r.err);
  REQUIRE(readTextFile(data + "/train.txt") == train);
  const std::string tokenize =
      "tokenize " + data + "/val.txt --tokenizer " + m + " --out " + data + "/val.bin";
  REQUIRE_EQ(cli(tokenize).status, 0);
  r = cli(tokenize);
  REQUIRE_MSG(r.status == 2 && r.err.find(data + "/val.bin exists") != std::string::npos, r.err);
  REQUIRE_EQ(cli(tokenize + " --overwrite").status, 0);
  const std::string jobs = "rare-jobs " + data + "/val.bin --documents 5 --out " + data + "/jobs.bin";
  r = cli(jobs);
  REQUIRE_MSG(r.status == 0 && nlohmann::json::parse(r.out)["rare_job_documents"] == 5, r.err);
  r = cli(jobs);
  REQUIRE_MSG(r.status == 2 && r.err.find(data + "/jobs.bin exists") != std::string::npos, r.err);
  // Replaced, the folder holds one corpus: the train.txt of the seed before, which the new manifest does
  // not list, is gone; the token files made from the corpus are not the corpus's.
  r = cli("corpus --out " + data + " --train-mb 0 --val-mb 0.01 --alt-mb 0.01 --seed 4 --overwrite");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE(!std::filesystem::exists(data + "/train.txt"));
  REQUIRE(std::filesystem::exists(data + "/val.bin"));
  // Options that shape random repeats did nothing without them.
  r = cli(tokenize + " --overwrite --repeat-span 5");
  REQUIRE_MSG(r.status == 2 && r.err.find("--repeat-span shapes the random repeats") != std::string::npos,
              r.err);
}

// bf16 autocast exists on CUDA only: asked for on the CPU it is refused, not silently float32.
TEST_CASE(bf16_off_cuda_is_refused) {
  TempDir dir;
  auto model = randomModel(smallConfig());
  saveModel(*model, dir.path("m"));
  writeTokens(dir.path("t.bin"), std::vector<int32_t>(200, 3), 101);
  auto r = cli("logits " + dir.path("m") + " --tokens 1,2 --bf16");
  REQUIRE_MSG(r.status == 2 && r.err.find("--bf16") != std::string::npos, r.err);
  r = cli("finetune " + dir.path("run") + " --model " + dir.path("m") + " --train " + dir.path("t.bin") +
          " --steps 1 --bf16");
  REQUIRE_MSG(r.status == 2 && r.err.find("bf16 autocast on CUDA") != std::string::npos, r.err);
  REQUIRE(!std::filesystem::exists(dir.path("run")));
  r = cli("eval " + dir.path("m") + " " + dir.path("t.bin") + " --bf16");
  REQUIRE_MSG(r.status == 2 && r.err.find("--bf16") != std::string::npos, r.err);
}

TEST_CASE(remove_then_export_from_the_command_line) {
  TempDir dir;
  const std::string d = dir.path();
  auto model = randomModel(smallConfig());
  saveModel(*model, d + "/m");
  const auto tokens = randomTokens(smallConfig(), 1, 3000, 2).flatten();
  writeTokens(d + "/t.bin",
              std::vector<int32_t>(tokens.data_ptr<int64_t>(), tokens.data_ptr<int64_t>() + 3000), 101);
  writeFileAtomic(d + "/s.json", R"({"events": [{"step": 2, "site": "LN_mlp", "layer": "all"},
    {"step": 4, "site": "LN_qk", "layer": "all"}, {"step": 6, "site": "LN_v", "layer": "all"}, {"step": 8, "site": "LN_f"}]})");
  auto r = cli("schedule --validate " + d + "/s.json --layers 2 --steps 12");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE(nlohmann::json::parse(r.out)["layernorm_free_at_end"] == true);
  REQUIRE(nlohmann::json::parse(r.out)["layers"] == 2 && nlohmann::json::parse(r.out)["steps"] == 12);
  // Without --layers, GPT-2 Small's 12 are assumed: said, as a 2-layer schedule then reads as incomplete.
  r = cli("schedule --validate " + d + "/s.json");
  REQUIRE_MSG(r.status == 0 && r.err.find("note: validated for 12 layers and 300 steps") != std::string::npos,
              r.err);
  REQUIRE(nlohmann::json::parse(r.out)["layers"] == 12);
  // Valid is not complete: a treatment the run uses that the schedule never switches off is named, site
  // by site (validate had called such a schedule valid and nothing more).
  r = cli("schedule --validate " + d + "/s.json --layers 2 --steps 12 --eot-treatment");
  REQUIRE_MSG(r.status == 0, r.err);
  nlohmann::json v = nlohmann::json::parse(r.out);
  REQUIRE(v["layernorm_free_at_end"] == false && v["treatments"]["eot"] == true &&
          v["treatments"]["pos0"] == false);
  REQUIRE_EQ(v["eot_treatment_left_on"], nlohmann::json({"LN_v.0", "LN_v.1"}));
  REQUIRE(v["pos0_treatment_left_on"].empty() && v["never_fake"].empty());
  r = cli("remove " + d + "/run --model " + d + "/m --train " + d + "/t.bin --eval " + d +
          "/t.bin --schedule " + d +
          "/s.json --steps 12 --micro-batch 4 --context 16 --eval-interval 6 --eval-tokens 256 "
          "--checkpoint-interval 3 --keep-checkpoints 0");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE(nlohmann::json::parse(r.out)["finished"] == true);
  REQUIRE(r.err.find("next: step 2: LN_mlp.all") !=
          std::string::npos);  // the progress line names the next event
  // --keep-checkpoints 0: every checkpoint stays, for analyses over the removal (the default keeps two).
  std::vector<std::string> checkpoints;
  for (const auto& entry : std::filesystem::directory_iterator(d + "/run/checkpoints"))
    if (entry.is_directory()) checkpoints.push_back(entry.path().filename().string());
  std::sort(checkpoints.begin(), checkpoints.end());
  REQUIRE(checkpoints == std::vector<std::string>({run::checkpointName(3), run::checkpointName(6),
                                                   run::checkpointName(9), run::checkpointName(12)}));
  r = cli("analyze sinks " + d + "/run --step 3 --data " + d + "/t.bin --sequences 2 --length 16");
  REQUIRE_MSG(r.status == 0, r.err);
  // An output never lands among a run's own files, at any depth (its log had become an analysis, its
  // checkpoint's state.json too); one of its own beside them is welcome.
  const std::string log = readTextFile(run::metricsPath(d + "/run"));
  for (const std::string& out :
       {run::metricsPath(d + "/run"), run::checkpointStatePath(run::checkpointPath(d + "/run", 3)),
        d + "/run/checkpoints/notes.json", d + "/run/final/../schedule.json"}) {
    r = cli("analyze sinks " + d + "/run --step 3 --data " + d + "/t.bin --sequences 2 --length 16 --out " +
            out);
    REQUIRE_MSG(r.status == 2 && r.err.find("among the files it trains, checkpoints and resumes from") !=
                                     std::string::npos,
                out << ": " << r.err);
  }
  // Also where the run is given by one of its models (its checkpoint, its final/).
  r = cli("analyze sinks " + run::checkpointPath(d + "/run", 3) + " --data " + d +
          "/t.bin --sequences 2 --length 16 --out " + run::metricsPath(d + "/run"));
  REQUIRE_MSG(r.status == 2 && r.err.find("among the files it trains") != std::string::npos, r.err);
  REQUIRE(readTextFile(run::metricsPath(d + "/run")) == log);
  r = cli("analyze sinks " + d + "/run --step 3 --data " + d + "/t.bin --sequences 2 --length 16 --out " + d +
          "/run/sinks-3.json");
  REQUIRE_MSG(r.status == 0, r.err);
  // Trained on with fewer kept: the old ones go at the next checkpoint, and config.json says so.
  // Two kept means two: the last one vouched for by a sane step (12) counts among them (it was kept as a
  // third).
  r = cli("resume " + d + "/run --steps 15 --keep-checkpoints 2");
  REQUIRE_MSG(r.status == 0, r.err);
  checkpoints.clear();
  for (const auto& entry : std::filesystem::directory_iterator(d + "/run/checkpoints"))
    if (entry.is_directory()) checkpoints.push_back(entry.path().filename().string());
  std::sort(checkpoints.begin(), checkpoints.end());
  REQUIRE(checkpoints == std::vector<std::string>({run::checkpointName(12), run::checkpointName(15)}));
  REQUIRE_EQ(nlohmann::json::parse(readTextFile(run::configPath(d + "/run")))["keep_checkpoints"], 2);
  r = cli("analyze sinks " + d + "/run --step 3 --data " + d + "/t.bin --sequences 2 --length 16");  // pruned
  REQUIRE_MSG(r.status == 2 && r.err.find("the run keeps those of steps 12, 15") != std::string::npos, r.err);
  r = cli("export " + d + "/run --out " + d + "/lnfree --data " + d + "/t.bin");
  REQUIRE_MSG(r.status == 0, r.err);
  const auto e = nlohmann::json::parse(r.out);
  REQUIRE(e["max_abs_logit_difference_folded"].get<double>() <= 1e-4);
  REQUIRE(e["max_abs_logit_difference_standard"].get<double>() <= 1e-4);
  REQUIRE(e["float16_safe"] == false);
  REQUIRE_EQ(e["compared_on_tokens"],
             8 * 16);  // 8 chunks of the file, the model's context each (one had been)
  REQUIRE(loadModel(d + "/lnfree/folded")->norms().isLayerNormFree());
  // Exporting again is refused without --overwrite; with it, both folders are replaced whole: a file of
  // the old export does not survive, and no temporary folder is left.
  writeFileAtomic(d + "/lnfree/standard/stale.txt", "from before");
  r = cli("export " + d + "/run --out " + d + "/lnfree --data " + d + "/t.bin");
  REQUIRE_MSG(r.status == 2 && r.err.find("lnfree/folded exists") != std::string::npos, r.err);
  REQUIRE(std::filesystem::exists(d + "/lnfree/standard/stale.txt"));
  r = cli("export " + d + "/run --out " + d + "/lnfree --overwrite --data " + d + "/t.bin");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE(!std::filesystem::exists(d + "/lnfree/standard/stale.txt"));
  std::vector<std::string> exported;
  for (const auto& entry : std::filesystem::directory_iterator(d + "/lnfree"))
    exported.push_back(entry.path().filename().string());
  std::sort(exported.begin(), exported.end());
  REQUIRE(exported == std::vector<std::string>({"folded", "standard"}));
  REQUIRE(std::filesystem::exists(d + "/lnfree/standard/config.json"));

  // A run that is not LN-free cannot be exported; a bad schedule is refused with its reasons.
  r = cli("export " + d + "/m --out " + d + "/nope");
  REQUIRE(r.status == 1 && r.err.find("only a model whose every site is fake") != std::string::npos);
  REQUIRE(!std::filesystem::exists(d + "/nope"));  // nothing made of it, not even the folder
  writeFileAtomic(d + "/bad.json",
                  R"([{"step": 2, "site": "LN_mlp", "layer": 5}, {"step": 40, "site": "LN_f"}])");
  r = cli("schedule --validate " + d + "/bad.json --layers 2 --steps 12");
  REQUIRE(r.status == 1 && r.err.find("layer 5 is out of range") != std::string::npos &&
          r.err.find("past the last step 11") != std::string::npos);
  // The warnings of a run's start reach the terminal (they were only in metrics.jsonl).
  writeFileAtomic(d + "/partial.json", R"({"events": [{"step": 1, "site": "LN_mlp", "layer": "all"},
    {"step": 1, "action": "end_pos0_treatment", "site": "LN_mlp", "layer": 0}]})");
  r = cli("schedule --validate " + d + "/partial.json --layers 2 --steps 12");
  REQUIRE_MSG(r.status == 0, r.err);
  v = nlohmann::json::parse(r.out);  // the treatments it switches off somewhere are taken as the run's
  REQUIRE(v["valid"] == true && v["layernorm_free_at_end"] == false && v["treatments"]["pos0"] == true);
  REQUIRE_EQ(v["never_fake"], nlohmann::json({"LN_qk.0", "LN_v.0", "LN_qk.1", "LN_v.1", "LN_f"}));
  REQUIRE_EQ(v["pos0_treatment_left_on"], nlohmann::json({"LN_mlp.1"}));
  r = cli("remove " + d + "/partial --model " + d + "/m --train " + d + "/t.bin --schedule " + d +
          "/partial.json --steps 2 --micro-batch 4 --context 16 --pos0-treatment");
  REQUIRE_MSG(r.status == 0 && r.err.find("warning: the schedule never makes") != std::string::npos &&
                  r.err.find("LN_f") != std::string::npos,
              r.err);
  REQUIRE_MSG(r.err.find("warning: the schedule never switches off the position-0 treatment of LN_mlp.1: "
                         "the run will end with it on") != std::string::npos,
              r.err);
  r = cli("schedule --preset gpt2");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(nlohmann::json::parse(r.out)["schedule"]["events"].size(), 37u);  // 12 + 12 + 12 + 1
  // by-depth prints what a model of the depth gets (it printed no events and 300 steps for every depth).
  r = cli("schedule --preset by-depth --layers 48");
  REQUIRE_MSG(r.status == 0, r.err);
  const auto deep = nlohmann::json::parse(r.out);
  REQUIRE_EQ(deep["schedule"]["events"].size(), 145u);  // 48 × 3 + 1
  REQUIRE_EQ(deep["layers"].get<int>(), 48);
  REQUIRE_EQ(cli("schedule --preset gpt2 --layers 4").status, 2);

  // A learning rate far too high from the start: the divergence is caught at the second step, with its own
  // exit status and the way out (no checkpoint was vouched for by a sane step yet: start again).
  r = cli("remove " + d + "/hot --model " + d + "/m --train " + d + "/t.bin --schedule " + d +
          "/s.json --steps 12 --micro-batch 4 --context 16 --warmup 0 --lr 50 --min-lr 50 "
          "--checkpoint-interval 1");
  REQUIRE_MSG(r.status == 4 && r.err.find("remove: diverged: step 2: the loss") != std::string::npos &&
                  r.err.find("start the run again with a lower learning rate") != std::string::npos,
              r.status << ": " << r.err);
}

TEST_CASE(plan_for_a_gpu_from_any_machine) {
  auto r = cli("plan --shape gpt2 --device cuda --bf16 --memory 80G --json");
  REQUIRE_MSG(r.status == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE_EQ(j["preset"], "gpt2");  // the preset made for 12 layers
  REQUIRE_EQ(j["global_batch"], 512);
  REQUIRE_EQ(j["context"], 1024);
  REQUIRE(j["bf16"] == true && j["fused_attention"] == true);
  REQUIRE_EQ(j["available_bytes"], int64_t{80} << 30);
  REQUIRE_EQ(j["available_from"], "--memory");
  REQUIRE_EQ(j["memory_bytes"]["parameters"], 124439808);
  REQUIRE(j["fits"] == true && j["micro_batch"] == 32 && j["accumulation"] == 16);
  REQUIRE_EQ(j["activation_checkpointing"], false);
  REQUIRE(j["memory_bytes"]["total"].get<int64_t>() <= j["usable_bytes"].get<int64_t>());

  r = cli("plan --shape gpt2 --device cuda --bf16 --memory 80G");  // the table
  REQUIRE_MSG(r.status == 0, r.err);
  for (const char* line : {"parameters   124,439,808", "preset gpt2: 512 sequences × 1024 tokens per step",
                           "bf16 autocast, fused attention", "predicted total",
                           "micro-batch 32 × accumulation 16, activation checkpointing off"})
    REQUIRE_MSG(r.out.find(line) != std::string::npos, "no '" << line << "' in:\n" << r.out);

  // GPT-2 XL on 16 GiB: the plan says it does not fit, and why; that is an answer, not an error.
  r = cli("plan --shape gpt2-xl --device cuda --bf16 --memory 16G --json");
  REQUIRE_MSG(r.status == 0, r.err);
  j = nlohmann::json::parse(r.out);
  REQUIRE_EQ(j["preset"], "gpt2-xl");
  REQUIRE_EQ(j["fits"], false);
  REQUIRE_MSG(j["reason"].get<std::string>().find("AdamW state alone need") != std::string::npos,
              j["reason"]);
}

// `plan --model` for a folder of every family that `init` writes: the planner counts the parameters the
// loaded model has (summed over its tensors), with grouped-query attention, SwiGLU, untied unembeddings and
// biases, and reports the shape it planned with.
TEST_CASE(plan_counts_the_parameters_of_every_family) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> folders = {
      {"gpt2", "--family gpt2 --layers 2 --heads 2 --d-model 16 --vocab 60"},
      {"neox", "--family gpt_neox --layers 2 --heads 2 --d-model 16 --vocab 60"},
      {"llama", "--family llama --layers 2 --heads 4 --kv-heads 2 --d-model 32 --mlp-width 40 --vocab 60"},
      {"qwen2", "--family qwen2 --layers 2 --heads 4 --kv-heads 1 --d-model 32 --mlp-width 24 --vocab 60"}};
  for (const auto& [name, options] : folders) {
    const std::string folder = dir.path(name);
    auto r = cli("init --out " + folder + " " + options);
    REQUIRE_MSG(r.status == 0, r.err);
    int64_t parameters = 0;
    for (const auto& p : loadModel(folder)->parameters()) parameters += p.numel();
    r = cli("plan --model " + folder + " --preset tiny --context 16 --memory 1G --json");
    REQUIRE_MSG(r.status == 0, name + ": " + r.err);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE_MSG(j["memory_bytes"]["parameters"] == parameters,
                name + ": planned " + j["memory_bytes"]["parameters"].dump() + ", the model has " +
                    std::to_string(parameters));
    const auto info = nlohmann::json::parse(cli("info " + folder).out);
    REQUIRE_EQ(j["shape"]["family"], info["family"]);
    REQUIRE_EQ(j["shape"]["n_kv_head"], info["kv_heads"]);
    REQUIRE_EQ(j["shape"]["mlp_width"], info["mlp_width"]);
  }
}

TEST_CASE(plan_a_model_folder_and_fit_a_run) {
  TempDir dir;
  const std::string d = dir.path();
  saveModel(*randomModel(smallConfig()), d + "/m");
  // Two layers: no preset is made for that depth, so the one for any depth plans it (as remove would run).
  auto r = cli("plan --model " + d + "/m --memory 1G --json");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(nlohmann::json::parse(r.out)["preset"], "by-depth");
  r = cli("plan --model " + d + "/m --preset tiny --context 16 --bf16 --memory 1G --json");
  REQUIRE_MSG(r.status == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["model"] == d + "/m" && j["shape"]["n_layer"] == 2 && j["device"] == "cpu");
  REQUIRE(j["bf16"] == false && j["fused_attention"] == false);  // autocast is CUDA only
  REQUIRE(j["fits"] == true && j["micro_batch"] == 32 && j["accumulation"] == 1 && j["context"] == 16);

  // Bad usage.
  REQUIRE_EQ(cli("plan --memory 1G").status, 2);
  REQUIRE_EQ(cli("plan --shape gpt2 --model " + d + "/m --memory 1G").status, 2);
  r = cli("plan --shape gpt2 --memory 80X");
  REQUIRE(r.status == 2 && r.err.find("--memory") != std::string::npos);
  r = cli("plan --shape gpt3 --memory 1G");
  REQUIRE(r.status == 2 && r.err.find("unknown shape 'gpt3'") != std::string::npos);
  if (!torch::cuda::is_available()) {
    r = cli("plan --shape gpt2 --device cuda");
    REQUIRE(r.status == 2 && r.err.find("give --memory") != std::string::npos);
  }

  // --fit keeps micro-batch × accumulation (here 4 × 3) and splits it as the plan says: all 12 at once.
  const auto tokens = randomTokens(smallConfig(), 1, 2000, 3).flatten();
  writeTokens(d + "/t.bin",
              std::vector<int32_t>(tokens.data_ptr<int64_t>(), tokens.data_ptr<int64_t>() + 2000), 101);
  const std::string run = "finetune " + d + "/run --model " + d + "/m --train " + d +
                          "/t.bin --preset tiny --steps 1 --context 16 --micro-batch 4 --accumulation 3";
  r = cli(run + " --fit --activation-checkpointing");
  REQUIRE(r.status == 2 && r.err.find("--fit chooses activation checkpointing itself") != std::string::npos);
  r = cli(run + " --fit");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_MSG(
      r.err.find("fit: micro-batch 12 × accumulation 1, activation checkpointing off") != std::string::npos,
      r.err);
  const auto optimizer = nlohmann::json::parse(readTextFile(d + "/run/config.json"))["optimizer"];
  REQUIRE(optimizer["micro_batch"] == 12 && optimizer["accumulation"] == 1);
  REQUIRE_EQ(optimizer["activation_checkpointing"], false);
  // --activation-checkpointing alone is recorded in the run's settings.
  r = cli("finetune " + d + "/run2 --model " + d + "/m --train " + d +
          "/t.bin --preset tiny --steps 1 --context 16 --activation-checkpointing");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(
      nlohmann::json::parse(readTextFile(d + "/run2/config.json"))["optimizer"]["activation_checkpointing"],
      true);
  // Files given by relative paths are stored whole: a resume from another directory reads the same files.
  namespace fs = std::filesystem;
  r = cli("finetune " + d + "/run3 --model " + fs::relative(d + "/m").string() + " --train " +
          fs::relative(d + "/t.bin").string() + " --preset tiny --steps 1 --context 16");
  REQUIRE_MSG(r.status == 0, r.err);
  const auto stored = nlohmann::json::parse(readTextFile(d + "/run3/config.json"));
  REQUIRE_EQ(fs::weakly_canonical(stored["model"].get<std::string>()), fs::weakly_canonical(d + "/m"));
  REQUIRE(fs::path(stored["train_data"].get<std::string>()).is_absolute());
  REQUIRE_EQ(fs::weakly_canonical(stored["train_data"].get<std::string>()),
             fs::weakly_canonical(d + "/t.bin"));
}

// Inputs that were taken without a word, and gave something else than asked: each refused, or said.
TEST_CASE(options_that_were_ignored_or_changed_unsaid_are_refused) {
  TempDir dir;
  const std::string d = dir.path();
  saveModel(*randomModel(smallConfig()), d + "/m");
  const auto tokens = randomTokens(smallConfig(), 1, 2000, 3).flatten();
  writeTokens(d + "/t.bin",
              std::vector<int32_t>(tokens.data_ptr<int64_t>(), tokens.data_ptr<int64_t>() + 2000), 101);
  const std::string run =
      "finetune " + d + "/r --model " + d + "/m --train " + d + "/t.bin --preset tiny --steps 2";
  auto r = cli(run + " --lr inf");  // had saved a NaN model as finished
  REQUIRE_MSG(r.status == 2 && r.err.find("--lr: must be > 0, got inf") != std::string::npos, r.err);
  r = cli(run + " --context 4096");  // had been cut to the model's positions
  REQUIRE_MSG(r.status == 2 && r.err.find("(--context)") != std::string::npos, r.err);
  r = cli(run + " --context 16 --eval " + d + "/t.bin --eval-tokens 8");  // had evaluated a whole chunk
  REQUIRE_MSG(r.status != 0 && r.err.find("(--eval-tokens)") != std::string::npos, r.err);
  REQUIRE_EQ(cli(run + " --serve-remote").status, 2);  // without --serve it did nothing
  r = cli(run + " --worker-timeout 60");               // one process waits for no one
  REQUIRE_MSG(r.status == 2 && r.err.find("no other workers to wait for") != std::string::npos, r.err);
  r = cli(run +
          " --worker-timeout 1e12 --nproc 2");  // its deadline had overflowed: the workers killed at once
  REQUIRE_MSG(r.status == 2 && r.err.find("--worker-timeout") != std::string::npos, r.err);
  REQUIRE_EQ(cli("schedule --preset tiny --validate " + d + "/none.json").status, 2);  // the file went unread
  r = cli(run + " --context 16 --micro-batch 2");  // the preset's warmup of 20 outlasts the run's 2 steps
  REQUIRE_MSG(r.status == 0 && r.err.find("never reaches its peak") != std::string::npos, r.err);
  r = cli("resume " + d + "/r --autopilot-patience 5");  // a run without the autopilot: it did nothing
  REQUIRE_MSG(r.status != 0 && r.err.find("--autopilot-patience was given") != std::string::npos, r.err);
  r = cli("resume " + d + "/r --lr 1e-4");  // its 2 steps trained: it had finished at once, the rate "used"
  REQUIRE_MSG(r.status != 0 &&
                  r.err.find("trained all its 2 steps, so --lr would change nothing") != std::string::npos,
              r.err);
  writeFileAtomic(d + "/empty.txt", "");  // a tokenizer of bytes alone, with a note blaming the words
  r = cli("train-tokenizer " + d + "/empty.txt --out " + d + "/tok");
  REQUIRE_MSG(r.status != 0 && r.err.find("contains no text to train on") != std::string::npos, r.err);
  // pretrain builds its model afresh, with its family's norms: an LN-free config had trained with LayerNorm.
  CausalLM lnFree = randomModel(smallConfig());
  lnFree->norms().setAll(SiteNorm{NormKind::FakeLN, 2.0});
  saveModel(*lnFree, d + "/ln-free");
  r = cli("pretrain " + d + "/p --model " + d + "/ln-free --train " + d + "/t.bin --steps 1 --context 16");
  REQUIRE_MSG(
      r.status != 0 && r.err.find(d + "/ln-free/config.json") != std::string::npos &&
          r.err.find("pretrain trains a model from scratch with its family's own") != std::string::npos,
      r.err);
  REQUIRE(!std::filesystem::exists(d + "/p/final"));
  r = cli("eval " + d + "/m " + d + "/t.bin --context 16 --max-tokens 10");  // a whole chunk was evaluated
  REQUIRE_MSG(r.status == 2 && r.err.find("less than one chunk of 16") != std::string::npos, r.err);
  r = cli("eval " + d + "/m " + d +
          "/t.bin --context 16 --max-tokens 1000000");  // had been cut to the file unsaid
  REQUIRE_MSG(
      r.status == 0 && r.err.find("holds only 2000 tokens; all of them are evaluated") != std::string::npos,
      r.err);
  REQUIRE_EQ(nlohmann::json::parse(r.out)["max_tokens"].get<int64_t>(), 1000000);
  // A list option given twice adds up: the first --eval had been dropped unsaid.
  writeTokens(d + "/t2.bin",
              std::vector<int32_t>(tokens.data_ptr<int64_t>(), tokens.data_ptr<int64_t>() + 2000), 101);
  r = cli("finetune " + d + "/r2 --model " + d + "/m --train " + d +
          "/t.bin --preset tiny --steps 1 --context 16 "
          "--micro-batch 2 --eval-tokens 32 --eval " +
          d + "/t.bin --eval " + d + "/t2.bin");
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_EQ(readRunConfig(d + "/r2").evalData, (std::vector<std::string>{d + "/t.bin", d + "/t2.bin"}));
  // Devices LibTorch knows but this build does not compute on had ended in an internal error.
  for (const char* device : {"meta", "cpu:3"}) {
    r = cli("logits " + d + "/m --tokens 1 --device " + device);
    REQUIRE_MSG(r.status == 2 && r.err.find("unknown device") != std::string::npos, r.err);
  }
}

// Values the command line could not take, or took and then ignored while reporting them as used.
TEST_CASE(long_values_work_and_options_that_would_do_nothing_are_refused) {
  TempDir dir;
  const std::string d = dir.path();
  ModelShape c = smallConfig();
  c.nPositions = 128;
  saveModel(*randomModel(c), d + "/m");
  // A value longer than a file name (255 bytes) had failed as "File name too long" while outputs were
  // checked against the files given as inputs: logits took no more than ~128 ids.
  std::string ids;
  for (int i = 0; i < 100; ++i) ids += (i ? "," : "") + std::to_string(10 + i % 90);
  auto r = cli("logits " + d + "/m --tokens " + ids);
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE(nlohmann::json::parse(r.out)["shape"] == std::vector<int64_t>({1, 100, 101}));

  const auto tokens = randomTokens(c, 1, 2000, 3).flatten();
  writeTokens(d + "/t.bin",
              std::vector<int32_t>(tokens.data_ptr<int64_t>(), tokens.data_ptr<int64_t>() + 2000), 101);
  const std::string run =
      "finetune " + d + "/r --model " + d + "/m --train " + d + "/t.bin --steps 1 --context 16";
  // Without --eval there is nothing to evaluate: these had been ignored. --eval-interval 0 (no periodic
  // evaluation) agrees, and scripts say it.
  for (const char* option : {" --eval-interval 50", " --eval-tokens 64"}) {
    r = cli(run + option);
    REQUIRE_MSG(r.status == 2 && r.err.find("need --eval") != std::string::npos, r.err);
  }
  r = cli("finetune " + d + "/r0 --model " + d + "/m --train " + d +
          "/t.bin --steps 1 --context 16 --eval-interval 0");
  REQUIRE_MSG(r.status == 0, r.err);
  // config.json writes an infinity as null, which a resume had read back as the default factor 3.
  r = cli(run + " --divergence-factor inf");
  REQUIRE_MSG(r.status == 2 && r.err.find("--divergence-factor") != std::string::npos, r.err);
  r = cli(run + " --divergence-factor 0x10");  // had been read as 16
  REQUIRE_MSG(r.status == 2 && r.err.find("expects a number") != std::string::npos, r.err);
  r = cli(run + " --divergence-factor 0.5");
  REQUIRE_MSG(r.status == 2 && r.err.find("must be 0 or > 1") != std::string::npos, r.err);
  r = cli("analyze dla " + d + "/m --data " + d + "/t.bin --bootstrap 0 --seed 3");  // the seed was ignored
  REQUIRE_MSG(r.status == 2 && r.err.find("--bootstrap 0 draws none") != std::string::npos, r.err);
  // "a||b" had continued an empty prompt too, unsaid; '' still asks for the calibration alone.
  r = cli("analyze calibration " + d + "/m --data " + d + "/t.bin --prompt 'a||b'");
  REQUIRE_MSG(r.status == 2 && r.err.find("every prompt between the '|'s needs text") != std::string::npos,
              r.err);
}

TEST_MAIN()

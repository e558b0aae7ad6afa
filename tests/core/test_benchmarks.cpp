// Downstream benchmarks (eval/benchmark_tasks.h, eval/benchmark.h): each reader on small hand-written files
// — the requests written out by hand from lm-evaluation-harness's task definitions, malformed files named by
// file and line — and the scores on the bundled tiny GPT-2 against an independent Python reference written
// from the harness's definitions (tests/reference/lm_eval_reference.py); the CLI's JSON and comparison.
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_process.h"
#include "data/synthetic_benchmarks.h"
#include "eval/benchmark.h"
#include "fixtures.h"
#include "io/atomic_file.h"
#include "model/hf_checkpoint.h"
#include "tokenizer_fixtures.h"

using namespace nf;
using namespace nf::test;

namespace {

const std::string kTinyGpt2 = std::string(NF_REFERENCE_DIR) + "/../../resources/tiny-gpt2";

void writeLines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path);
  for (const auto& line : lines) out << line << "\n";
}

// Small files of every task in their distributed layouts, under `folder`; choices of very different
// lengths so that acc and acc_norm can disagree.
void writeTaskFiles(const TempDir& dir) {
  writeLines(
      dir.path("hellaswag_val.jsonl"),
      {R"({"activity_label": "Baking cookies", "ctx_a": "A woman mixes flour and sugar in a bowl.", "ctx_b": "she THEN pours [header] the dough", "endings": ["onto a tray and bakes it.", "into the sea.", "on [step] the cat [title] and runs away  fast.", "and waits."], "label": 0})",
       R"({"activity_label": "Walking the dog", "ctx_a": "A man walks to the park.", "ctx_b": "the dog", "endings": ["runs after a ball in the grass for a very long time.", "sings.", "flies to the moon.", "eats."], "label": "0"})"});
  writeLines(
      dir.path("valid.jsonl"),
      {R"({"goal": "To open a jar,", "sol1": "twist the lid.", "sol2": "sing to the jar until it opens by itself."})",
       R"({"goal": "To dry a towel,", "sol1": "put it in the freezer with the ice.", "sol2": "hang it in the sun."})"});
  writeLines(dir.path("valid-labels.lst"), {"0", "1"});
  std::filesystem::create_directories(dir.path("winogrande_1.1"));
  writeLines(
      dir.path("winogrande_1.1/dev.jsonl"),
      {R"({"qID": "a", "sentence": "The cup broke when Mary dropped it on the plate because _ was fragile.", "option1": "the cup", "option2": "the plate", "answer": "1"})",
       R"({"qID": "b", "sentence": "John gave Tom the book because _ had finished reading it.", "option1": "John", "option2": "Tom", "answer": "1"})"});
  std::filesystem::create_directories(dir.path("boolq"));
  writeLines(
      dir.path("boolq/dev.jsonl"),
      {R"({"question": "is the sky blue", "title": "Sky", "answer": true, "passage": "The sky is blue on a clear day."})",
       R"({"question": "can fish fly", "passage": "Most fish live in water and swim.", "idx": 1, "label": 0})"});
  std::filesystem::create_directories(dir.path("ARC-Easy"));
  writeLines(
      dir.path("ARC-Easy/ARC-Easy-Test.jsonl"),
      {R"({"id": "1", "question": {"stem": "Which is a planet?", "choices": [{"text": "Mars", "label": "A"}, {"text": "the big red sun in the morning sky", "label": "B"}]}, "answerKey": "A"})",
       R"({"id": "2", "question": "What do plants need?", "choices": {"text": ["rocks", "water and light"], "label": ["1", "2"]}, "answerKey": "2"})"});
  writeLines(dir.path("lambada_test.jsonl"),
             {R"({"text": "The robot said hello to the girl and the girl said hello to the robot"})",
              R"({"text": "She opened the door and saw  her friend"})"});
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The reference's results for TASK's file in dir.
nlohmann::json reference(const std::string& task, const std::string& file) {
  TempDir out;
  const std::string cmd = std::string(NF_REFERENCE_PYTHON) + " " + NF_REFERENCE_DIR +
                          "/lm_eval_reference.py " + task + " '" + file + "' '" + kTinyGpt2 + "' '" +
                          out.path("r.json") + "'";
  if (runCommand(cmd) != 0) throw Failure("reference failed: " + cmd);
  return nlohmann::json::parse(readFile(out.path("r.json")));
}

// Every choice's summed log-likelihood is the reference's.
void requireLogLikelihoodsOf(const nlohmann::json& ref, const BenchmarkScore& ours, BenchmarkTask task) {
  for (std::size_t i = 0; i < ours.items.size(); ++i)
    for (std::size_t c = 0; c < ours.items[i].logLikelihoods.size(); ++c)
      REQUIRE_MSG(
          std::abs(ours.items[i].logLikelihoods[c] - ref["loglikelihoods"][i][c].get<double>()) < 2e-4,
          benchmarkTaskName(task) << " item " << i << " choice " << c << ": "
                                  << ours.items[i].logLikelihoods[c] << " vs "
                                  << ref["loglikelihoods"][i][c]);
}

}  // namespace

TEST_CASE(readers_pose_the_harness_requests) {
  TempDir dir;
  writeTaskFiles(dir);
  // HellaSwag: capitalize() lowers the rest of ctx_b; "[…]" goes, " [title]" becomes ". ", "  " one space.
  const BenchmarkData hs = readBenchmark(BenchmarkTask::HellaSwag, dir.path());
  REQUIRE_EQ(hs.items.size(), 2u);
  REQUIRE_EQ(
      hs.items[0].requests[0].context,
      std::string("Baking cookies: A woman mixes flour and sugar in a bowl. She then pours the dough"));
  REQUIRE_EQ(hs.items[0].requests[2].continuation, std::string(" on the cat. and runs away fast."));
  REQUIRE_EQ(hs.items[0].choiceLengths[1], 13u);  // "into the sea.": characters, no delimiter
  REQUIRE_EQ(hs.items[1].gold, 0);                // a label given as a string
  REQUIRE_EQ(hellaswagPreprocess(" a [x\ny] b  c "), std::string("a [x\ny] b c"));  // not across lines
  REQUIRE_EQ(pythonCapitalize("hELLO World"), std::string("Hello world"));
  // PIQA: labels from valid-labels.lst beside valid.jsonl.
  const BenchmarkData piqa = readBenchmark(BenchmarkTask::Piqa, dir.path());
  REQUIRE_EQ(piqa.items[0].requests[1].context, std::string("Question: To open a jar,\nAnswer:"));
  REQUIRE_EQ(piqa.items[0].requests[1].continuation,
             std::string(" sing to the jar until it opens by itself."));
  REQUIRE_EQ(piqa.items[1].gold, 1);
  // WinoGrande: partial scoring — a context per option, one continuation after the blank.
  const BenchmarkData wino = readBenchmark(BenchmarkTask::WinoGrande, dir.path());
  REQUIRE_EQ(wino.items[0].requests[1].context,
             std::string("The cup broke when Mary dropped it on the plate because the plate"));
  REQUIRE_EQ(wino.items[0].requests[0].continuation, std::string(" was fragile."));
  REQUIRE_EQ(wino.items[0].requests[1].continuation, std::string(" was fragile."));
  // BoolQ: "answer": true and SuperGLUE's "label": 0 alike.
  const BenchmarkData boolq = readBenchmark(BenchmarkTask::BoolQ, dir.path());
  // The harness reads SuperGLUE's passages, which begin with the page's title; BoolQ's own keep it apart.
  REQUIRE_EQ(boolq.items[0].requests[1].context,
             std::string("Sky -- The sky is blue on a clear day.\nQuestion: is the sky blue?\nAnswer:"));
  REQUIRE_EQ(boolq.items[0].gold, 1);
  REQUIRE_EQ(boolq.items[1].gold, 0);
  // SuperGLUE's own file: the title already in the passage, the label true or false.
  const std::string superGlue = dir.path("BoolQ-val.jsonl");
  writeLines(
      superGlue,
      {R"({"question": "is water wet", "passage": "Water -- Water is wet.", "title": "Water", "idx": 2, "label": true})"});
  const BenchmarkData raw = readBenchmark(BenchmarkTask::BoolQ, superGlue);
  REQUIRE_EQ(raw.items[0].requests[0].context,
             std::string("Water -- Water is wet.\nQuestion: is water wet?\nAnswer:"));
  REQUIRE_EQ(raw.items[0].gold, 1);
  // ARC: AI2's nested layout and Hugging Face's flat one; numeric labels.
  const BenchmarkData arc = readBenchmark(BenchmarkTask::ArcEasy, dir.path());
  REQUIRE_EQ(arc.items[0].requests[0].continuation, std::string(" Mars"));
  REQUIRE_EQ(arc.items[1].gold, 1);
  // LAMBADA: the last space splits; a double space stays in the context.
  const BenchmarkData lambada = readBenchmark(BenchmarkTask::Lambada, dir.path(), 1);
  REQUIRE_EQ(lambada.items.size(), 1u);  // --limit
  REQUIRE_EQ(lambada.items[0].requests[0].continuation, std::string(" robot"));
  REQUIRE_EQ(readBenchmark(BenchmarkTask::Lambada, dir.path()).items[1].requests[0].context,
             std::string("She opened the door and saw  her"));
}

TEST_CASE(malformed_files_are_named_with_their_line) {
  TempDir dir;
  const std::string file = dir.path("hellaswag_val.jsonl");
  const std::string good =
      R"({"activity_label": "a", "ctx_a": "b", "ctx_b": "c", "endings": ["d", "e"], "label": 1})";
  writeLines(file, {good, "{not json"});
  REQUIRE_THROWS_WITH(readBenchmark(BenchmarkTask::HellaSwag, file), file, "line 2 is not JSON");
  writeLines(file, {good, R"({"activity_label": "a", "ctx_a": "b", "endings": ["d"], "label": 0})"});
  REQUIRE_THROWS_WITH(readBenchmark(BenchmarkTask::HellaSwag, file), "line 2", "'ctx_b' is missing");
  writeLines(file,
             {R"({"activity_label": "a", "ctx_a": "b", "ctx_b": "c", "endings": ["d", "e"], "label": 2})"});
  REQUIRE_THROWS_WITH(readBenchmark(BenchmarkTask::HellaSwag, file), "line 1",
                      "label 2 is not one of the 2 choices");
  const std::string wino = dir.path("wino.jsonl");
  writeLines(wino, {R"({"sentence": "no blank here", "option1": "a", "option2": "b", "answer": "1"})"});
  REQUIRE_THROWS_WITH(readBenchmark(BenchmarkTask::WinoGrande, wino), "line 1", "blank");
  writeLines(wino, {R"({"sentence": "a _ b", "option1": "a", "option2": "b", "answer": "3"})"});
  REQUIRE_THROWS_WITH(readBenchmark(BenchmarkTask::WinoGrande, wino), "'answer'", "\"1\" or \"2\"");
  const std::string piqa = dir.path("valid.jsonl");
  writeLines(piqa, {R"({"goal": "g", "sol1": "a", "sol2": "b"})"});
  REQUIRE_THROWS_WITH(readBenchmark(BenchmarkTask::Piqa, piqa), "no \"label\"", "valid-labels.lst");
  writeLines(dir.path("valid-labels.lst"), {"0", "1"});
  REQUIRE_THROWS_WITH(readBenchmark(BenchmarkTask::Piqa, piqa), "1 items but its labels file 2 labels");
  const std::string arc = dir.path("arc.jsonl");
  writeLines(
      arc, {R"({"question": "q", "choices": {"text": ["a", "b"], "label": ["A", "B"]}, "answerKey": "C"})"});
  REQUIRE_THROWS_WITH(readBenchmark(BenchmarkTask::ArcEasy, arc), "'answerKey'", "labels");
  // A key two labels carry is the first's, as the harness's choices.label.index(answerKey) takes it.
  writeLines(
      arc, {R"({"question": "q", "choices": {"text": ["a", "b"], "label": ["A", "A"]}, "answerKey": "A"})"});
  REQUIRE_EQ(readBenchmark(BenchmarkTask::ArcEasy, arc).items.at(0).gold, 0);
  // SuperGLUE's unlabelled test split (label -1) and labels past the choices are refused, not scored as "no";
  // a label beyond an int's range is not narrowed into one.
  const std::string boolq = dir.path("boolq.jsonl");
  for (const char* label : {"-1", "2", "4294967297"}) {
    writeLines(boolq, {R"({"passage": "p", "question": "q", "label": 1})",
                       std::string(R"({"passage": "p", "question": "q", "label": )") + label + "}"});
    REQUIRE_THROWS_WITH(readBenchmark(BenchmarkTask::BoolQ, boolq), boolq, "line 2",
                        std::string("label ") + label + " is not one of the 2 choices");
  }
  writeLines(file, {"", "  "});
  REQUIRE_THROWS_WITH(readBenchmark(BenchmarkTask::HellaSwag, file), "holds no items");
  REQUIRE_THROWS_WITH(readBenchmark(BenchmarkTask::BoolQ, dir.path()), "holds no boolq file",
                      "boolq/dev.jsonl");
  REQUIRE_THROWS_WITH(parseBenchmarkTask("mmlu"), "unknown benchmark 'mmlu'", "hellaswag");
}

TEST_CASE(scores_equal_the_harness_reference_on_the_tiny_model) {
  TempDir dir;
  writeTaskFiles(dir);
  CausalLM model = loadModel(kTinyGpt2, torch::kCPU);
  const std::unique_ptr<Tokenizer> tokenizer = loadTokenizer(kTinyGpt2);
  int normDisagrees = 0;
  for (BenchmarkTask task : allBenchmarkTasks()) {
    if (task == BenchmarkTask::ArcChallenge) continue;  // the same reader and prompt as ARC-Easy
    const BenchmarkData data = readBenchmark(task, dir.path());
    // A tiny logit budget: one row per forward pass, so batching and shared rows are both exercised.
    BenchmarkOptions options;
    options.logitBudget = task == BenchmarkTask::HellaSwag ? 1 : options.logitBudget;
    const BenchmarkScore ours = scoreBenchmark(*model, *tokenizer, data, options);
    const nlohmann::json ref = reference(benchmarkTaskName(task), data.file);
    requireLogLikelihoodsOf(ref, ours, task);
    for (std::size_t i = 0; i < data.items.size(); ++i) {
      REQUIRE_EQ(ours.items[i].predicted, ref["pred"][i].get<int>());
      if (reportsAccNorm(task)) {
        REQUIRE_EQ(ours.items[i].predictedNorm, ref["pred_norm"][i].get<int>());
        normDisagrees += ours.items[i].predicted != ours.items[i].predictedNorm;
      }
      if (task == BenchmarkTask::Lambada) REQUIRE_EQ(ours.items[i].greedy, ref["greedy"][i].get<bool>());
    }
    REQUIRE(std::abs(ours.acc - ref["acc"].get<double>()) < 1e-12);
    REQUIRE(std::abs(ours.accStderr - ref["acc_stderr"].get<double>()) < 1e-12);
    if (reportsAccNorm(task)) REQUIRE(std::abs(ours.accNorm - ref["acc_norm"].get<double>()) < 1e-12);
    if (task == BenchmarkTask::Lambada)
      REQUIRE(std::abs(ours.perplexity / ref["perplexity"].get<double>() - 1) < 1e-4);
  }
  REQUIRE_MSG(normDisagrees > 0,
              "no item where acc and acc_norm choose differently: the test files lost their point");
}

// A model whose logits are not finite (an overflowing LN-free model) is not scored: every NaN item had
// predicted its first choice, right by chance. The model comes back in the mode it was in.
TEST_CASE(a_log_likelihood_that_is_not_finite_is_refused_with_its_line) {
  TempDir dir;
  writeTaskFiles(dir);
  CausalLM model = loadModel(kTinyGpt2, torch::kCPU);
  const std::unique_ptr<Tokenizer> tokenizer = loadTokenizer(kTinyGpt2);
  {
    torch::NoGradGuard noGrad;
    model->parameters().front().fill_(std::nan(""));
  }
  model->train();
  const BenchmarkData data = readBenchmark(BenchmarkTask::HellaSwag, dir.path());
  REQUIRE_THROWS_WITH(scoreBenchmark(*model, *tokenizer, data), data.file, "line 1", "not finite");
  REQUIRE(model->is_training());
}

TEST_CASE(paired_differences_and_the_cli) {
  const PairedDifference same = pairedDifference({1, 0, 1, 1}, {1, 0, 1, 1});
  REQUIRE_EQ(same.difference, 0.0);
  REQUIRE_EQ(same.low, 0.0);
  REQUIRE_EQ(same.high, 0.0);
  const PairedDifference better = pairedDifference({0, 0, 0, 0, 1, 1}, {1, 1, 1, 1, 1, 1});
  REQUIRE(std::abs(better.difference - 4.0 / 6) < 1e-12);
  REQUIRE(better.low > 0 && better.high <= 1 && better.low <= better.difference &&
          better.difference <= better.high);
  REQUIRE_EQ(binomialStderr(0.5, 5), 0.25);  // sqrt(0.25 / 4)
  // One item: no spread to estimate (the harness says N/A); 0 and [d, d] had read as certainty.
  REQUIRE(std::isnan(binomialStderr(1.0, 1)));
  const PairedDifference one = pairedDifference({0}, {1});
  REQUIRE(one.difference == 1.0 && std::isnan(one.low) && std::isnan(one.high));

  TempDir dir;
  writeTaskFiles(dir);
  const CliResult r = cli("bench all " + kTinyGpt2 + " --compare " + kTinyGpt2 + " --data " + dir.path() +
                          " --out " + dir.path("out.json"));
  REQUIRE_MSG(r.status == 0, r.err);
  REQUIRE_MSG(r.err.find("hellaswag") != std::string::npos, "no table on stderr: " << r.err);
  const nlohmann::json j = nlohmann::json::parse(readFile(dir.path("out.json")));
  REQUIRE_EQ(j["format"].get<std::string>(), std::string("normfree-benchmarks"));
  REQUIRE_EQ(j["tasks"].size(), 6u);  // every task whose file the folder holds: no ARC-Challenge here
  for (const auto& task : j["tasks"]) {
    REQUIRE_EQ(task["results"].size(), 2u);
    REQUIRE_EQ(task["results"][0]["acc"], task["results"][1]["acc"]);
    REQUIRE_EQ(task["differences"][0]["acc"]["difference"].get<double>(), 0.0);
    REQUIRE_EQ(task["results"][0]["items"].size(), 2u);
  }
  const CliResult bad = cli("bench hellaswag,mmlu " + kTinyGpt2 + " --data " + dir.path());
  REQUIRE_EQ(bad.status, 2);
  REQUIRE_MSG(bad.err.find("unknown benchmark 'mmlu'") != std::string::npos, bad.err);
  // An item longer than the model's context (128 tokens) is cut, and the table says how many were.
  TempDir longer;
  std::string text;
  for (int i = 0; i < 100; ++i) text += "Mary went to the market and ";
  writeFileAtomic(longer.path("lambada_test.jsonl"),
                  nlohmann::json{{"text", text + "bought bread"}}.dump() + "\n" +
                      nlohmann::json{{"text", "Mary went to the market and bought bread"}}.dump() + "\n");
  const CliResult cut = cli("bench lambada " + kTinyGpt2 + " --data " + longer.path());
  REQUIRE_MSG(cut.status == 0 && cut.err.find("lambada, tiny-gpt2: 1 of 2 items are longer than the model's "
                                              "context") != std::string::npos,
              cut.err);
}
// A file holds one task's items: given for several tasks it would be scored under each name.
TEST_CASE(a_task_file_serves_one_task_and_several_tasks_need_a_folder) {
  TempDir dir;
  writeTaskFiles(dir);
  const std::string easy = dir.path("ARC-Easy/ARC-Easy-Test.jsonl");
  const std::vector<BenchmarkTask> both = {BenchmarkTask::ArcEasy, BenchmarkTask::ArcChallenge};
  REQUIRE_THROWS_WITH(requireOneTaskPerFile(both, easy), easy, "arc_easy, arc_challenge", "folder");
  requireOneTaskPerFile({BenchmarkTask::ArcEasy}, easy);
  requireOneTaskPerFile({BenchmarkTask::ArcEasy, BenchmarkTask::ArcEasy}, easy);  // the one task twice
  requireOneTaskPerFile(both, dir.path());
  // The CLI refuses it as a usage error, naming --data.
  const CliResult r = cli("bench arc_easy,arc_challenge " + kTinyGpt2 + " --data " + easy);
  REQUIRE_EQ(r.status, 2);
  REQUIRE_MSG(r.err.find("--data " + easy) != std::string::npos && r.err.find("folder") != std::string::npos,
              r.err);
  const CliResult one = cli("bench arc_easy " + kTinyGpt2 + " --data " + easy);
  REQUIRE_MSG(one.status == 0, one.err);
}

// The harness strips with Python's str.strip() and rstrip(): every character str.isspace() accepts, not
// ASCII whitespace alone.
TEST_CASE(unicode_whitespace_is_stripped_as_python_strips_it) {
  // Python's own list of space characters, held against ours over all of Unicode.
  TempDir dir;
  const std::string listed = dir.path("spaces.txt");
  const std::string cmd = std::string(NF_REFERENCE_PYTHON) +
                          " -c 'print(*[c for c in range(0x110000) if chr(c).isspace()])' > " + listed;
  if (runCommand(cmd) != 0) throw Failure("python failed: " + cmd);
  std::set<char32_t> spaces;
  std::ifstream in(listed);
  for (uint32_t c; in >> c;) spaces.insert(c);
  REQUIRE(spaces.size() > 20 && spaces.count(0x3000) && !spaces.count(0x180E) && !spaces.count(0x200B));
  for (char32_t c = 0; c < 0x110000; ++c)
    REQUIRE_MSG(pythonIsSpace(c) == (spaces.count(c) > 0), "U+" << std::hex << static_cast<uint32_t>(c));
  // "\u00a0a\u3000 b\x1c".strip() == "a\u3000 b"; U+200B and U+180E are no spaces.
  REQUIRE_EQ(pythonStrip("\xc2\xa0"
                         "a\xe3\x80\x80 b\x1c"),
             std::string("a\xe3\x80\x80 b"));
  REQUIRE_EQ(pythonRstrip(" a\xe2\x80\xa8"), std::string(" a"));
  REQUIRE_EQ(pythonStrip("\xe2\x80\x8b a \xe1\xa0\x8e"), std::string("\xe2\x80\x8b a \xe1\xa0\x8e"));
  REQUIRE_EQ(pythonStrip("\xe2\x80\x83\xc2\x85"), std::string());

  // WinoGrande strips the rest of the sentence; a context's trailing spaces (an option's, LAMBADA's last
  // word's) move into the continuation. Scores against the reference, which uses Python's own.
  writeLines(
      dir.path("winogrande_dev.jsonl"),
      {R"({"sentence": "After Katie and Joe arrived at the bridge, _\u00a0handed a mug to Katie.\u3000\u001c", "option1": "Joe", "option2": "Katie", "answer": "1"})",
       R"({"sentence": "Katie gave a mug to _\u200b at the park.\u180e", "option1": "Joe\u2009", "option2": "Katie\u0085", "answer": "2"})"});
  writeLines(dir.path("lambada_test.jsonl"), {R"({"text": "The robot waved to the girl\u3000 friend"})",
                                              R"({"text": "She opened the door and saw\u00a0\u2028 her"})"});
  const BenchmarkData wino = readBenchmark(BenchmarkTask::WinoGrande, dir.path());
  REQUIRE_EQ(wino.items[0].requests[0].continuation, std::string(" handed a mug to Katie."));
  REQUIRE_EQ(wino.items[1].requests[0].continuation, std::string(" \xe2\x80\x8b at the park.\xe1\xa0\x8e"));
  CausalLM model = loadModel(kTinyGpt2, torch::kCPU);
  const std::unique_ptr<Tokenizer> tokenizer = loadTokenizer(kTinyGpt2);
  for (BenchmarkTask task : {BenchmarkTask::WinoGrande, BenchmarkTask::Lambada}) {
    const BenchmarkData data = readBenchmark(task, dir.path());
    const BenchmarkScore ours = scoreBenchmark(*model, *tokenizer, data);
    const nlohmann::json ref = reference(benchmarkTaskName(task), data.file);
    requireLogLikelihoodsOf(ref, ours, task);
  }
}

// Hugging Face's LlamaTokenizer starts every encoding with <s> unless tokenizer_config.json says
// add_bos_token: false; the harness scores text encoded so.
TEST_CASE(sentencepiece_requests_start_with_bos_only_where_hugging_face_adds_it) {
  TempDir dir;
  trainSentencePiece(dir.path("llama"), corpusLines(1, 300), 1000);
  const std::unique_ptr<Tokenizer> withBos = loadTokenizer(dir.path("llama"));
  ModelShape shape;
  for (const NamedShape& s : familyShapes())
    if (s.shape.family == "llama") shape = s.shape;
  shape.vocabSize = withBos->vocabSize();
  shape.eotTokenId = withBos->eotId();
  shape.nPositions = 64;
  CausalLM model = randomModel(shape);
  {  // sharper than at initialisation, so that a BOS more or less moves the scores visibly
    torch::NoGradGuard noGrad;
    for (torch::Tensor& p : model->parameters()) p.mul_(6);
  }
  writeLines(dir.path("lambada_test.jsonl"), {R"({"text": "Mary gave a book to John"})"});
  const BenchmarkData data = readBenchmark(BenchmarkTask::Lambada, dir.path());
  // The harness's _encode_pair and sum: the context encoded alone (after the BOS where there is one), then
  // the whole pair's encoding after the context's own token count; each continuation token's
  // log-probability at the position before.
  auto expected = [&](const Tokenizer& t, bool bos) {
    const LoglikelihoodRequest& r = data.items[0].requests[0];
    std::vector<int32_t> whole = t.encode(r.context + r.continuation), context = t.encode(r.context);
    if (bos) {
      whole.insert(whole.begin(), t.bosId());
      context.insert(context.begin(), t.bosId());
    }
    std::vector<int32_t> read = context;
    read.insert(read.end(), whole.begin() + static_cast<std::ptrdiff_t>(context.size()), whole.end());
    torch::NoGradGuard noGrad;
    model->eval();
    const torch::Tensor input =
        torch::tensor(std::vector<int64_t>(read.begin(), read.end() - 1)).unsqueeze(0);
    const torch::Tensor logProbs = model->forward(input)[0].to(torch::kFloat).log_softmax(-1);
    double sum = 0;
    for (std::size_t i = context.size(); i < read.size(); ++i)
      sum += logProbs[static_cast<int64_t>(i - 1)][read[i]].item<double>();
    return sum;
  };
  REQUIRE(withBos->huggingFaceAddsBos());
  const double scoredWithBos = scoreBenchmark(*model, *withBos, data).items[0].logLikelihoods[0];
  REQUIRE_MSG(std::abs(scoredWithBos - expected(*withBos, true)) < 1e-4,
              scoredWithBos << " vs " << expected(*withBos, true));
  writeFileAtomic(dir.path("llama/tokenizer_config.json"), R"({"add_bos_token": false, "bos_token": "<s>"})");
  const std::unique_ptr<Tokenizer> withoutBos = loadTokenizer(dir.path("llama"));
  REQUIRE(!withoutBos->huggingFaceAddsBos());
  const double scoredWithoutBos = scoreBenchmark(*model, *withoutBos, data).items[0].logLikelihoods[0];
  REQUIRE_MSG(std::abs(scoredWithoutBos - expected(*withoutBos, false)) < 1e-4,
              scoredWithoutBos << " vs " << expected(*withoutBos, false));
  REQUIRE(std::abs(scoredWithoutBos - scoredWithBos) > 1e-3);  // the test would see a BOS added
}

TEST_CASE(synthetic_benchmarks_read_back_and_measure_the_bundled_model) {
  TempDir dir;
  REQUIRE_EQ(writeSyntheticBenchmarks(dir.path("a"), 1, 40), 40);
  writeSyntheticBenchmarks(dir.path("b"), 1, 40);
  REQUIRE_EQ(readFile(dir.path("a/hellaswag_val.jsonl")),
             readFile(dir.path("b/hellaswag_val.jsonl")));  // a seed's files
  CausalLM model = loadModel(kTinyGpt2, torch::kCPU);
  const std::unique_ptr<Tokenizer> tokenizer = loadTokenizer(kTinyGpt2);
  auto acc = [&](BenchmarkTask task) {
    const BenchmarkData data = readBenchmark(task, dir.path("a"));
    REQUIRE_EQ(data.items.size(), 40u);
    return scoreBenchmark(*model, *tokenizer, data).acc;
  };
  // Far above chance (1/4, 1/2): the story's own next sentence, and the IOI circuit's answer.
  REQUIRE(acc(BenchmarkTask::HellaSwag) > 0.75);
  REQUIRE(acc(BenchmarkTask::WinoGrande) > 0.9);
  const BenchmarkData lambada = readBenchmark(BenchmarkTask::Lambada, dir.path("a"));
  for (const auto& item : lambada.items) {  // the target is a name that occurred before it
    const std::string name = item.requests[0].continuation.substr(1);
    REQUIRE_MSG(item.requests[0].context.find(name) != std::string::npos, name);
  }
}

TEST_MAIN()

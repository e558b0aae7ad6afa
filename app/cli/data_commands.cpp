// normfree-cli commands that make data: corpus, train-tokenizer, tokenize, ioi.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "data/ioi.h"
#include "data/synthetic_corpus.h"
#include "data/tokenize.h"
#include "io/atomic_file.h"
#include "progress_bar.h"
#include "text/bpe_trainer.h"

namespace nf::cli {
namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int64_t megabytes(const Args& args, const std::string& name) {
  const double mb = args.getDouble(name);
  if (!(mb >= 0)) throw UsageError("--" + name + " must be a non-negative number of megabytes");
  return static_cast<int64_t>(mb * 1e6);
}

}  // namespace

int cmdCorpus(const Argv& argv) {
  Args args(
      "corpus",
      "Write the synthetic English-like corpus the bundled model is trained on: train.txt and val.txt (the "
      "same distribution, different documents) and alt.txt (other templates and word lists, a "
      "differently distributed eval set, as The Pile is in the paper). Documents are separated by "
      "<|endoftext|>. The same seed gives byte-identical files on every machine.");
  args.option("out", "folder", "folder to write train.txt, val.txt, alt.txt and corpus.json to")
      .option("seed", "n", "random seed", "0")
      .option("train-mb", "MB", "size of train.txt", "40")
      .option("val-mb", "MB", "size of val.txt", "2")
      .option("alt-mb", "MB", "size of alt.txt", "2");
  if (!args.parse(argv)) return 0;
  const int64_t seed = args.getInt64("seed");
  if (seed < 0) throw UsageError("--seed must be non-negative");
  const std::string out = args.get("out");
  std::filesystem::create_directories(out);
  struct Split {
    const char* file;
    CorpusStyle style;
    int64_t bytes;
  };
  const Split splits[] = {{"train.txt", CorpusStyle::Main, megabytes(args, "train-mb")},
                          {"val.txt", CorpusStyle::Main, megabytes(args, "val-mb")},
                          {"alt.txt", CorpusStyle::Alternative, megabytes(args, "alt-mb")}};
  nlohmann::json manifest{
      {"generator", "normfree synthetic corpus"}, {"seed", seed}, {"files", nlohmann::json::object()}};
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < std::size(splits); ++i) {
    const Split& s = splits[i];
    if (s.bytes == 0) continue;
    // Each file its own stream: seeds 3·seed, 3·seed + 1, 3·seed + 2 never collide across seeds.
    const uint64_t splitSeed = static_cast<uint64_t>(seed) * 3 + i;
    const int64_t documents =
        writeSyntheticCorpus(out + "/" + s.file, s.style, splitSeed, s.bytes, progressBar());
    manifest["files"][s.file] = {{"style", corpusStyleName(s.style)},
                                 {"seed", splitSeed},
                                 {"bytes", std::filesystem::file_size(out + "/" + s.file)},
                                 {"documents", documents}};
  }
  writeFileAtomic(out + "/corpus.json", manifest.dump(2) + "\n");
  manifest["seconds"] = secondsSince(start);
  printJson(manifest);
  return 0;
}

int cmdTrainTokenizer(const Argv& argv) {
  Args args(
      "train-tokenizer",
      "Learn a GPT-2 byte-level BPE vocabulary from text and write vocab.json + merges.txt in the Hugging "
      "Face layout (GPT-2's pre-tokenization and byte alphabet; <|endoftext|> is the last id).");
  args.positionalList("input",
                      ".txt (documents separated by <|endoftext|>) or .jsonl (a \"text\" field per line)")
      .option("out", "folder", "folder to write vocab.json and merges.txt to")
      .option("vocab", "n", "vocabulary size, including the 256 bytes and <|endoftext|>", "8192")
      .option("min-frequency", "n", "stop early when the most frequent pair occurs fewer times", "2");
  if (!args.parse(argv)) return 0;
  BpeTrainingOptions options;
  options.vocabSize = args.getInt("vocab");
  options.minFrequency = args.getInt64("min-frequency");
  if (options.vocabSize < 257) throw UsageError("--vocab must be at least 257 (256 bytes + <|endoftext|>)");
  const auto start = std::chrono::steady_clock::now();
  BpeTrainer trainer(options);
  for (const auto& input : args.getList()) trainer.addFile(input, progressBar());
  const BpeTokenizer tokenizer = trainer.train(progressBar());
  tokenizer.save(args.get("out"));
  nlohmann::json result{{"out", args.get("out")},
                        {"vocab_size", tokenizer.vocabSize()},
                        {"merges", tokenizer.mergeCount()},
                        {"distinct_pieces", trainer.distinctPieces()},
                        {"eot_token_id", tokenizer.eotId()},
                        {"seconds", secondsSince(start)}};
  if (tokenizer.vocabSize() < options.vocabSize) {
    const std::string why = "no adjacent pair occurs " + std::to_string(options.minFrequency) +
                            " times any more: the text's words are whole tokens already";
    std::cerr << "note: the vocabulary has " << tokenizer.vocabSize() << " tokens, not " << options.vocabSize
              << ": " << why << "\n";
    result["stopped_early"] = why;
  }
  printJson(result);
  return 0;
}

int cmdTokenize(const Argv& argv) {
  Args args(
      "tokenize",
      "Tokenize text into a nanoGPT token file: flat little-endian uint16 (uint32 for vocabularies over "
      "65536), every document followed by <|endoftext|>, plus a sidecar <out>.json with dtype and counts. "
      "Streams: memory stays constant whatever the input size.");
  args.positionalList("input",
                      ".txt (documents separated by <|endoftext|>) or .jsonl (a \"text\" field per line)")
      .option("tokenizer", "folder", "folder with vocab.json and merges.txt (a GPT-2 model folder works)")
      .option("out", "file.bin", "token file to write");
  if (!args.parse(argv)) return 0;
  const auto start = std::chrono::steady_clock::now();
  const BpeTokenizer tokenizer = BpeTokenizer::load(args.get("tokenizer"));
  const TokenizeStats stats =
      tokenizeFiles(args.getList(), tokenizer, args.get("tokenizer"), args.get("out"), progressBar());
  const double seconds = secondsSince(start);
  printJson(nlohmann::json{{"out", args.get("out")},
                           {"documents", stats.documents},
                           {"tokens", stats.tokens},
                           {"bytes", stats.bytes},
                           {"bytes_per_token", static_cast<double>(stats.bytes) / stats.tokens},
                           {"seconds", seconds},
                           {"mb_per_second", stats.bytes / 1e6 / seconds}});
  return 0;
}

int cmdIoi(const Argv& argv) {
  Args args(
      "ioi",
      "Write an indirect-object-identification prompt set for patching: clean prompts (\"When Mary and John "
      "went to the store, John gave a drink to\" → Mary vs John) and corrupted twins (the repeated subject "
      "replaced by the indirect object), all of one token length with fixed name positions, names that "
      "are single tokens of the given tokenizer, both name orders.");
  args.option("tokenizer", "folder", "folder with vocab.json and merges.txt")
      .option("out", "file.json", "where to write the set (default: stdout)", "")
      .option("count", "n", "number of prompts (a multiple of 4)", "480")
      .option("frame", "n", "which sentence frame (0…" + std::to_string(ioiFrames().size() - 1) + ")", "0")
      .option("seed", "n", "random seed", "0")
      .flag("no-eot", "do not start the prompts with <|endoftext|>");
  if (!args.parse(argv)) return 0;
  IoiOptions options;
  options.count = args.getInt64("count");
  options.frameIndex = args.getInt("frame");
  options.seed = static_cast<uint64_t>(args.getInt64("seed"));
  options.prependEndOfText = !args.has("no-eot");
  const BpeTokenizer tokenizer = BpeTokenizer::load(args.get("tokenizer"));
  IoiPromptSet set;
  try {
    set = makeIoiPromptSet(tokenizer, options);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const nlohmann::json j = toJson(set);
  if (args.get("out").empty()) {
    printJson(j);
    return 0;
  }
  writeFileAtomic(args.get("out"), j.dump(1) + "\n");
  nlohmann::json summary = j;
  summary.erase("prompts");
  summary["prompts"] = set.prompts.size();
  summary["example"] = {{"clean", set.prompts.front().cleanText},
                        {"corrupted", set.prompts.front().corruptedText}};
  summary["out"] = args.get("out");
  printJson(summary);
  return 0;
}

}  // namespace nf::cli

// normfree-cli commands that make data: corpus, train-tokenizer, tokenize, rare-jobs, ioi.
#include <cctype>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.h"
#include "data/ioi.h"
#include "data/rare_jobs.h"
#include "data/synthetic_benchmarks.h"
#include "data/synthetic_corpus.h"
#include "data/token_file.h"
#include "data/tokenize.h"
#include "io/atomic_file.h"
#include "io/file_format.h"
#include "options.h"
#include "progress_bar.h"
#include "text/bpe_trainer.h"
#include "text/tokenizer.h"

namespace nf::cli {
namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A file of at most a terabyte: a size past int64's bytes had overflowed into an empty file, exit 0.
constexpr double kMaxCorpusMb = 1e6;
int64_t megabytes(double mb) { return static_cast<int64_t>(mb * 1e6); }

// A token file may be what a run trains on: made again in place, a resumed run had read the new one.
void refuseToReplaceTokenFile(const std::string& path, bool overwrite) {
  const std::filesystem::path out(path);
  refuseToReplace(out.parent_path().empty() ? "." : out.parent_path().string(),
                  {out.filename().string(), tokenFileSidecarPath(out.filename().string())}, overwrite);
}

// The ids of `folder`'s tokenizer that end a sentence (their text, trailing spaces aside, ends in '.', '!' or
// '?'), for the token file `text` made by it. FileError when `text` names another tokenizer or none ends one.
std::vector<bool> sentenceEndIds(const std::string& folder, const TokenFile& text) {
  const std::unique_ptr<Tokenizer> tokenizer = loadTokenizer(tokenizerOption(folder));
  const std::string &ours = tokenizerFingerprint(*tokenizer), &theirs = text.meta().tokenizerFingerprint;
  if (!theirs.empty() && ours != theirs)
    throw FileError(text.path(), "was made by another tokenizer than " + folder + "'s (fingerprints " +
                                     theirs + " and " + ours + ")");
  std::vector<bool> ends(static_cast<std::size_t>(tokenizer->vocabSize()), false);
  bool any = false;
  for (int32_t id = 0; id < tokenizer->vocabSize(); ++id) {
    std::string bytes = tokenizer->tokenBytes(id);
    while (!bytes.empty() && std::isspace(static_cast<unsigned char>(bytes.back()))) bytes.pop_back();
    if (!bytes.empty() && (bytes.back() == '.' || bytes.back() == '!' || bytes.back() == '?'))
      any = ends[static_cast<std::size_t>(id)] = true;
  }
  if (!any) throw FileError(tokenizer->source(), "has no token ending in '.', '!' or '?' to end a sentence");
  return ends;
}

}  // namespace

void cmdCorpus(CLI::App& command) {
  command.description(
      "Write the synthetic English-like corpus the bundled model is trained on: train.txt and val.txt (the "
      "same distribution, different documents) and alt.txt (other templates and word lists, a "
      "differently distributed eval set, as The Pile is in the paper). Documents are separated by "
      "<|endoftext|>. The same seed gives byte-identical files on every machine. With --benchmarks, also "
      "downstream benchmark files made from the validation documents, in HellaSwag's, WinoGrande's and "
      "LAMBADA's formats, under bench/ (normfree-cli bench … --data OUT/bench).");
  struct Options {
    std::string out;
    int64_t seed = 0, benchmarks = 0;
    double trainMb = 40, valMb = 2, altMb = 2;
    bool overwrite = false;
  };
  auto o = std::make_shared<Options>();
  command.add_option("--out", o->out, "folder to write train.txt, val.txt, alt.txt and corpus.json to")
      ->type_name("folder")
      ->required();
  command.add_option("--seed", o->seed, "random seed")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  command.add_option("--train-mb", o->trainMb, "size of train.txt")
      ->type_name("MB")
      ->transform(inRange(0.0, kMaxCorpusMb))
      ->capture_default_str();
  command.add_option("--val-mb", o->valMb, "size of val.txt")
      ->type_name("MB")
      ->transform(inRange(0.0, kMaxCorpusMb))
      ->capture_default_str();
  command.add_option("--alt-mb", o->altMb, "size of alt.txt")
      ->type_name("MB")
      ->transform(inRange(0.0, kMaxCorpusMb))
      ->capture_default_str();
  command.add_option("--benchmarks", o->benchmarks, "items per synthetic benchmark file in bench/ (0: none)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  command.add_flag("--overwrite", o->overwrite,
                   "replace a corpus already in --out (its files this call does not write are removed)");
  onRun(command, [o] {
    const int64_t seed = o->seed;
    const std::string& out = o->out;
    struct Split {
      const char* file;
      CorpusStyle style;
      int64_t bytes;
    };
    const Split splits[] = {{"train.txt", CorpusStyle::Main, megabytes(o->trainMb)},
                            {"val.txt", CorpusStyle::Main, megabytes(o->valMb)},
                            {"alt.txt", CorpusStyle::Alternative, megabytes(o->altMb)}};
    // A corpus is its files together: one of another seed or size left beside the new ones, or replaced
    // under the token files made from it, had gone unsaid.
    std::vector<std::string> corpusFiles;
    for (const Split& s : splits) corpusFiles.push_back(s.file);
    corpusFiles.insert(corpusFiles.end(), {"corpus.json", "bench"});
    refuseToReplace(out, corpusFiles, o->overwrite);
    std::filesystem::create_directories(out);
    nlohmann::json manifest = formatHeader(kCorpusFormat);
    manifest.update(
        {{"generator", "normfree synthetic corpus"}, {"seed", seed}, {"files", nlohmann::json::object()}});
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
    if (o->benchmarks > 0) {
      const int64_t items =
          writeSyntheticBenchmarks(out + "/bench", static_cast<uint64_t>(seed), o->benchmarks);
      manifest["benchmarks"] = {{"folder", "bench"}, {"items", items}, {"seed", seed * 3 + 1}};
    }
    writeFileAtomic(out + "/corpus.json", manifest.dump(2) + "\n");
    // Replaced (--overwrite), the old corpus's files this one has not (each written whole above) go.
    for (const Split& s : splits)
      if (s.bytes == 0) std::filesystem::remove(std::filesystem::path(out) / s.file);
    if (o->benchmarks == 0) std::filesystem::remove_all(std::filesystem::path(out) / "bench");
    manifest["seconds"] = secondsSince(start);
    printJson(manifest);
    return 0;
  });
}

void cmdTrainTokenizer(CLI::App& command) {
  command.description(
      "Learn a GPT-2 byte-level BPE vocabulary from text and write vocab.json + merges.txt in the Hugging "
      "Face layout (GPT-2's pre-tokenization and byte alphabet; <|endoftext|> is the last id).");
  struct Options {
    std::vector<std::string> inputs;
    std::string out;
    int vocab = 8192;
    int64_t minFrequency = 2;
    bool overwrite = false;
  };
  auto o = std::make_shared<Options>();
  command
      .add_option("input", o->inputs,
                  ".txt (documents separated by <|endoftext|>) or .jsonl (a \"text\" field per line)")
      ->required();
  command.add_option("--out", o->out, "folder to write vocab.json and merges.txt to")
      ->type_name("folder")
      ->required();
  command.add_option("--vocab", o->vocab, "vocabulary size, including the 256 bytes and <|endoftext|>")
      ->type_name("n")
      ->transform(atLeast(257))
      ->capture_default_str();
  command
      .add_option("--min-frequency", o->minFrequency,
                  "stop early when the most frequent pair occurs fewer times")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1))
      ->capture_default_str();
  command.add_flag("--overwrite", o->overwrite,
                   "replace a tokenizer already in --out (its files are removed)");
  onRun(command, [o] {
    using F = TokenizerFiles;
    const std::vector<std::string> tokenizerFiles = {F::kGpt2Vocab, F::kGpt2Merges, F::kHuggingFace,
                                                     F::kSentencePiece};
    refuseToReplace(o->out, tokenizerFiles, o->overwrite);
    BpeTrainingOptions options;
    options.vocabSize = o->vocab;
    options.minFrequency = o->minFrequency;
    const auto start = std::chrono::steady_clock::now();
    BpeTrainer trainer(options);
    for (const auto& input : o->inputs) trainer.addFile(input, progressBar());
    if (trainer.distinctPieces() == 0)  // a tokenizer of bytes alone, with a note blaming the words
      throw FileError(o->inputs.front(), o->inputs.size() == 1
                                             ? "contains no text to train on"
                                             : "and the other inputs contain no text to train on");
    const BpeTokenizer tokenizer = trainer.train(progressBar());
    // The folder holds one tokenizer, so the older one goes first: a tokenizer.json left there would be read
    // before the new files, and a crash between the new vocab.json and merges.txt would pair them with the
    // old ones. Removed the one read first last, a crash leaves the old tokenizer whole or none, which every
    // reader names (loadTokenizer reads tokenizer.json, then vocab.json + merges.txt, then tokenizer.model).
    for (const char* older :
         {"added_tokens.json", F::kSentencePiece, F::kGpt2Merges, F::kGpt2Vocab, F::kHuggingFace})
      std::filesystem::remove(std::filesystem::path(o->out) / older);
    removeDeadWritersLeftovers(o->out, {std::begin(F::kAll), std::end(F::kAll)});  // a run killed before
    tokenizer.save(o->out);
    nlohmann::json result{{"out", o->out},
                          {"vocab_size", tokenizer.vocabSize()},
                          {"merges", tokenizer.mergeCount()},
                          {"distinct_pieces", trainer.distinctPieces()},
                          {"eot_token_id", tokenizer.eotId()},
                          {"seconds", secondsSince(start)}};
    if (tokenizer.vocabSize() < options.vocabSize) {
      const std::string why = "no adjacent pair occurs " + std::to_string(options.minFrequency) +
                              " times any more: the text's words are whole tokens already";
      std::cerr << "note: the vocabulary has " << tokenizer.vocabSize() << " tokens, not "
                << options.vocabSize << ": " << why << "\n";
      result["stopped_early"] = why;
    }
    printJson(result);
    return 0;
  });
}

void cmdTokenize(CLI::App& command) {
  command.description(
      "Tokenize text into a nanoGPT token file: flat little-endian uint16 (uint32 for vocabularies over "
      "65536), every document followed by <|endoftext|>, plus a sidecar <out>.json with dtype and counts. "
      "Streams: memory stays constant whatever the input size.");
  struct Options {
    std::vector<std::string> inputs;
    std::string tokenizer, out;
    RandomRepeats repeats;
    bool overwrite = false;
  };
  auto o = std::make_shared<Options>();
  command
      .add_option("input", o->inputs,
                  ".txt (documents separated by <|endoftext|>) or .jsonl (a \"text\" field per line)")
      ->required();
  command.add_option("--tokenizer", o->tokenizer, kTokenizerFolderHelp)->type_name("folder")->required();
  command.add_option("--out", o->out, "token file to write")->type_name("file.bin")->required();
  command
      .add_option(
          "--random-repeats", o->repeats.chance,
          "after each document, with this chance, mix in a document of uniformly random tokens followed "
          "by an exact copy: training data for induction on any tokens (recorded in the sidecar)")
      ->type_name("p")
      ->transform(fraction())
      ->capture_default_str();
  const std::vector<CLI::Option*> repeatOptions{
      command.add_option("--repeat-span", o->repeats.minSpan, "shortest random span")
          ->type_name("n")
          ->transform(atLeast<int64_t>(1))
          ->capture_default_str(),
      command.add_option("--repeat-span-max", o->repeats.maxSpan, "longest random span")
          ->type_name("n")
          ->transform(atLeast<int64_t>(1))
          ->capture_default_str(),
      command.add_option("--repeat-seed", o->repeats.seed, "seed of the random spans")
          ->type_name("n")
          ->transform(atLeast<uint64_t>(0))
          ->capture_default_str()};
  command.add_flag("--overwrite", o->overwrite, "replace --out (and its sidecar) if it exists");
  onRun(command, [o, repeatOptions] {
    for (const CLI::Option* option : repeatOptions)
      if (option->count() > 0 && o->repeats.chance == 0)  // it had been ignored
        throw UsageError(option->get_name() + " shapes the random repeats: give --random-repeats above 0");
    refuseToReplaceTokenFile(o->out, o->overwrite);
    const auto start = std::chrono::steady_clock::now();
    const std::string folder = tokenizerOption(o->tokenizer);  // the sidecar names the folder read
    const std::unique_ptr<Tokenizer> tokenizer = loadTokenizer(folder);
    if (o->repeats.maxSpan < o->repeats.minSpan)
      throw UsageError("--repeat-span-max " + std::to_string(o->repeats.maxSpan) +
                       " is below --repeat-span " + std::to_string(o->repeats.minSpan));
    const TokenizeStats stats =
        tokenizeFiles(o->inputs, *tokenizer, folder, o->out, progressBar(), o->repeats);
    const double seconds = secondsSince(start);
    printJson(nlohmann::json{{"out", o->out},
                             {"documents", stats.documents},
                             {"random_repeat_documents", stats.repeatDocuments},
                             {"tokens", stats.tokens},
                             {"bytes", stats.bytes},
                             {"bytes_per_token", static_cast<double>(stats.bytes) / stats.tokens},
                             {"seconds", seconds},
                             {"mb_per_second", stats.bytes / 1e6 / seconds}});
    return 0;
  });
}

void cmdRareJobs(CLI::App& command) {
  command.description(
      "Write documents of rare jobs, the training data that grows attention sinks in small models "
      "(docs/DATA.md): filler drawn from TEXT's token bigrams, where no attention head can help, with "
      "events at a position with --chance each that need one head at one position (backcopy, the first "
      "token, induction) after trigger ids TEXT never uses. With --after, a token file's documents each "
      "followed by one (a mix to pretrain on); else --documents of them alone (to measure on).");
  struct Options {
    std::string text, out, after, tokenizer;
    int64_t documents = 300, minLength = 16;
    RareJobs jobs;
    bool overwrite = false;
  };
  auto o = std::make_shared<Options>();
  command
      .add_option("text", o->text,
                  "token file of the text whose bigrams, unused ids and document lengths are drawn from")
      ->required();
  command.add_option("--out", o->out, "token file to write")->type_name("file.bin")->required();
  auto* after =
      command.add_option("--after", o->after, "each document of this token file followed by a rare-jobs one")
          ->type_name("file.bin");
  auto* between =
      command
          .add_option(
              "--between-sentences", o->jobs.betweenSentences,
              "with --after: a run of filler with events, this many tokens on average, after each "
              "sentence of its documents instead of a document after each (heads idle between sentences)")
          ->type_name("n")
          ->transform(inRange<int64_t>(1, 100000))
          ->needs(after);
  command
      .add_option("--tokenizer", o->tokenizer,
                  std::string(kTokenizerFolderHelp) +
                      "; with --between-sentences: its tokens ending in '.', '!' or '?' end a sentence")
      ->type_name("folder")
      ->needs(between);
  between->needs("--tokenizer");
  command.add_option("--documents", o->documents, "without --after: this many documents alone")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1))
      ->capture_default_str()
      ->excludes(after);
  command
      .add_option("--min-length", o->minLength,
                  "tokens of a document at least (its length is a text document's)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1))
      ->capture_default_str();
  command.add_option("--chance", o->jobs.chance, "chance of each kind of event at a position")
      ->type_name("p")
      ->transform(inRange(0.0, 0.2))
      ->capture_default_str();
  command
      .add_option("--offsets", o->jobs.offsets, "backcopy copies the token 1 … n places before its trigger")
      ->type_name("n")
      ->transform(inRange(1, 64))
      ->capture_default_str();
  command.add_flag(
      "--separate-offsets", o->jobs.separateOffsets,
      "each backcopy offset a kind of event of its own, with --chance, instead of one kind drawing it");
  command.add_option("--seed", o->jobs.seed, "seed of the documents")
      ->type_name("n")
      ->transform(atLeast<uint64_t>(0))
      ->capture_default_str();
  command.add_flag("--overwrite", o->overwrite, "replace --out (and its sidecar) if it exists");
  onRun(command, [o] {
    refuseToReplaceTokenFile(o->out, o->overwrite);
    const auto start = std::chrono::steady_clock::now();
    const TokenFile text = TokenFile::open(o->text);
    const RareJobsSource source(text, o->jobs, progressBar());
    std::optional<TokenFile> before;
    if (!o->after.empty()) before = TokenFile::open(o->after);
    if (o->jobs.betweenSentences > 0) o->jobs.sentenceEnds = sentenceEndIds(o->tokenizer, *before);
    const RareJobsStats stats = writeRareJobs(text, source, o->jobs, o->out, before ? &*before : nullptr,
                                              o->documents, o->minLength, progressBar());
    nlohmann::json triggers{{"backcopy", source.backcopyTriggers()},
                            {"first", source.firstTrigger()},
                            {"induction", source.inductionTrigger()}};
    printJson(nlohmann::json{{"out", o->out},
                             {"documents", stats.documents},
                             {"rare_job_documents", stats.rareDocuments},
                             {"filler_runs", stats.fillerRuns},
                             {"tokens", stats.tokens},
                             {"triggers", triggers},
                             {"seconds", secondsSince(start)}});
    return 0;
  });
}

void cmdIoi(CLI::App& command) {
  command.description(
      "Write an indirect-object-identification prompt set for patching: clean prompts (\"When Mary and John "
      "went to the store, John gave a drink to\" → Mary vs John) and corrupted twins (the repeated subject "
      "replaced by the indirect object), all of one token length with fixed name positions, names that "
      "are single tokens of the given tokenizer, both name orders.");
  struct Options {
    std::string tokenizer, out;
    int64_t count = 480, seed = 0;
    int frame = 0;
    bool noEot = false;
  };
  auto o = std::make_shared<Options>();
  const int lastFrame = static_cast<int>(ioiFrames().size()) - 1;
  command.add_option("--tokenizer", o->tokenizer, kTokenizerFolderHelp)->type_name("folder")->required();
  command.add_option("--out", o->out, "where to write the set (default: stdout)")->type_name("file.json");
  command.add_option("--count", o->count, "number of prompts (a multiple of 4)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(4))
      ->capture_default_str();
  command.add_option("--frame", o->frame, "which sentence frame (0…" + std::to_string(lastFrame) + ")")
      ->type_name("n")
      ->transform(inRange(0, lastFrame))
      ->capture_default_str();
  command.add_option("--seed", o->seed, "random seed")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  command.add_flag("--no-eot", o->noEot,
                   "do not start the prompts with the tokenizer's begin-of-sequence token (or "
                   "<|endoftext|> where it has none)");
  onRun(command, [o] {
    IoiOptions options;
    options.count = o->count;
    options.frameIndex = o->frame;
    options.seed = static_cast<uint64_t>(o->seed);
    options.prependEndOfText = !o->noEot;
    const std::unique_ptr<Tokenizer> tokenizer = loadTokenizer(tokenizerOption(o->tokenizer));
    IoiPromptSet set;
    try {
      set = makeIoiPromptSet(*tokenizer, options);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    const nlohmann::json j = toJson(set);
    if (o->out.empty()) {
      printJson(j);
      return 0;
    }
    writeFileAtomic(o->out, j.dump(1) + "\n");
    nlohmann::json summary = j;
    summary.erase("prompts");
    summary["prompts"] = set.prompts.size();
    summary["example"] = {{"clean", set.prompts.front().cleanText},
                          {"corrupted", set.prompts.front().corruptedText}};
    summary["out"] = o->out;
    printJson(summary);
    return 0;
  });
}

}  // namespace nf::cli

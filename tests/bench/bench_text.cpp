// Tokenizer and tokenize throughput on English-like text, against the reference GPT-2 BPE in Python
// (OpenAI's algorithm with its per-word cache) on the same text in the same run, and of the same
// vocabulary as a tokenizer.json in the GPT-NeoX, Qwen2.5 and SmolLM2 settings. Prints figures, asserts
// nothing: speed is measured, not tested.
//   bench_text [--text FILE] [--tokenizer DIR] [--mb N]
// Without --text, N MB of the synthetic corpus are generated; without --tokenizer, one is trained on it.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "data/synthetic_corpus.h"
#include "data/token_file.h"
#include "data/tokenize.h"
#include "io/atomic_file.h"
#include "text/bpe_trainer.h"
#include "tokenizer_fixtures.h"

using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

std::string run(const std::string& cmd) {
  std::string out;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return out;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
  ::pclose(pipe);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string textPath, tokenizerDir;
  double mb = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--text")
      textPath = argv[i + 1];
    else if (a == "--tokenizer")
      tokenizerDir = argv[i + 1];
    else if (a == "--mb")
      mb = std::stod(argv[i + 1]);
  }
  const std::string work = (std::filesystem::temp_directory_path() / "nf-bench-text").string();
  std::filesystem::create_directories(work);
  if (textPath.empty()) {
    textPath = work + "/corpus.txt";
    const auto start = Clock::now();
    nf::writeSyntheticCorpus(textPath, nf::CorpusStyle::Main, 0, static_cast<int64_t>(mb * 1e6));
    std::printf("corpus: %.1f MB generated in %.2f s (%.1f MB/s)\n", mb, seconds(start), mb / seconds(start));
  }
  if (tokenizerDir.empty()) {
    tokenizerDir = work + "/tokenizer";
    const auto start = Clock::now();
    nf::BpeTrainer trainer({8192, 2});
    trainer.addFile(textPath);
    trainer.train().save(tokenizerDir);
    std::printf("train-tokenizer: vocab 8192 on %s in %.2f s\n", textPath.c_str(), seconds(start));
  }
  const nf::BpeTokenizer tokenizer = nf::BpeTokenizer::load(tokenizerDir);
  const std::string text = nf::readTextFile(textPath);

  // Encode from a cold cache, one thread, whole text in memory.
  auto start = Clock::now();
  const std::vector<int32_t> ids = tokenizer.encode(text);
  const double encodeSeconds = seconds(start);
  const double encodeRate = text.size() / 1e6 / encodeSeconds;
  std::printf("encode: %.1f MB → %zu tokens in %.2f s: %.1f MB/s (%.2f bytes/token)\n", text.size() / 1e6,
              ids.size(), encodeSeconds, encodeRate, double(text.size()) / ids.size());

  start = Clock::now();
  const auto stats =
      nf::tokenizeFiles({textPath}, nf::BpeTokenizer::load(tokenizerDir), tokenizerDir, work + "/t.bin");
  const double tokenizeRate = stats.bytes / 1e6 / seconds(start);
  std::printf("tokenize (file → .bin, streamed, incl. I/O): %.1f MB/s\n", tokenizeRate);

#ifdef NF_TOKENIZER_FORMATS  // built with tokenizer.json support
  // The same vocabulary in tokenizer.json with each family's normalizer, pre-tokenizer and added tokens.
  for (const nf::test::HfFamily* family : {&nf::test::kGptNeoX, &nf::test::kQwen2, &nf::test::kSmolLM2}) {
    const std::string folder = work + "/" + family->name;
    nf::test::writeHfTokenizer(
        folder,
        nf::test::hfTokenizerJson(tokenizer, *family, nf::test::familyAddedTokens(tokenizer, *family)));
    const auto json = nf::loadTokenizer(folder);
    start = Clock::now();
    const std::size_t tokens = json->encode(text).size();
    const double rate = text.size() / 1e6 / seconds(start);
    start = Clock::now();
    const auto streamed = nf::tokenizeFiles({textPath}, *json, folder, work + "/t.bin");
    std::printf("tokenizer.json, %s setting: encode %.1f MB/s (%zu tokens), tokenize %.1f MB/s\n",
                family->name, rate, tokens, streamed.bytes / 1e6 / seconds(start));
  }
#endif

  const std::string reference = run(std::string(NF_REFERENCE_PYTHON) + " " + NF_REFERENCE_DIR +
                                    "/bench_tokenizer.py " + tokenizerDir + " " + textPath + " 5000000");
  try {
    const double referenceRate = nlohmann::json::parse(reference)["mb_per_second"].get<double>();
    std::printf("reference (Python, OpenAI algorithm with word cache, first 5 MB): %.2f MB/s\n",
                referenceRate);
    std::printf("ratio encode / reference: %.1fx\n", encodeRate / referenceRate);
  } catch (const std::exception&) {
    std::printf("reference: unavailable (%s)\n", reference.c_str());
  }
  std::filesystem::remove_all(work);
  return 0;
}

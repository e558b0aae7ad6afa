// Token files, streaming tokenization, batches and evaluation chunks, the synthetic corpus, IOI prompts.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "data/batches.h"
#include "data/ioi.h"
#include "data/synthetic_corpus.h"
#include "data/token_file.h"
#include "data/token_sequences.h"
#include "data/tokenize.h"
#include "fixtures.h"
#include "io/atomic_file.h"
#include "text/bpe_trainer.h"
#include "tokenizer_fixtures.h"

using namespace nf;
using namespace nf::test;

namespace {

std::vector<int32_t> readAll(const TokenFile& file) {
  std::vector<int32_t> ids(file.size());
  file.read(0, file.size(), ids.data(), 0);
  return ids;
}

std::vector<int32_t> iota(int n, int mod) {
  std::vector<int32_t> ids(n);
  for (int i = 0; i < n; ++i) ids[i] = i % mod;
  return ids;
}

// A tokenizer trained on the main corpus, shared by the tests that need one (training takes a second).
const BpeTokenizer& corpusTokenizer() {
  static const BpeTokenizer tokenizer = [] {
    SyntheticCorpus corpus(CorpusStyle::Main, 1);
    BpeTrainer trainer({2000, 2});
    for (int i = 0; i < 1500; ++i) trainer.addText(corpus.nextDocument());
    return trainer.train();
  }();
  return tokenizer;
}

}  // namespace

TEST_CASE(token_file_round_trips_uint16_and_uint32) {
  TempDir dir;
  const auto small = iota(1000, 50257);
  writeTokens(dir.path("a.bin"), small, 50257);
  TokenFile a = TokenFile::open(dir.path("a.bin"));
  REQUIRE(a.meta().dtype == TokenDType::U16);
  REQUIRE_EQ(std::filesystem::file_size(dir.path("a.bin")), 2000u);
  REQUIRE(readAll(a) == small);

  std::vector<int32_t> large = {0, 65535, 65536, 99999, 7};
  writeTokens(dir.path("b.bin"), large, 100000);
  TokenFile b = TokenFile::open(dir.path("b.bin"));
  REQUIRE(b.meta().dtype == TokenDType::U32);
  REQUIRE_EQ(std::filesystem::file_size(dir.path("b.bin")), 20u);
  REQUIRE(readAll(b) == large);
  REQUIRE_EQ(nlohmann::json::parse(readTextFile(dir.path("b.bin.json")))["dtype"], "uint32");
}

TEST_CASE(nanogpt_file_without_sidecar_reads_as_uint16) {
  TempDir dir;
  const std::vector<uint16_t> raw = {50256, 1, 2, 3};
  std::ofstream(dir.path("train.bin"), std::ios::binary).write(reinterpret_cast<const char*>(raw.data()), 8);
  TokenFile file = TokenFile::open(dir.path("train.bin"));
  REQUIRE_EQ(file.size(), 4);
  REQUIRE_EQ(file.at(0), 50256u);
  REQUIRE_EQ(file.meta().vocabSize, -1);
  // numpy's default int64 ids (or int32 ones) without a sidecar would read as ids with zeros between
  // them, every one in range: refused, with the way out.
  std::vector<int64_t> wide(64);
  for (int i = 0; i < 64; ++i) wide[i] = 1 + (i * 37) % 2000;
  std::ofstream(dir.path("wide.bin"), std::ios::binary)
      .write(reinterpret_cast<const char*>(wide.data()), static_cast<std::streamsize>(wide.size() * 8));
  REQUIRE_THROWS_WITH(TokenFile::open(dir.path("wide.bin")), "wide.bin", "looks like 32- or 64-bit integers",
                      "astype(np.uint16)");
  // 32-bit ids past 65535 (a 100k vocabulary) do not show that pattern, and every 16-bit half is a valid
  // id of such a model: without a sidecar a file cannot be read for a vocabulary past 16 bits.
  std::vector<uint32_t> big(64);
  for (int i = 0; i < 64; ++i) big[i] = 70000 + i * 400;
  std::ofstream(dir.path("big.bin"), std::ios::binary)
      .write(reinterpret_cast<const char*>(big.data()), static_cast<std::streamsize>(big.size() * 4));
  const TokenFile bigFile = TokenFile::open(dir.path("big.bin"));
  std::vector<int64_t> ids(8);
  REQUIRE_THROWS_WITH(bigFile.read(0, 8, ids.data(), 100000), "big.bin", "has no sidecar",
                      "vocabulary of 100000", "\"dtype\": \"uint32\"");
  REQUIRE_THROWS_WITH(readSequences(dir.path("big.bin"), 2, 8, -1, 100000), "big.bin", "has no sidecar");
  file.read(0, 4, ids.data(), 65536);  // a vocabulary of 16 bits reads it as before
  REQUIRE_EQ(ids[0], 50256);
  // nanoGPT's files hold GPT-2's ids: read by Pythia (end-of-text 0), every id below its 50,304, it had
  // been noise unsaid.
  REQUIRE_EQ(otherTokenizerProblem(file, 50256, nullptr), "");
  const std::string problem = otherTokenizerProblem(file, 0, nullptr);
  REQUIRE_MSG(problem.find(dir.path("train.bin") + " has no sidecar") != std::string::npos &&
                  problem.find("the model's end-of-text is 0") != std::string::npos,
              problem);
}

TEST_CASE(bad_token_files_get_clear_errors) {
  TempDir dir;
  std::ofstream(dir.path("odd.bin"), std::ios::binary) << "abcde";
  REQUIRE_THROWS_WITH(TokenFile::open(dir.path("odd.bin")), "odd.bin", "5 bytes", "whole number of uint16");

  writeTokens(dir.path("t.bin"), iota(10, 10), 100);
  writeFileAtomic(dir.path("t.bin.json"), R"({"dtype": "int8"})");
  REQUIRE_THROWS_WITH(TokenFile::open(dir.path("t.bin")), "t.bin.json", "int8", "not supported");

  writeTokens(dir.path("u.bin"), iota(10, 10), 100);
  std::filesystem::resize_file(dir.path("u.bin"), 16);
  REQUIRE_THROWS_WITH(TokenFile::open(dir.path("u.bin")), "u.bin", "8 tokens", "says 10");

  writeTokens(dir.path("v.bin"), {1, 2, 300, 4}, 1000);
  TokenFile v = TokenFile::open(dir.path("v.bin"));
  std::vector<int64_t> out(4);
  REQUIRE_THROWS_WITH(v.read(0, 4, out.data(), 256), "v.bin", "token 2", "id 300", "vocabulary of 256");
  REQUIRE_THROWS_WITH(TokenFile::open(dir.path("missing.bin")), "missing.bin", "cannot open");
  // A uint32 id of 2^31 or more (another tool's file) is outside any vocabulary, also when read into the
  // int32 rows a batch uses, where it would otherwise come back negative (a fuzzer's finding).
  const uint32_t huge[2] = {7, 0x80000005u};
  writeFileAtomic(dir.path("h.bin"), std::string(reinterpret_cast<const char*>(huge), sizeof huge));
  writeFileAtomic(dir.path("h.bin.json"), R"({"dtype": "uint32"})");
  std::vector<int32_t> rows(2);
  REQUIRE_THROWS_WITH(TokenFile::open(dir.path("h.bin")).read(0, 2, rows.data(), 50257), "h.bin", "token 1",
                      "id 2147483653", "vocabulary of 50257");

  TokenFileMeta meta;
  meta.vocabSize = 50;
  TokenFileWriter writer(dir.path("w.bin"), meta);
  const int32_t tooBig = 50;
  REQUIRE_THROWS_WITH(writer.append(&tooBig, 1), "w.bin", "token id 50");
}

// nanoGPT's prepare.py writes uint16 whatever the tokenizer: a larger vocabulary's ids come out cut to 16
// bits, each a valid id of the model. A sidecar that says so, or says nothing of the vocabulary, is refused.
TEST_CASE(uint16_ids_are_refused_for_a_vocabulary_they_cannot_hold) {
  TempDir dir;
  const std::vector<uint16_t> raw = {34463, 1, 2, 3};  // 99999 cut to 16 bits, and three more
  const std::string bytes(reinterpret_cast<const char*>(raw.data()), 8);
  writeFileAtomic(dir.path("q.bin"), bytes);
  writeFileAtomic(dir.path("q.bin.json"),
                  R"({"dtype": "uint16", "vocab_size": 151665, "eot_token_id": 99999})");
  REQUIRE_THROWS_WITH(TokenFile::open(dir.path("q.bin")), "q.bin.json", "uint16", "vocab_size 151665",
                      "cut to 16 bits");
  writeFileAtomic(dir.path("q.bin.json"), R"({"dtype": "uint16", "eot_token_id": 70000})");
  REQUIRE_THROWS_WITH(TokenFile::open(dir.path("q.bin")), "q.bin.json", "eot_token_id 70000");
  // A hand-written sidecar that names only the dtype: read for a 151,665-id model, refused as a file without
  // one.
  writeFileAtomic(dir.path("q.bin.json"), R"({"dtype": "uint16"})");
  std::vector<int64_t> ids(4);
  REQUIRE_THROWS_WITH(TokenFile::open(dir.path("q.bin")).read(0, 4, ids.data(), 151665), "q.bin",
                      "uint16 token ids (its sidecar says)", "vocabulary of 151665", "\"dtype\": \"uint32\"");
  // Made for a 16-bit vocabulary (another tokenizer's: the fingerprint checks say so), it reads.
  writeFileAtomic(dir.path("q.bin.json"), R"({"dtype": "uint16", "vocab_size": 50257})");
  TokenFile::open(dir.path("q.bin")).read(0, 4, ids.data(), 151665);
  REQUIRE_EQ(ids[0], 34463);
  // A writer for a 16-bit file refuses an id it cannot hold, whatever vocabulary it is told.
  TokenFileMeta meta;
  meta.vocabSize = 100000;
  meta.dtype = TokenDType::U16;
  TokenFileWriter writer(dir.path("w.bin"), meta);
  const int32_t wide = 70000;
  REQUIRE_THROWS_WITH(writer.append(&wide, 1), "w.bin", "token id 70000", "uint16");
}

TEST_CASE(tokenizing_streams_txt_and_jsonl_with_end_of_text_between_documents) {
  TempDir dir;
  const BpeTokenizer& tokenizer = corpusTokenizer();
  // Several megabytes so the stream is cut into blocks; the result must equal encoding the whole text.
  SyntheticCorpus corpus(CorpusStyle::Main, 2);
  std::string text;
  std::vector<int32_t> expected;
  int documents = 0;
  while (text.size() < 3'000'000) {
    const std::string doc = corpus.nextDocument();
    text += (documents ? "<|endoftext|>" : "") + doc;
    tokenizer.encodeAppend(doc, expected);
    expected.push_back(tokenizer.eotId());
    ++documents;
  }
  writeFileAtomic(dir.path("corpus.txt"), text);
  std::vector<Progress> reports;
  const TokenizeStats stats = tokenizeFiles({dir.path("corpus.txt")}, tokenizer, "tok", dir.path("c.bin"),
                                            [&](const Progress& p) { reports.push_back(p); });
  REQUIRE_EQ(stats.documents, documents);
  REQUIRE(readAll(TokenFile::open(dir.path("c.bin"))) == expected);
  REQUIRE(reports.size() >= 3);
  REQUIRE(reports.back().finished);
  REQUIRE_EQ(reports.back().done, reports.back().total);
  const auto sidecar = nlohmann::json::parse(readTextFile(dir.path("c.bin.json")));
  REQUIRE_EQ(sidecar["documents"], documents);
  REQUIRE_EQ(sidecar["vocab_size"], tokenizer.vocabSize());

  writeFileAtomic(dir.path("docs.jsonl"),
                  "{\"text\": \"Mary went home.\"}\n\n{\"text\": \"a <|endoftext|> b\", \"id\": 2}\n");
  tokenizeFiles({dir.path("docs.jsonl")}, tokenizer, "tok", dir.path("j.bin"));
  std::vector<int32_t> j = tokenizer.encode("Mary went home.");
  j.push_back(tokenizer.eotId());
  tokenizer.encodeAppend("a <|endoftext|> b", j, /*allowSpecial=*/false);  // literal text inside a document
  j.push_back(tokenizer.eotId());
  REQUIRE(readAll(TokenFile::open(dir.path("j.bin"))) == j);

  // Its own tokenizer's data says nothing; with the end-of-text id edited in the sidecar (same fingerprint),
  // the documents would split at another token: said (it had been trusted).
  REQUIRE_EQ(otherTokenizerProblem(TokenFile::open(dir.path("j.bin")), tokenizer.eotId(), &tokenizer), "");
  auto edited = nlohmann::json::parse(readTextFile(dir.path("j.bin.json")));
  edited["eot_token_id"] = 13;
  writeFileAtomic(dir.path("j.bin.json"), edited.dump());
  REQUIRE_EQ(otherTokenizerProblem(TokenFile::open(dir.path("j.bin")), tokenizer.eotId(), &tokenizer),
             dir.path("j.bin") + "'s sidecar names end-of-text id 13, but its tokenizer's is " +
                 std::to_string(tokenizer.eotId()) + " (edited by hand?)");
  // A config naming another end token than its tokenizer's (an instruct model's) is no sign of other data.
  edited["eot_token_id"] = tokenizer.eotId();
  writeFileAtomic(dir.path("j.bin.json"), edited.dump());
  REQUIRE_EQ(otherTokenizerProblem(TokenFile::open(dir.path("j.bin")), 13, &tokenizer), "");

  writeFileAtomic(dir.path("bad.jsonl"), "{\"text\": \"ok\"}\n{\"body\": \"no text\"}\n");
  REQUIRE_THROWS_WITH(tokenizeFiles({dir.path("bad.jsonl")}, tokenizer, "tok", dir.path("bad.bin")),
                      "bad.jsonl", "line 2", "\"text\"");
  REQUIRE(!std::filesystem::exists(dir.path("bad.bin")));  // nothing half-written

  // A UTF-8 byte-order mark is no part of the text; UTF-16 text is refused, not tokenized as junk.
  writeFileAtomic(dir.path("bom.txt"), "\xef\xbb\xbfMary went home.");
  writeFileAtomic(dir.path("plain.txt"), "Mary went home.");
  tokenizeFiles({dir.path("bom.txt")}, tokenizer, "tok", dir.path("bom.bin"));
  tokenizeFiles({dir.path("plain.txt")}, tokenizer, "tok", dir.path("plain.bin"));
  REQUIRE(readAll(TokenFile::open(dir.path("bom.bin"))) == readAll(TokenFile::open(dir.path("plain.bin"))));
  writeFileAtomic(dir.path("utf16.txt"), std::string("\xff\xfeM\0a\0r\0y\0", 10));
  REQUIRE_THROWS_WITH(tokenizeFiles({dir.path("utf16.txt")}, tokenizer, "tok", dir.path("u.bin")),
                      "utf16.txt", "UTF-16", "save it as UTF-8");
  writeFileAtomic(dir.path("nul.jsonl"), std::string("M\0a\0r\0y\0", 8));
  REQUIRE_THROWS_WITH(tokenizeFiles({dir.path("nul.jsonl")}, tokenizer, "tok", dir.path("u.bin")),
                      "nul.jsonl", "NUL bytes", "not UTF-8");
}

// The induction data: after a text document, sometimes a span of random ids and its exact copy; the text
// itself is unchanged, and the mix is what the seed says.
TEST_CASE(random_repeats_mix_a_random_span_and_its_copy_between_documents) {
  TempDir dir;
  const BpeTokenizer& tokenizer = corpusTokenizer();
  const int32_t eot = tokenizer.eotId();
  const std::vector<std::string> docs = {"Mary went home.", "John gave a drink to Mary.", "The end."};
  std::string text;
  for (const auto& d : docs) text += (text.empty() ? "" : "<|endoftext|>") + d;
  writeFileAtomic(dir.path("docs.txt"), text);
  RandomRepeats repeats;
  repeats.chance = 1;  // after every document
  repeats.minSpan = 5;
  repeats.maxSpan = 9;
  repeats.seed = 3;
  const TokenizeStats stats =
      tokenizeFiles({dir.path("docs.txt")}, tokenizer, "tok", dir.path("r.bin"), {}, repeats);
  REQUIRE_EQ(stats.repeatDocuments, 3);
  REQUIRE_EQ(stats.documents, 6);
  const std::vector<int32_t> all = readAll(TokenFile::open(dir.path("r.bin")));
  // Documents are what end-of-text separates: text, span+span, text, span+span, …
  std::vector<std::vector<int32_t>> parts(1);
  for (int32_t id : all) {
    if (id == eot)
      parts.emplace_back();
    else
      parts.back().push_back(id);
  }
  parts.pop_back();  // after the last end-of-text
  REQUIRE_EQ(parts.size(), 6u);
  std::set<std::vector<int32_t>> spans;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i % 2 == 0) {
      REQUIRE(parts[i] == tokenizer.encode(docs[i / 2]));
      continue;
    }
    const std::vector<int32_t>& r = parts[i];
    const std::size_t half = r.size() / 2;
    REQUIRE(r.size() % 2 == 0);
    REQUIRE(half >= 5);
    REQUIRE(half <= 9);
    REQUIRE(std::equal(r.begin(), r.begin() + half, r.begin() + half));
    for (int32_t id : r) REQUIRE(id >= 0 && id < tokenizer.vocabSize() && id != eot);
    spans.insert(r);
  }
  REQUIRE_EQ(spans.size(), 3u);  // random, not one span repeated
  const auto sidecar = nlohmann::json::parse(readTextFile(dir.path("r.bin.json")));
  REQUIRE_EQ(sidecar["documents"], 6);
  REQUIRE(sidecar["sources"][1].get<std::string>().find("random repeated spans") != std::string::npos);
  // The same seed gives the same file; chance 0 gives the text alone.
  tokenizeFiles({dir.path("docs.txt")}, tokenizer, "tok", dir.path("r2.bin"), {}, repeats);
  REQUIRE(readAll(TokenFile::open(dir.path("r2.bin"))) == all);
  repeats.chance = 0;
  REQUIRE_EQ(
      tokenizeFiles({dir.path("docs.txt")}, tokenizer, "tok", dir.path("t.bin"), {}, repeats).repeatDocuments,
      0);
  repeats.chance = 1.5;
  REQUIRE_THROWS_WITH(tokenizeFiles({dir.path("docs.txt")}, tokenizer, "tok", dir.path("x.bin"), {}, repeats),
                      "chance in [0, 1]");
}

TEST_CASE(batches_are_reproducible_from_a_saved_generator_state) {
  TempDir dir;
  writeTokens(dir.path("t.bin"), iota(5000, 97), 97);
  BatchSampler sampler(TokenFile::open(dir.path("t.bin")), 4, 16, 123, 97);
  for (int i = 0; i < 3; ++i) sampler.next();
  const Random::State saved = sampler.state();
  std::vector<Batch> expected = {sampler.next(), sampler.next()};

  BatchSampler resumed(TokenFile::open(dir.path("t.bin")), 4, 16, 999, 97);
  resumed.setState(saved);
  for (const Batch& e : expected) {
    const Batch b = resumed.next();
    REQUIRE(torch::equal(b.inputs, e.inputs));
    REQUIRE(torch::equal(b.targets, e.targets));
  }
  // Windows are consecutive tokens and targets are the inputs shifted by one.
  const Batch b = sampler.next();
  REQUIRE(torch::equal(b.targets.slice(1, 0, 15), b.inputs.slice(1, 1, 16)));
  REQUIRE(torch::equal((b.inputs.select(1, 0) + 1) % 97, b.inputs.select(1, 1)));
  // Another seed gives other windows.
  BatchSampler other(TokenFile::open(dir.path("t.bin")), 4, 16, 124, 97);
  REQUIRE(!torch::equal(other.next().inputs,
                        BatchSampler(TokenFile::open(dir.path("t.bin")), 4, 16, 123, 97).next().inputs));
}

// An id outside the vocabulary anywhere in the training file is refused before the first batch, not when a
// random window first meets it (hours in, and at the same step after every resume).
TEST_CASE(a_training_file_s_ids_are_all_checked_before_the_first_batch) {
  TempDir dir;
  for (const int64_t at : {int64_t{0}, int64_t{2500}, int64_t{4999}}) {
    std::vector<int32_t> ids = iota(5000, 96);  // 0…95: the end-of-text 96 never occurs
    for (int64_t i = 0; i < 5000; i += 40) ids[static_cast<std::size_t>(i)] = 96;
    ids[static_cast<std::size_t>(at)] = 200;
    writeTokens(dir.path("t.bin"), ids, 256);
    const std::string where = "token " + std::to_string(at) + " has id 200";
    REQUIRE_THROWS_WITH(BatchSampler(TokenFile::open(dir.path("t.bin")), 4, 16, 1, 97), dir.path("t.bin"),
                        where);
    // The document scan stops a window short of the end; the tail is read all the same.
    REQUIRE_THROWS_WITH(
        BatchSampler(TokenFile::open(dir.path("t.bin")), 4, 16, 1, 97, {}, DocumentWindows{96, 0.5}), where);
  }
}

// The whole-file passes read a million tokens at a time; what straddles or ends a block is seen all the same.
TEST_CASE(passes_over_a_file_longer_than_a_block_see_every_token) {
  TempDir dir;
  const int64_t block = int64_t{1} << 20, size = block + 37, window = 5;
  std::vector<int32_t> ids(static_cast<std::size_t>(size));
  for (int64_t i = 0; i < size; ++i) ids[static_cast<std::size_t>(i)] = static_cast<int32_t>(i % 900);
  for (const int64_t at : {int64_t{3}, block - 1, block, size - window, size - 2})
    ids[static_cast<std::size_t>(at)] = 999;  // the marker, nowhere else
  ids.back() = 998;                           // once, as the file's last token
  writeTokens(dir.path("long.bin"), ids, 1000);
  const TokenFile file = TokenFile::open(dir.path("long.bin"));

  const std::vector<bool> seen = file.occurringTokens(1000);
  REQUIRE(seen[998] && seen[999] && seen[0] && !seen[950]);
  std::vector<int64_t> visited;
  file.forEachOccurrence(999, window, 1000, [&](int64_t at) {
    visited.push_back(at);
    return true;
  });
  // Each marker with a whole window from it: not those in the last window - 1 tokens.
  REQUIRE(visited == (std::vector<int64_t>{3, block - 1, block, size - window}));
  visited.clear();
  file.forEachOccurrence(999, window, 1000, [&](int64_t at) {
    visited.push_back(at);
    return visited.size() < 2;  // stops when asked
  });
  REQUIRE(visited == (std::vector<int64_t>{3, block - 1}));

  ids[static_cast<std::size_t>(block + 10)] = 1500;  // past the first block
  writeTokens(dir.path("bad.bin"), ids, 2000);
  REQUIRE_THROWS_WITH(TokenFile::open(dir.path("bad.bin")).requireIdsBelow(1000, block - 5),
                      "token " + std::to_string(block + 10) + " has id 1500");
}

// Data parallelism: workers' shares of each batch, in rank order, are the one-process batch, and every
// worker's generator stays the run's (so a checkpoint resumes with any number of workers).
TEST_CASE(worker_shares_of_a_batch_are_the_one_process_batch) {
  TempDir dir;
  writeTokens(dir.path("t.bin"), iota(5000, 97), 97);
  const TokenFile file = TokenFile::open(dir.path("t.bin"));
  for (int workers : {2, 4}) {
    BatchSampler whole(file, 8, 16, 7, 97);
    std::vector<BatchSampler> shares;
    for (int rank = 0; rank < workers; ++rank) {
      WorkerEnvironment w;
      w.rank = rank, w.worldSize = workers;
      shares.emplace_back(file, 8, 16, 7, 97, batchShare(8, w));
    }
    for (int step = 0; step < 3; ++step) {
      const Batch expected = whole.next();
      std::vector<torch::Tensor> inputs, targets;
      for (BatchSampler& share : shares) {
        const Batch b = share.next();
        REQUIRE_EQ(b.inputs.size(0), 8 / workers);
        inputs.push_back(b.inputs), targets.push_back(b.targets);
        REQUIRE(share.state() == whole.state());
      }
      REQUIRE(torch::equal(torch::cat(inputs), expected.inputs));
      REQUIRE(torch::equal(torch::cat(targets), expected.targets));
    }
  }
  WorkerEnvironment three;
  three.worldSize = 3;
  REQUIRE_THROWS_WITH(batchShare(8, three), "8 sequences", "3 workers");
  REQUIRE_THROWS_WITH(BatchSampler(file, 8, 16, 7, 97, BatchShare{6, 4}), "[6, 10)", "batch of 8");
}

// Document windows: a share of the windows starts at the end-of-text marker before a document (a BOS),
// the rest anywhere; the sequence of batches still resumes from the generator's state.
TEST_CASE(document_windows_start_at_the_end_of_text_marker) {
  TempDir dir;
  // Documents of 3 to 40 tokens (ids 0..95), each followed by the marker 96.
  std::vector<int32_t> tokens;
  Random random(5);
  while (tokens.size() < 20000) {
    const uint64_t length = 3 + random.below(38);
    for (uint64_t i = 0; i < length; ++i) tokens.push_back(static_cast<int32_t>(random.below(96)));
    tokens.push_back(96);
  }
  writeTokens(dir.path("t.bin"), tokens, 97);
  const TokenFile file = TokenFile::open(dir.path("t.bin"));
  auto firstTokens = [&](double share, uint64_t seed) {
    BatchSampler sampler(file, 64, 32, seed, 97, {}, DocumentWindows{96, share});
    int64_t atMarker = 0;
    for (int i = 0; i < 20; ++i) atMarker += sampler.next().inputs.select(1, 0).eq(96).sum().item<int64_t>();
    return static_cast<double>(atMarker) / (20 * 64);
  };
  REQUIRE_EQ(firstTokens(1.0, 1), 1.0);
  const double half = firstTokens(0.5, 1), none = firstTokens(0.0, 1);
  // A window starting anywhere opens with the marker about as often as the marker occurs (1 in ~22).
  REQUIRE(none < 0.1);
  REQUIRE(half > 0.4);
  REQUIRE(half < 0.6);
  // A share of 0 is the sampler as it was: the same windows as without DocumentWindows.
  REQUIRE(torch::equal(BatchSampler(file, 8, 32, 3, 97, {}, DocumentWindows{96, 0}).next().inputs,
                       BatchSampler(file, 8, 32, 3, 97).next().inputs));
  // Resumable: the state after some batches continues the same windows.
  BatchSampler sampler(file, 8, 32, 3, 97, {}, DocumentWindows{96, 0.5});
  sampler.next();
  BatchSampler resumed(file, 8, 32, 99, 97, {}, DocumentWindows{96, 0.5});
  resumed.setState(sampler.state());
  REQUIRE(torch::equal(resumed.next().inputs, sampler.next().inputs));
  // A file without the marker cannot give document windows: the error names the file and the token.
  writeTokens(dir.path("plain.bin"), iota(5000, 96), 97);
  REQUIRE_THROWS_WITH(
      BatchSampler(TokenFile::open(dir.path("plain.bin")), 4, 16, 0, 97, {}, DocumentWindows{96, 1}),
      "plain.bin", "no end-of-text token (id 96)");
  REQUIRE_THROWS_WITH(BatchSampler(file, 4, 16, 0, 97, {}, DocumentWindows{96, 1.5}), "[0, 1]");
}

// The analyses' sequences: consecutive chunks, or (for a model pretrained on document windows) sequences
// that each start at the end-of-text token before a document and do not overlap.
TEST_CASE(analysis_sequences_are_chunks_or_start_at_documents) {
  TempDir dir;
  // Documents of 10 tokens (ids 1..10), each followed by the marker 0, and one long last document.
  std::vector<int32_t> tokens;
  for (int d = 0; d < 5; ++d) {
    for (int i = 1; i <= 10; ++i) tokens.push_back(i);
    tokens.push_back(0);
  }
  for (int i = 0; i < 40; ++i) tokens.push_back(1 + i % 10);
  writeTokens(dir.path("t.bin"), tokens, 11);
  const TokenSequences chunks = readSequences(dir.path("t.bin"), 3, 12);
  REQUIRE_EQ(chunks.count, 3);
  REQUIRE_EQ(chunks.row(1)[0], tokens[12]);
  REQUIRE(chunks.source.find("chunks") != std::string::npos);
  REQUIRE(chunks.source.find("asked") == std::string::npos);
  // Fewer in the file than asked: the source says so (the CLI prints it as a note).
  REQUIRE(readSequences(dir.path("t.bin"), 100, 12)
              .source.find("7 chunks × 12 tokens from the start (100 were "
                           "asked for: the file holds no more that do not overlap)") != std::string::npos);
  // Markers at 10, 21, 32, 43, 54; windows of 12 from each, without overlap: 10, 32, 54 (21 and 43 fall
  // inside the window before), and 54 + 12 ≤ 95 tokens.
  const TokenSequences documents = readSequences(dir.path("t.bin"), 8, 12, 0);
  REQUIRE_EQ(documents.count, 3);
  for (int64_t i = 0; i < documents.count; ++i) {
    REQUIRE_EQ(documents.row(i)[0], 0);
    REQUIRE_EQ(documents.row(i)[1], 1);
  }
  REQUIRE(documents.source.find("3 documents") != std::string::npos);
  REQUIRE_THROWS_WITH(readSequences(dir.path("t.bin"), 2, 12, 11), "t.bin", "no end-of-text token (id 11)");
}

TEST_CASE(eval_chunks_are_sequential_and_non_overlapping) {
  TempDir dir;
  writeTokens(dir.path("t.bin"), iota(101, 1000), 1000);
  EvalChunks chunks(TokenFile::open(dir.path("t.bin")), 10, 1000);
  REQUIRE_EQ(chunks.count(), 10);  // (101 − 1) / 10: every token after the first is a target once
  const Batch b = chunks.chunks(0, 10);
  for (int64_t i = 0; i < 10; ++i) {
    REQUIRE_EQ(b.inputs[i][0].item<int64_t>(), i * 10);
    REQUIRE_EQ(b.targets[i][9].item<int64_t>(), i * 10 + 10);
  }
  REQUIRE_EQ(EvalChunks(TokenFile::open(dir.path("t.bin")), 10, 1000, 35).count(), 3);
  REQUIRE_THROWS_WITH(EvalChunks(TokenFile::open(dir.path("t.bin")), 200, 1000), "t.bin",
                      "fewer than one chunk");
}

TEST_CASE(corpus_is_byte_identical_for_a_seed_and_differs_across_seeds) {
  TempDir dir;
  writeSyntheticCorpus(dir.path("a.txt"), CorpusStyle::Main, 7, 300'000);
  writeSyntheticCorpus(dir.path("b.txt"), CorpusStyle::Main, 7, 300'000);
  writeSyntheticCorpus(dir.path("c.txt"), CorpusStyle::Main, 8, 300'000);
  writeSyntheticCorpus(dir.path("d.txt"), CorpusStyle::Alternative, 7, 300'000);
  const std::string a = readTextFile(dir.path("a.txt"));
  REQUIRE(a.size() >= 300'000u);
  REQUIRE(a == readTextFile(dir.path("b.txt")));
  REQUIRE(a != readTextFile(dir.path("c.txt")));
  REQUIRE(a.substr(0, 1000) != readTextFile(dir.path("d.txt")).substr(0, 1000));
  REQUIRE(a.find("<|endoftext|>") != std::string::npos);
  // The circuits the corpus is built for: indirect-object sentences and verbatim repeats.
  REQUIRE(a.find(" gave a ") != std::string::npos || a.find(" handed a ") != std::string::npos);
}

namespace {

// FNV-1a, 64 bits, as 16 hex digits.
std::string fnv1a64(const std::string& bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (const unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

}  // namespace

TEST_CASE(synthetic_corpus_is_byte_identical_for_a_seed) {
  // The hashes were recorded from the corpus code before it was split into corpus_grammar, corpus_rules,
  // corpus_writer and the two style files (commit c5e7010): a refactor must not change a byte. A
  // deliberate change to the corpus (a template, a word list, the order of random draws) must update them,
  // and regenerate the corpus and re-bundle the model trained on it.
  const auto documents = [](CorpusStyle style) {
    SyntheticCorpus corpus(style, 7);
    std::string text;
    for (int i = 0; i < 200; ++i) text += corpus.nextDocument() + '\x1e';
    return text;
  };
  const std::string main = documents(CorpusStyle::Main), alt = documents(CorpusStyle::Alternative);
  REQUIRE_EQ(main.size(), 216259u);
  REQUIRE_EQ(fnv1a64(main), "ef52be9053238495");
  REQUIRE_EQ(alt.size(), 114221u);
  REQUIRE_EQ(fnv1a64(alt), "5711200dba373b6f");
  // The word lists the IOI prompt sets share with the corpus.
  std::string lists;
  for (const auto* list : {&ioiFrames(), &corpusNames(), &corpusPlaces(), &corpusObjects()}) {
    for (const std::string& item : *list) lists += item + '\n';
    lists += '\x1e';
  }
  REQUIRE_EQ(fnv1a64(lists), "52219a6e7d429561");
}

TEST_CASE(ioi_prompts_have_fixed_length_positions_and_single_token_names) {
  const BpeTokenizer& tokenizer = corpusTokenizer();
  IoiOptions options;
  options.count = 96;
  const IoiPromptSet set = makeIoiPromptSet(tokenizer, options);
  REQUIRE_EQ(set.prompts.size(), 96u);
  REQUIRE(set.namesAvailable >= 10);
  int abba = 0;
  for (const IoiPrompt& p : set.prompts) {
    REQUIRE_EQ(static_cast<int64_t>(p.clean.size()), set.length);
    REQUIRE_EQ(static_cast<int64_t>(p.corrupted.size()), set.length);
    REQUIRE(tokenizer.encode(" " + p.indirectObject) == std::vector<int32_t>{p.correctId});
    REQUIRE(tokenizer.encode(" " + p.subject) == std::vector<int32_t>{p.wrongId});
    REQUIRE_EQ(p.clean[0], tokenizer.eotId());
    REQUIRE(tokenizer.decode(std::vector<int32_t>(p.clean.begin() + 1, p.clean.end())) == p.cleanText);
    const std::string a = p.order == "ABBA" ? p.indirectObject : p.subject;
    const std::string b = p.order == "ABBA" ? p.subject : p.indirectObject;
    REQUIRE_EQ(p.cleanText, "When " + a + " and " + b + " went to the " + p.place + ", " + p.subject +
                                " gave a " + p.object + " to");
    // Clean: the subject repeats; corrupted: the indirect object takes its place. Nothing else differs.
    REQUIRE_EQ(p.clean[set.subjectPosition], p.wrongId);
    REQUIRE_EQ(p.corrupted[set.subjectPosition], p.correctId);
    int differing = 0;
    for (int64_t t = 0; t < set.length; ++t) differing += p.clean[t] != p.corrupted[t];
    REQUIRE_EQ(differing, 1);
    const bool ioFirst = p.order == "ABBA";
    abba += ioFirst;
    REQUIRE_EQ(p.clean[set.firstNamePosition], ioFirst ? p.correctId : p.wrongId);
    REQUIRE_EQ(p.clean[set.secondNamePosition], ioFirst ? p.wrongId : p.correctId);
  }
  REQUIRE_EQ(abba, 48);
  // The JSON form reads back to the same prompts.
  const IoiPromptSet back = ioiPromptSetFromJson(toJson(set), "set.json");
  REQUIRE_EQ(back.prompts.size(), set.prompts.size());
  REQUIRE(back.prompts[5].corrupted == set.prompts[5].corrupted);
  REQUIRE_EQ(back.subjectPosition, set.subjectPosition);
  // A set read from a file is measured only with the tokenizer it was made with, inside the vocabulary.
  checkIoiPromptSetFor(back, tokenizer.vocabSize(), &tokenizer);
  IoiPromptSet other = back;
  other.prompts[3].clean[1] = other.prompts[3].clean[1] == 1 ? 2 : 1;  // another token, in the vocabulary
  REQUIRE_THROWS_WITH(checkIoiPromptSetFor(other, tokenizer.vocabSize(), &tokenizer), "set.json",
                      "prompt 3's tokens are not its clean_text", "made with another tokenizer");
  checkIoiPromptSetFor(other, tokenizer.vocabSize(), nullptr);  // without a tokenizer: ids only
  other = back;
  other.prompts[7].correctId = tokenizer.vocabSize();
  REQUIRE_THROWS_WITH(checkIoiPromptSetFor(other, tokenizer.vocabSize(), nullptr), "set.json",
                      "prompt 7's correct_id " + std::to_string(tokenizer.vocabSize()) +
                          " is outside the model's vocabulary");

  options.count = 10;
  REQUIRE_THROWS_WITH(makeIoiPromptSet(tokenizer, options), "multiple of 4");
  // A tokenizer that knows no names as single tokens cannot make a set, and says why.
  BpeTrainer tiny({300, 2});
  tiny.addText("zzz yyy xxx");
  options.count = 4;
  REQUIRE_THROWS_WITH(makeIoiPromptSet(tiny.train(), options), "too few single-token words");
}

// Every prompt of a set, whatever the tokenizer: names one token each with the space before them, at
// the set's positions, clean and corrupted differing only at the repeated subject.
void requireWellFormedIoiSet(const Tokenizer& tokenizer, const IoiPromptSet& set, int32_t startId) {
  for (const IoiPrompt& p : set.prompts) {
    REQUIRE_EQ(static_cast<int64_t>(p.clean.size()), set.length);
    REQUIRE_EQ(static_cast<int64_t>(p.corrupted.size()), set.length);
    REQUIRE_EQ(p.clean[0], startId);
    REQUIRE(tokenizer.encode(p.cleanText) == std::vector<int32_t>(p.clean.begin() + 1, p.clean.end()));
    REQUIRE_EQ(tokenizer.tokenBytes(p.correctId), " " + p.indirectObject);
    REQUIRE_EQ(tokenizer.tokenBytes(p.wrongId), " " + p.subject);
    REQUIRE_EQ(p.clean[set.subjectPosition], p.wrongId);
    REQUIRE_EQ(p.corrupted[set.subjectPosition], p.correctId);
    const bool ioFirst = p.order == "ABBA";
    REQUIRE_EQ(p.clean[set.firstNamePosition], ioFirst ? p.correctId : p.wrongId);
    REQUIRE_EQ(p.clean[set.secondNamePosition], ioFirst ? p.wrongId : p.correctId);
    int differing = 0;
    for (int64_t t = 0; t < set.length; ++t) differing += p.clean[t] != p.corrupted[t];
    REQUIRE_EQ(differing, 1);
  }
}

TEST_CASE(ioi_prompts_work_with_tokenizer_json_and_sentencepiece) {
#ifndef NF_TOKENIZER_FORMATS
  SKIP("built with -DNF_TOKENIZER_FORMATS=OFF: no tokenizer.json or tokenizer.model");
#endif
  TempDir dir;
  IoiOptions options;
  options.count = 32;
  // Qwen2.5's tokenizer.json setting around the corpus vocabulary.
  writeHfTokenizer(dir.path("qwen"),
                   hfTokenizerJson(corpusTokenizer(), kQwen2, familyAddedTokens(corpusTokenizer(), kQwen2)));
  const auto qwen = loadTokenizer(dir.path("qwen"));
  const IoiPromptSet qwenSet = makeIoiPromptSet(*qwen, options);
  REQUIRE_EQ(qwenSet.prompts.size(), 32u);
  requireWellFormedIoiSet(*qwen, qwenSet, qwen->eotId());

  // A LLaMA-style SentencePiece model: " Mary" is the piece "▁Mary", prompts start with <s>.
  const std::string text = corpusLines(1, 400);
  trainSentencePiece(dir.path("llama"), text, 2000);
  const auto llama = loadTokenizer(dir.path("llama"));
  const IoiPromptSet llamaSet = makeIoiPromptSet(*llama, options);
  REQUIRE(llamaSet.namesAvailable >= 10);
  requireWellFormedIoiSet(*llama, llamaSet, llama->bosId());

  // Too small a vocabulary: the error names the file and the words that are not one token.
  trainSentencePiece(dir.path("tiny"), text, 400);
  REQUIRE_THROWS_WITH(makeIoiPromptSet(*loadTokenizer(dir.path("tiny")), options),
                      dir.path("tiny/tokenizer.model"), "too few single-token words",
                      "names " + corpusNames().front());
}

TEST_CASE(token_files_start_documents_with_the_bos_where_hugging_face_adds_it) {
  // LLaMA's models saw <s> document </s>: a SentencePiece model's token file is written so.
  TempDir dir;
  trainSentencePiece(dir.path("llama"), corpusLines(2, 300), 1000);
  const auto llama = loadTokenizer(dir.path("llama"));
  REQUIRE(llama->bosId() >= 0 && llama->bosId() != llama->eotId());
  const std::vector<std::string> documents = {"The cat sat.", "Mary gave a book to John.", "12 34"};
  writeFileAtomic(dir.path("docs.txt"), documents[0] + kEndOfText + documents[1] + kEndOfText + documents[2]);
  tokenizeFiles({dir.path("docs.txt")}, *llama, dir.path("llama"), dir.path("docs.bin"));
  std::vector<int32_t> expected;
  for (const auto& d : documents) {
    expected.push_back(llama->bosId());
    for (int32_t id : llama->encode(d)) expected.push_back(id);
    expected.push_back(llama->eotId());
  }
  const TokenFile file = TokenFile::open(dir.path("docs.bin"));
  REQUIRE_EQ(file.size(), static_cast<int64_t>(expected.size()));
  for (std::size_t i = 0; i < expected.size(); ++i)
    REQUIRE_EQ(static_cast<int32_t>(file.at(static_cast<int64_t>(i))), expected[i]);
  // Prompts start the same way, and so do the sequences of analyses and training windows at documents: at
  // the <s> (they began at the </s> before it, a token the model never saw first).
  REQUIRE_EQ(llama->documentStartId(), llama->bosId());
  REQUIRE_EQ(file.meta().bosTokenId, llama->bosId());
  const TokenSequences starts =
      readSequences(dir.path("docs.bin"), 3, 3, documentMarker(file, llama->eotId()));
  REQUIRE_EQ(starts.count, 3);
  for (int64_t r = 0; r < starts.count; ++r) REQUIRE_EQ(starts.row(r)[0], llama->bosId());
  REQUIRE_MSG(starts.source.find("each from the begin-of-sequence token that starts it") != std::string::npos,
              starts.source);
  // Where tokenizer_config.json says add_bos_token: false, Hugging Face's LlamaTokenizer leaves <s> out:
  // a model so configured saw its documents without it.
  writeFileAtomic(dir.path("llama/tokenizer_config.json"), R"({"add_bos_token": false})");
  const auto plain = loadTokenizer(dir.path("llama"));
  tokenizeFiles({dir.path("docs.txt")}, *plain, dir.path("llama"), dir.path("plain.bin"));
  std::vector<int32_t> withoutBos;
  for (int32_t id : expected)
    if (id != llama->bosId()) withoutBos.push_back(id);
  REQUIRE(readAll(TokenFile::open(dir.path("plain.bin"))) == withoutBos);
  REQUIRE_EQ(TokenFile::open(dir.path("plain.bin")).meta().bosTokenId, -1);  // documents follow </s>
  REQUIRE_EQ(plain->documentStartId(), plain->eotId());  // prompts start as its documents do
}

TEST_MAIN()

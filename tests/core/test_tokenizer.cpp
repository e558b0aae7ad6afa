// The GPT-2 tokenizer and its trainer against an independent Python reference
// (tests/reference/bpe_reference.py: OpenAI's algorithm with the `regex` module); added_tokens.json beside
// its files against the tokenizer.json reference (tests/reference/hf_tokenizer_reference.py).
#include <fstream>
#include <nlohmann/json.hpp>

#include "fixtures.h"
#include "io/atomic_file.h"
#include "text/bpe_trainer.h"
#include "text/pretokenizer.h"
#include "text/unicode.h"
#include "text_fixtures.h"
#include "tokenizer_fixtures.h"
#include "util/random.h"

using namespace nf;
using namespace nf::test;

// tests/reference/tokenizer_fingerprint.py resources/tiny-gpt2, without its "fnv1a64:".
constexpr const char* kTinyGpt2Fingerprint = "19494962895a6250";

namespace {

const std::vector<std::string>& kTricky = trickyText();

// Training text with all kinds of characters, so the vocabulary has merges everywhere.
std::string trainingText() {
  return nf::test::trainingText(
      {"the", "cat", "sat", " on", "mat", "don't", "it's",   "café",  "naïve", "日本", "語", "123",
       "4,5", "😀",   "!!",  "  ",  "\n",  "\t",    "Zürich", "we're", "x2y",   "\xff", "ok", "<|endoftext|>"},
      kTricky);
}

std::vector<std::vector<int32_t>> referenceEncode(const std::string& tokenizerDir,
                                                  const std::vector<std::string>& texts) {
  return runReference("bpe_reference.py encode " + tokenizerDir, texts)
      .get<std::vector<std::vector<int32_t>>>();
}

BpeTokenizer trainOn(const std::string& text, int32_t vocab, int64_t minFrequency = 2) {
  BpeTrainer trainer({vocab, minFrequency});
  trainer.addText(text);
  return trainer.train();
}

}  // namespace

TEST_CASE(character_classes_cover_all_of_unicode) {
  REQUIRE(charClass(U'a') == CharClass::Letter);
  REQUIRE(charClass(U'é') == CharClass::Letter);
  REQUIRE(charClass(U'ß') == CharClass::Letter);
  REQUIRE(charClass(0x4E2D) == CharClass::Letter);  // 中
  REQUIRE(charClass(0x05D0) == CharClass::Letter);  // Hebrew alef
  REQUIRE(charClass(0x0663) == CharClass::Number);  // Arabic-Indic three
  REQUIRE(charClass(0x2166) == CharClass::Number);  // Roman numeral seven (Nl)
  REQUIRE(charClass(0x00BD) == CharClass::Number);  // one half (No)
  REQUIRE(charClass(0x00A0) == CharClass::Whitespace);
  REQUIRE(charClass(0x3000) == CharClass::Whitespace);
  REQUIRE(charClass(0x2028) == CharClass::Whitespace);
  REQUIRE(charClass(0x001C) == CharClass::Other);   // Python's str.isspace() says yes, `regex` says no
  REQUIRE(charClass(0x0301) == CharClass::Other);   // a combining mark is not a letter
  REQUIRE(charClass(0x1F600) == CharClass::Other);  // 😀
  REQUIRE(charClass(kInvalidByte) == CharClass::Other);
}

TEST_CASE(utf8_decoding_rejects_what_python_rejects) {
  auto decode = [](const std::string& s) {
    char32_t cp;
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const int n = decodeUtf8(p, p + s.size(), cp);
    return std::make_pair(n, cp);
  };
  REQUIRE(decode("\xc3\xa9") == std::make_pair(2, char32_t{0xE9}));
  REQUIRE(decode("\xf0\x9f\x98\x80") == std::make_pair(4, char32_t{0x1F600}));
  REQUIRE(decode("\xc0\xaf") == std::make_pair(1, kInvalidByte));          // overlong
  REQUIRE(decode("\xed\xa0\x80") == std::make_pair(1, kInvalidByte));      // surrogate
  REQUIRE(decode("\xf4\x90\x80\x80") == std::make_pair(1, kInvalidByte));  // above U+10FFFF
  REQUIRE(decode("\xe2\x82") == std::make_pair(1, kInvalidByte));          // truncated
  REQUIRE(decode("\x80") == std::make_pair(1, kInvalidByte));              // lone continuation
}

TEST_CASE(pretokenizer_pieces_follow_gpt2_rules) {
  auto pieces = [](const std::string& s) {
    std::vector<std::string> out;
    Pretokenizer p(s);
    std::string_view piece;
    while (p.next(piece)) out.emplace_back(piece);
    return out;
  };
  using V = std::vector<std::string>;
  REQUIRE(pieces("Hello world") == (V{"Hello", " world"}));
  REQUIRE(pieces("don't") == (V{"don", "'t"}));
  REQUIRE(pieces("a   b") == (V{"a", "  ", " b"}));  // the last space goes with the word
  REQUIRE(pieces("a \n b") == (V{"a", " \n", " b"}));
  REQUIRE(pieces("a\nb") == (V{"a", "\n", "b"}));
  REQUIRE(pieces("end   ") == (V{"end", "   "}));
  REQUIRE(pieces("abc123") == (V{"abc", "123"}));
  REQUIRE(pieces(" !?x") == (V{" !?", "x"}));
}

// Streaming cuts a file where pre-tokenizing both sides apart gives the whole text's pieces. Text with
// CRLF line ends, CJK lines or lines ending in a space must be cuttable too, or a file's blocks pile up
// in memory (all of it, quadratically searched).
TEST_CASE(stream_cuts_keep_the_pieces_and_are_found_in_any_text) {
  auto pieces = [](std::string_view s) {
    std::vector<std::string> out;
    Pretokenizer p(s);
    std::string_view piece;
    while (p.next(piece)) out.emplace_back(piece);
    return out;
  };
  for (const std::string text : {"first line\r\nsecond", "日本語。\n次の行", "trailing \nnext", "a.\n\nb",
                                 "x\t\ty", "café\tok", "😀 grin"}) {
    const std::size_t cut = lastSafeCut(text);
    REQUIRE_MSG(cut > 0, text);
    std::vector<std::string> apart = pieces(std::string_view(text).substr(0, cut));
    const std::vector<std::string> rest = pieces(std::string_view(text).substr(cut));
    apart.insert(apart.end(), rest.begin(), rest.end());
    REQUIRE_MSG(apart == pieces(text), text);
  }
  REQUIRE_EQ(lastSafeCut("   \r\n  "), 0u);  // whitespace only: no piece boundary is certain
  REQUIRE_EQ(lastSafeCut("日本"), 0u);
  // Every cut found in the tricky strings, each joined to the next, keeps the pieces.
  for (std::size_t i = 0; i + 1 < kTricky.size(); ++i) {
    const std::string text = kTricky[i] + kTricky[i + 1];
    const std::size_t cut = lastSafeCut(text);
    if (cut == 0) continue;
    std::vector<std::string> apart = pieces(std::string_view(text).substr(0, cut));
    const std::vector<std::string> rest = pieces(std::string_view(text).substr(cut));
    apart.insert(apart.end(), rest.begin(), rest.end());
    REQUIRE_MSG(apart == pieces(text), i);
  }
}

TEST_CASE(encoding_matches_reference_gpt2_algorithm_on_tricky_strings) {
  TempDir dir;
  const BpeTokenizer tokenizer = trainOn(trainingText(), 700);
  REQUIRE(tokenizer.mergeCount() > 300);
  tokenizer.save(dir.path("tok"));
  const auto expected = referenceEncode(dir.path("tok"), kTricky);
  for (std::size_t i = 0; i < kTricky.size(); ++i) {
    const auto ids = tokenizer.encode(kTricky[i]);
    REQUIRE_MSG(ids == expected[i], "string " << i << ": \"" << kTricky[i] << "\"");
    REQUIRE_MSG(tokenizer.decode(ids) == kTricky[i], "round trip of string " << i);
  }
}

TEST_CASE(every_byte_string_round_trips_and_matches_reference) {
  TempDir dir;
  const BpeTokenizer tokenizer = trainOn(trainingText(), 500);
  tokenizer.save(dir.path("tok"));
  const std::vector<std::string> texts = randomByteStrings(200);
  const auto expected = referenceEncode(dir.path("tok"), texts);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const auto ids = tokenizer.encode(texts[i]);
    REQUIRE_MSG(ids == expected[i], "random byte string " << i);
    REQUIRE(tokenizer.decode(ids) == texts[i]);
  }
}

TEST_CASE(trainer_matches_reference_trainer) {
  requireReferencePython("regex");
  TempDir dir;
  const std::string text = trainingText();
  writeFileAtomic(dir.path("train.txt"), text);
  BpeTrainer trainer({600, 2});
  trainer.addFile(dir.path("train.txt"));
  trainer.train().save(dir.path("ours"));
  const std::string cmd = std::string(NF_REFERENCE_PYTHON) + " " + NF_REFERENCE_DIR +
                          "/bpe_reference.py train " + dir.path("train.txt") + " 600 2 " +
                          dir.path("reference");
  REQUIRE_EQ(runCommand(cmd), 0);
  REQUIRE(nlohmann::json::parse(readTextFile(dir.path("ours/vocab.json"))) ==
          nlohmann::json::parse(readTextFile(dir.path("reference/vocab.json"))));
  REQUIRE(readTextFile(dir.path("ours/merges.txt")) == readTextFile(dir.path("reference/merges.txt")));
}

TEST_CASE(saved_vocabulary_loads_and_reproduces) {
  TempDir dir;
  const BpeTokenizer trained = trainOn(trainingText(), 600);
  trained.save(dir.path("tok"));
  const BpeTokenizer loaded = BpeTokenizer::load(dir.path("tok"));
  REQUIRE_EQ(loaded.vocabSize(), trained.vocabSize());
  REQUIRE_EQ(loaded.vocabSize(), 600);
  REQUIRE_EQ(loaded.eotId(), 599);
  REQUIRE_EQ(loaded.tokenBytes(0), "!");  // GPT-2's byte order: printable bytes first
  for (const auto& s : kTricky) REQUIRE(loaded.encode(s) == trained.encode(s));
  loaded.save(dir.path("again"));
  REQUIRE(readTextFile(dir.path("again/vocab.json")) == readTextFile(dir.path("tok/vocab.json")));
  REQUIRE(readTextFile(dir.path("again/merges.txt")) == readTextFile(dir.path("tok/merges.txt")));
}

TEST_CASE(end_of_text_is_special_only_when_allowed) {
  const BpeTokenizer tokenizer = trainOn(trainingText(), 400);
  const auto ids = tokenizer.encode("a<|endoftext|>b");
  REQUIRE_EQ(std::count(ids.begin(), ids.end(), tokenizer.eotId()), 1);
  std::vector<int32_t> ordinary;
  tokenizer.encodeAppend("a<|endoftext|>b", ordinary, /*allowSpecial=*/false);
  REQUIRE_EQ(std::count(ordinary.begin(), ordinary.end(), tokenizer.eotId()), 0);
  REQUIRE(tokenizer.decode(ordinary) == "a<|endoftext|>b");
}

TEST_CASE(merges_with_old_mac_line_endings_are_refused_not_read_as_none) {
  const BpeTokenizer tokenizer = trainOn(trainingText(), 300);
  TempDir dir;
  tokenizer.save(dir.path("tok"));
  const std::string vocab = readTextFile(dir.path("tok/vocab.json"));
  std::string merges = readTextFile(dir.path("tok/merges.txt")), crlf, cr;
  for (char c : merges) {
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    cr += c == '\n' ? '\r' : c;
  }
  const auto text = trainingText().substr(0, 200);
  REQUIRE(BpeTokenizer::fromFiles(vocab, crlf, "v.json", "m.txt").encode(text) == tokenizer.encode(text));
  // With CR alone the whole file was one "#version" line: a tokenizer without merges, silently.
  REQUIRE_THROWS_WITH(BpeTokenizer::fromFiles(vocab, cr, "v.json", "m.txt"), "m.txt", "line 1",
                      "carriage return");
}

TEST_CASE(malformed_tokenizer_files_are_named) {
  TempDir dir;
  const BpeTokenizer tokenizer = trainOn(trainingText(), 300);
  tokenizer.save(dir.path("tok"));
  const std::string vocab = readTextFile(dir.path("tok/vocab.json"));
  const std::string merges = readTextFile(dir.path("tok/merges.txt"));
  REQUIRE_THROWS_WITH(BpeTokenizer::fromFiles("{\"a\": 0,", merges, "v.json", "m.txt"), "v.json",
                      "not valid JSON");
  REQUIRE_THROWS_WITH(BpeTokenizer::fromFiles(vocab, merges + "zzq qqz\n", "v.json", "m.txt"), "m.txt",
                      "line", "not in v.json");
  REQUIRE_THROWS_WITH(BpeTokenizer::fromFiles(vocab, merges + "onlyone\n", "v.json", "m.txt"), "m.txt",
                      "two tokens");
  auto j = nlohmann::json::parse(vocab);
  j["Ġextra"] = 5000;
  REQUIRE_THROWS_WITH(BpeTokenizer::fromFiles(j.dump(), merges, "v.json", "m.txt"), "v.json", "dense");
  REQUIRE_THROWS_WITH(BpeTokenizer::load(dir.path("missing")), "vocab.json", "not found");
  REQUIRE_THROWS_WITH(tokenizer.decode({0, 300}), "300", "out of range");
}

// Hugging Face's slow GPT2Tokenizer reads added_tokens.json ({"token": id}) beside vocab.json + merges.txt:
// each token is found whole before pre-tokenization, and is special (text where special tokens are not
// allowed) where tokenizer_config.json or special_tokens_map.json names it. Held against the reference's
// reading of the same tokens in a tokenizer.json (tests/reference/hf_tokenizer_reference.py).
TEST_CASE(added_tokens_json_beside_vocab_and_merges_matches_reference) {
  TempDir dir;
  const BpeTokenizer base = trainOn(trainingText(), 400);
  const int64_t n = base.vocabSize();
  base.save(dir.path("files"));
  const std::string file = dir.path("files/added_tokens.json");
  writeFileAtomic(
      file,
      nlohmann::json{
          {"<|im_start|>", n}, {"<|im_end|>", n + 1}, {"<tool_call>", n + 2}, {kEndOfText, base.eotId()}}
          .dump());
  writeFileAtomic(dir.path("files/tokenizer_config.json"),
                  R"({"eos_token": {"__type": "AddedToken", "content": "<|im_end|>"}})");
  writeFileAtomic(dir.path("files/special_tokens_map.json"),
                  R"({"additional_special_tokens": ["<|im_start|>"]})");
  HfFamily gpt2 = kGptNeoX;
  gpt2.sections = R"({"normalizer": null, "post_processor": null, "decoder": {"type": "ByteLevel"},
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}})";
  writeHfTokenizer(dir.path("json"),
                   hfTokenizerJson(base, gpt2,
                                   nlohmann::json::array({addedToken(base.eotId(), kEndOfText, true, false),
                                                          addedToken(n, "<|im_start|>", true, false),
                                                          addedToken(n + 1, "<|im_end|>", true, false),
                                                          addedToken(n + 2, "<tool_call>", false, false)})));
  std::vector<std::string> texts = {"<|im_start|>user\nHi<|im_end|>\n<tool_call>x</tool_call><|endoftext|>",
                                    "<|im_start|><|im_start|>a<tool_call><tool_call b<|im_end"};
  for (const auto& s : kTricky) {  // Hugging Face takes only UTF-8
    char32_t c = 0;
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    for (std::size_t i = 0; i < s.size() && c != kInvalidByte;)
      i += static_cast<std::size_t>(decodeUtf8(p + i, p + s.size(), c));
    if (c != kInvalidByte) texts.push_back(s);
  }
  const std::unique_ptr<Tokenizer> ours = loadTokenizer(dir.path("files"));
  for (bool allowSpecial : {true, false}) {
    const nlohmann::json expected =
        runReference("hf_tokenizer_reference.py encode " + dir.path("json/tokenizer.json"), texts,
                     allowSpecial ? "" : " --no-special");
    for (std::size_t i = 0; i < texts.size(); ++i) {
      std::vector<int32_t> ids;
      ours->encodeAppend(texts[i], ids, allowSpecial);
      REQUIRE_MSG(ids == expected[i]["ids"].get<std::vector<int32_t>>(),
                  "string " << i << " (special " << allowSpecial << "): \"" << texts[i] << "\"");
      REQUIRE_EQ(ours->decode(ids), texts[i]);
    }
  }
  REQUIRE_EQ(ours->vocabSize(), n + 3);
  REQUIRE_EQ(ours->eotId(), base.eotId());
  const std::string lines = "one line\nanother line\nand a third";
  REQUIRE_EQ(ours->streamCut(lines), base.streamCut(lines));
  // Saved, the vocabulary stays in vocab.json and the added tokens go to added_tokens.json.
  dynamic_cast<const BpeTokenizer&>(*ours).save(dir.path("saved"));
  REQUIRE(readTextFile(dir.path("saved/vocab.json")) == readTextFile(dir.path("files/vocab.json")));
  REQUIRE(loadTokenizer(dir.path("saved"))->encode(texts[0]) == ours->encode(texts[0]));

  // A token with a space after another character could be split by a stream cut: none is made.
  writeFileAtomic(file, nlohmann::json{{"New York", n}}.dump());
  REQUIRE_EQ(loadTokenizer(dir.path("files"))->streamCut(lines), 0u);
  // An id is the token's own in vocab.json or one after the vocabulary, without a gap.
  auto refused = [&](const std::string& json) {
    writeFileAtomic(file, json);
    return loadTokenizer(dir.path("files"));
  };
  REQUIRE_THROWS_WITH(refused(R"({"<x>": 5})"), file, "\"<x>\" has id 5", "inside vocab.json's ids");
  REQUIRE_THROWS_WITH(refused(nlohmann::json{{"<x>", n + 1}}.dump()), file, "without a gap");
  REQUIRE_THROWS_WITH(refused(nlohmann::json{{"<x>", n}, {"<y>", n}}.dump()), file, "or a repeat");
  REQUIRE_THROWS_WITH(refused(nlohmann::json{{kEndOfText, n}}.dump()), file, "vocab.json gives it");
  REQUIRE_THROWS_WITH(refused("[]"), file, "JSON object");
  REQUIRE_THROWS_WITH(refused(R"({"<x>": "1"})"), file, "not an integer");
  REQUIRE_THROWS_WITH(refused("{"), file, "not valid JSON");
}

// The fingerprint token files record (text/tokenizer.h): the bundled tiny tokenizer's, as
// tests/reference/tokenizer_fingerprint.py computes it from vocab.json by the definition (FNV-1a 64 over
// the length-prefixed sizes and each id's bytes), so that sidecars written by any version compare equal;
// and another vocabulary of the same size, trained on other text, differs.
TEST_CASE(tokenizer_fingerprint_follows_its_definition_and_tells_vocabularies_apart) {
  const std::string tiny = std::string(NF_REFERENCE_DIR) + "/../../resources/tiny-gpt2";
  const auto tokenizer = loadTokenizer(tiny);
  REQUIRE_EQ(tokenizerFingerprint(*tokenizer), "fnv1a64:" + std::string(kTinyGpt2Fingerprint));
  BpeTrainingOptions options;
  options.vocabSize = tokenizer->vocabSize();
  options.minFrequency = 1;
  BpeTrainer trainer(options);
  std::string text;  // random words: pairs enough for every merge the size asks for
  Random random(3);
  for (int i = 0; i < 20000; ++i) {
    for (int letters = 3 + static_cast<int>(random.below(6)); letters > 0; --letters)
      text += static_cast<char>('a' + random.below(26));
    text += ' ';
  }
  trainer.addText(text);
  const BpeTokenizer other = trainer.train();
  REQUIRE_EQ(other.vocabSize(), tokenizer->vocabSize());  // the same size, the same end-of-text id
  REQUIRE_EQ(other.eotId(), tokenizer->eotId());
  REQUIRE(tokenizerFingerprint(other) != tokenizerFingerprint(*tokenizer));
}

TEST_MAIN()

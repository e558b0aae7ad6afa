// Tokenizer files beyond GPT-2's vocab.json + merges.txt, against independent references
// (tests/reference/hf_tokenizer_reference.py): Hugging Face tokenizer.json in the settings of
// GPT-NeoX/Pythia, Qwen2.5 and SmolLM2 (and one that uses every other option we read), SentencePiece
// tokenizer.model against the library's Python encoding, the loader's choice of files, and named errors for
// what we refuse.
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "text/bpe_trainer.h"
#include "text/hf_tokenizer.h"
#include "text/sentencepiece_tokenizer.h"
#include "text/tokenizer.h"
#include "text/unicode.h"
#include "tokenizer_fixtures.h"
#include "util/random.h"

using namespace nf;
using namespace nf::test;

namespace {

// GPT-2's tricky strings, and what exercises the other pre-tokenizers, the normalizers and the added
// tokens.
const std::vector<std::string> kTricky = [] {
  std::vector<std::string> text = trickyText();
  for (const char* more :
       {"DON'T SHE'S I'M WE'VE",       // Qwen2's contractions ignore case, GPT-2's do not
        "a  b   c    d     e      f",  // GPT-NeoX's added runs of spaces
        "end.\n\nNext line;\n  indented:\n\n\n", "digits 2024-11-23 12345",
        "combining e\xcc\x81 and precomposed \xc3\xa9, A\xcc\x8a \xe2\x84\xab",  // NFC composes the first
        "ligature \xef\xac\x81 circled \xe2\x91\xa0 fullwidth \xef\xbc\xa1 superscript x\xc2\xb2",  // NFKC
                                                                                                    // folds
        "\xff", "<|im_start|>user\nHello there<|im_end|>\n<|im_start|>assistant\n",
        "<tool_call>{\"x\": 1}</tool_call> <repo_name>nf <|padding|>", "x-y-z; a,b::c ABCdef GHI::jkl,,m-"})
    text.push_back(more);
  return text;
}();

std::string trainingText() {
  return nf::test::trainingText({"the",           "cat",   "sat",   " on",  "mat",   "don't",
                                 "it's",          "café",  "naïve", "日本", "語",    "123",
                                 "4,5",           "😀",     "!!",    "  ",   "\n",    "\t",
                                 "Zürich",        "we're", "x2y",   "ok",   "Hello", " world",
                                 "<|endoftext|>", "\n\n"},
                                kTricky);
}

const BpeTokenizer& trained() {
  static const BpeTokenizer tokenizer = [] {
    BpeTrainer trainer({700, 2});
    trainer.addText(trainingText());
    return trainer.train();
  }();
  return tokenizer;
}

bool validUtf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    char32_t c;
    i += static_cast<std::size_t>(decodeUtf8(p + i, p + s.size(), c));
    if (c == kInvalidByte) return false;
  }
  return true;
}

std::string unhex(const std::string& h) {
  std::string out;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2)
    out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
  return out;
}

struct Expected {
  std::vector<int32_t> ids;
  std::string decoded;
};

// The reference's encodings (and its decoding of them) of texts: "encode" for a tokenizer.json, "sp-encode"
// for a SentencePiece model.
std::vector<Expected> reference(const std::string& command, const std::string& file,
                                const std::vector<std::string>& texts, bool allowSpecial = true) {
  std::vector<Expected> out;
  for (const auto& e : runReference("hf_tokenizer_reference.py " + command + " " + file, texts,
                                    allowSpecial ? "" : " --no-special"))
    out.push_back({e["ids"].get<std::vector<int32_t>>(), unhex(e["decoded"].get<std::string>())});
  return out;
}

// With NF_TOKENIZER_CASES naming a folder, each tokenizer.json checked here is copied to <folder>/<name>/
// with our encodings of its UTF-8 texts (cases.json), for tests/reference/hf_tokenizers_check.py to hold
// them against Hugging Face's own library where it is installed: the check of the reference itself.
void keepCases(const std::string& name, const std::string& folder, const std::vector<std::string>& texts,
               const std::vector<std::vector<int32_t>>& withSpecial,
               const std::vector<std::vector<int32_t>>& withoutSpecial) {
  const char* root = std::getenv("NF_TOKENIZER_CASES");
  if (!root) return;
  const std::string out = std::string(root) + "/" + name;
  std::filesystem::create_directories(out);
  writeFileAtomic(out + "/tokenizer.json", readTextFile(folder + "/tokenizer.json"));
  nlohmann::json cases = nlohmann::json::array();
  for (std::size_t i = 0; i < texts.size(); ++i)
    if (validUtf8(texts[i]))
      cases.push_back(
          {{"text", texts[i]}, {"ids", withSpecial[i]}, {"ids_special_as_text", withoutSpecial[i]}});
  writeFileAtomic(out + "/cases.json", cases.dump(1));
}

// Encodes texts with the tokenizer.json in folder, with and without special tokens, against the reference;
// our decoding must be the reference's, and the exact input where the tokenizer rewrites nothing.
void requireMatchesReference(const std::string& name, const std::string& folder,
                             const std::vector<std::string>& texts, bool roundTrips) {
  const std::unique_ptr<Tokenizer> tokenizer = loadTokenizer(folder);
  std::vector<std::vector<int32_t>> encodings[2];
  for (bool allowSpecial : {true, false}) {
    const auto expected = reference("encode", folder + "/tokenizer.json", texts, allowSpecial);
    for (std::size_t i = 0; i < texts.size(); ++i) {
      std::vector<int32_t> ids;
      tokenizer->encodeAppend(texts[i], ids, allowSpecial);
      REQUIRE_MSG(ids == expected[i].ids,
                  "string " << i << " (special " << allowSpecial << "): \"" << texts[i] << "\"");
      REQUIRE_MSG(tokenizer->decode(ids) == expected[i].decoded, "decoding string " << i);
      if (roundTrips) REQUIRE_MSG(expected[i].decoded == texts[i], "round trip of string " << i);
      encodings[allowSpecial].push_back(ids);
    }
  }
  keepCases(name, folder, texts, encodings[1], encodings[0]);
}

void writeFamily(const std::string& folder, const HfFamily& family) {
  writeHfTokenizer(folder, hfTokenizerJson(trained(), family, familyAddedTokens(trained(), family)));
}

}  // namespace

TEST_CASE(gpt_neox_tokenizer_json_matches_reference) {
  TempDir dir;
  nlohmann::json j = hfTokenizerJson(trained(), kGptNeoX, familyAddedTokens(trained(), kGptNeoX));
  // As in GPT-NeoX-20B's file, model.vocab holds the added tokens' texts too ("   " is its id 50274).
  for (const auto& t : j["added_tokens"]) j["model"]["vocab"][t["content"].get<std::string>()] = t["id"];
  // A vocabulary string outside the byte alphabet stands for its own UTF-8 (as Hugging Face's decoder
  // reads it), even where a byte-level token has the same bytes ("Ġ" is a space too).
  const int32_t rawSpace = trained().vocabSize() + 4;
  j["model"]["vocab"][" "] = rawSpace;
  j["added_tokens"].push_back(addedToken(rawSpace + 1, "<|extra|>", true, false));
  j["model"]["vocab"]["<|extra|>"] = rawSpace + 1;
  writeHfTokenizer(dir.path(), j);
  requireMatchesReference("gpt-neox", dir.path(), kTricky, false);
  const auto tokenizer = loadTokenizer(dir.path());
  REQUIRE_EQ(tokenizer->source(), dir.path("tokenizer.json"));
  REQUIRE_EQ(tokenizer->vocabSize(), trained().vocabSize() + 6);
  REQUIRE_EQ(tokenizer->tokenBytes(rawSpace), " ");
  REQUIRE_EQ(tokenizer->decode({rawSpace}), " ");
  REQUIRE(tokenizer->idOf(" ") != rawSpace);
  REQUIRE_EQ(tokenizer->eotId(), trained().eotId());
  // A run of spaces is its added token, looked for before pre-tokenization.
  const int32_t twoSpaces = trained().vocabSize() + 1;
  REQUIRE_EQ(tokenizer->idOf("  "), twoSpaces);
  const auto ids = tokenizer->encode("a  b");
  REQUIRE(std::find(ids.begin(), ids.end(), twoSpaces) != ids.end());
  REQUIRE_EQ(tokenizer->tokenBytes(twoSpaces), "  ");
}

TEST_CASE(qwen2_tokenizer_json_matches_reference) {
  TempDir dir;
  writeFamily(dir.path(), kQwen2);
  requireMatchesReference("qwen2", dir.path(), kTricky, false);
  const auto tokenizer = loadTokenizer(dir.path());
  const int32_t imStart = trained().vocabSize();
  REQUIRE_EQ(tokenizer->encode("<|im_start|>").size(), 1u);
  REQUIRE_EQ(tokenizer->encode("<|im_start|>")[0], imStart);
  std::vector<int32_t> ordinary;
  tokenizer->encodeAppend("<|im_start|>", ordinary, /*allowSpecial=*/false);
  REQUIRE(ordinary.size() > 1);
  // <tool_call> is an added token that is not special: it stays one token either way.
  std::vector<int32_t> tool;
  tokenizer->encodeAppend("<tool_call>", tool, /*allowSpecial=*/false);
  REQUIRE(tool == std::vector<int32_t>{imStart + 2});
  // The special ids are the added tokens that tokenizer.json marks "special": random repeated spans leave
  // them out (data/tokenize.h).
  const nlohmann::json file = nlohmann::json::parse(readTextFile(dir.path("tokenizer.json")));
  std::vector<bool> marked(static_cast<std::size_t>(tokenizer->vocabSize()), false);
  for (const nlohmann::json& added : file["added_tokens"]) marked[added["id"].get<int>()] = added["special"];
  REQUIRE(std::count(marked.begin(), marked.end(), true) >= 2);
  REQUIRE(specialTokenIds(*tokenizer) == marked);
  // Qwen2's regex cuts every digit.
  REQUIRE_EQ(tokenizer->encode("12345").size(), 5u);
}

TEST_CASE(smollm2_tokenizer_json_matches_reference_and_round_trips) {
  TempDir dir;
  writeFamily(dir.path(), kSmolLM2);
  requireMatchesReference("smollm2", dir.path(), kTricky, true);
  // Every byte string round-trips and matches, invalid UTF-8 included.
  requireMatchesReference("smollm2-random-bytes", dir.path(), randomByteStrings(150), true);
}

TEST_CASE(every_supported_option_matches_reference) {
  // The options the three families leave out: a Sequence of normalizers, Split with a String pattern and
  // each behavior (Removed, MergedWithPrevious, MergedWithNext, Contiguous with invert), Digits in runs,
  // ByteLevel's prefix space, BPE's ignore_merges.
  TempDir dir;
  HfFamily family = kSmolLM2;
  family.sections =
      R"({"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKD"}, {"type": "NFC"}]},
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"String": "::"}, "behavior": "Removed", "invert": false},
    {"type": "Split", "pattern": {"String": "-"}, "behavior": "MergedWithPrevious", "invert": false},
    {"type": "Split", "pattern": {"Regex": "[,;]"}, "behavior": "MergedWithNext", "invert": false},
    {"type": "Split", "pattern": {"Regex": "\\p{Lu}"}, "behavior": "Contiguous", "invert": true},
    {"type": "Digits", "individual_digits": false},
    {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}]},
  "post_processor": {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}}],
                     "pair": [], "special_tokens": {}},
  "decoder": {"type": "ByteLevel"}})";
  family.model = R"({"type": "BPE", "ignore_merges": true})";
  writeHfTokenizer(dir.path(), hfTokenizerJson(trained(), family, familyAddedTokens(trained(), kQwen2)));
  requireMatchesReference("every-option", dir.path(), kTricky, false);
}

TEST_CASE(gpt2_tokenizer_json_equals_vocab_and_merges) {
  // GPT-2's own folder has both forms; the loader prefers tokenizer.json, which must encode the same.
  TempDir dir;
  HfFamily gpt2 = kGptNeoX;
  gpt2.sections = R"({"normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
  "post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
  "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}})";
  trained().save(dir.path("gpt2"));
  const nlohmann::json added =
      nlohmann::json::array({addedToken(trained().eotId(), kEndOfText, true, false)});
  writeHfTokenizer(dir.path("json"), hfTokenizerJson(trained(), gpt2, added));
  std::vector<std::string> utf8;
  std::copy_if(kTricky.begin(), kTricky.end(), std::back_inserter(utf8), validUtf8);
  requireMatchesReference("gpt2", dir.path("json"), utf8, false);
  const auto files = loadTokenizer(dir.path("gpt2"));
  const auto json = loadTokenizer(dir.path("json"));
  REQUIRE(dynamic_cast<const BpeTokenizer*>(files.get()) != nullptr);
  REQUIRE(dynamic_cast<const HfTokenizer*>(json.get()) != nullptr);
  // Bytes that are not UTF-8 are cut out before pre-tokenization in tokenizer.json (Hugging Face cannot
  // take them); GPT-2's files treat them as characters.
  for (const auto& s : kTricky) {
    if (!validUtf8(s)) continue;
    REQUIRE_MSG(json->encode(s) == files->encode(s), "\"" << s << "\"");
    std::vector<int32_t> a, b;
    json->encodeAppend(s, a, false);
    files->encodeAppend(s, b, false);
    REQUIRE(a == b);
  }
  REQUIRE_EQ(json->eotId(), files->eotId());
  // One vocabulary in two formats: token files made with either are the same tokenizer's.
  REQUIRE_EQ(tokenizerFingerprint(*json), tokenizerFingerprint(*files));
  // Only GPT-2's pre-tokenization lets a stream be cut; and then where GPT-2's files cut it.
  const std::string text = "one line\nanother line\nand a third";
  REQUIRE_EQ(json->streamCut(text), files->streamCut(text));
  REQUIRE(json->streamCut(text) > 0);
  writeFamily(dir.path("qwen"), kQwen2);
  REQUIRE_EQ(loadTokenizer(dir.path("qwen"))->streamCut(text), 0u);
  REQUIRE(tokenizerFingerprint(*loadTokenizer(dir.path("qwen"))) != tokenizerFingerprint(*files));
}

TEST_CASE(special_tokens_come_from_tokenizer_config) {
  // No <|endoftext|>: the end-of-text token is tokenizer_config.json's eos_token (string or AddedToken
  // object); its bos_token is the begin-of-sequence token. special_tokens_map.json fills what it lacks.
  TempDir dir;
  nlohmann::json added = nlohmann::json::array({addedToken(trained().vocabSize(), "<|im_end|>", true, false),
                                                addedToken(trained().vocabSize() + 1, "<s>", true, false)});
  nlohmann::json j = hfTokenizerJson(trained(), kQwen2, added);
  j["model"]["vocab"].erase(kEndOfText);
  j["model"]["vocab"]["<|notext|>"] = trained().eotId();
  writeHfTokenizer(dir.path(), j);
  REQUIRE_EQ(loadTokenizer(dir.path())->eotId(), -1);
  REQUIRE_EQ(loadTokenizer(dir.path())->bosId(), -1);
  writeFileAtomic(dir.path("tokenizer_config.json"),
                  R"({"eos_token": {"__type": "AddedToken", "content": "<|im_end|>"}, "bos_token": null})");
  writeFileAtomic(dir.path("special_tokens_map.json"), R"({"bos_token": "<s>"})");
  const auto tokenizer = loadTokenizer(dir.path());
  REQUIRE_EQ(tokenizer->eotId(), trained().vocabSize());
  REQUIRE_EQ(tokenizer->bosId(), trained().vocabSize() + 1);
}

TEST_CASE(sentencepiece_model_matches_the_library) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 8; ++i) text += trainingText().substr(0, 60000) + "\n";
  trainSentencePiece(dir.path(), text, 1000);
  const auto tokenizer = loadTokenizer(dir.path());
  REQUIRE(dynamic_cast<const SentencePieceTokenizer*>(tokenizer.get()) != nullptr);
  REQUIRE(tokenizer->vocabSize() > 300);
  REQUIRE_EQ(tokenizer->bosId(), 1);
  REQUIRE_EQ(tokenizer->eotId(), 2);
  // The library's Python binding takes only valid UTF-8, and reads "<s>" as text.
  std::vector<std::string> texts;
  for (const auto& s : kTricky)
    if (validUtf8(s) && s.find('<') == std::string::npos) texts.push_back(s);
  const auto expected = reference("sp-encode", dir.path("tokenizer.model"), texts);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::vector<int32_t> ids;
    tokenizer->encodeAppend(texts[i], ids, /*allowSpecial=*/false);
    REQUIRE_MSG(ids == expected[i].ids, "string " << i << ": \"" << texts[i] << "\"");
    REQUIRE_MSG(tokenizer->decode(ids) == expected[i].decoded, "decoding string " << i);
  }
  // A piece stands for its text with "▁" as a space; bytes for byte pieces.
  const auto hello = tokenizer->encode("Hello world");
  std::string joined;
  for (int32_t id : hello) joined += tokenizer->tokenBytes(id);
  REQUIRE_EQ(joined, " Hello world");
  REQUIRE_EQ(tokenizer->tokenBytes(tokenizer->idOf("\n")), "\n");
  REQUIRE_EQ(tokenizer->tokenBytes(1), "<s>");
  // Control tokens written in the text are their ids only when special tokens are allowed.
  const auto withEos = tokenizer->encode("a</s>b");
  REQUIRE_EQ(std::count(withEos.begin(), withEos.end(), 2), 1);
  std::vector<int32_t> plain;
  tokenizer->encodeAppend("a</s>b", plain, false);
  REQUIRE_EQ(std::count(plain.begin(), plain.end(), 2), 0);
  REQUIRE_THROWS_WITH(tokenizer->decode({tokenizer->vocabSize()}), "out of range");
  // Its special ids: the library's unknown and control pieces (<unk>, <s>, </s>: spm_train's defaults).
  std::vector<bool> special(static_cast<std::size_t>(tokenizer->vocabSize()), false);
  special[0] = special[1] = special[2] = true;
  REQUIRE(specialTokenIds(*tokenizer) == special);
}

TEST_CASE(loader_picks_files_in_order_and_names_what_it_looked_for) {
  TempDir dir;
  REQUIRE_THROWS_WITH(loadTokenizer(dir.path()), dir.path(), "tokenizer.json", "vocab.json + merges.txt",
                      "tokenizer.model");
  REQUIRE(!hasTokenizer(dir.path()));
  // vocab.json + merges.txt, then tokenizer.json before them.
  trained().save(dir.path());
  REQUIRE(dynamic_cast<BpeTokenizer*>(loadTokenizer(dir.path()).get()) != nullptr);
  writeFamily(dir.path(), kQwen2);
  REQUIRE(dynamic_cast<HfTokenizer*>(loadTokenizer(dir.path()).get()) != nullptr);

  // LLaMA's folder: a SentencePiece-style tokenizer.json (byte fallback) beside tokenizer.model, which is
  // read.
  TempDir llama;
  nlohmann::json j = hfTokenizerJson(trained(), kQwen2, nlohmann::json::array());
  j["model"]["byte_fallback"] = true;
  writeHfTokenizer(llama.path(), j);
  REQUIRE_THROWS_WITH(loadTokenizer(llama.path()), "tokenizer.json", "byte_fallback");
  trainSentencePiece(llama.path(), trainingText(), 1000);
  REQUIRE(dynamic_cast<SentencePieceTokenizer*>(loadTokenizer(llama.path()).get()) != nullptr);
  // A malformed tokenizer.json is an error even so.
  writeFileAtomic(llama.path("tokenizer.json"), "{\"model\": ");
  REQUIRE_THROWS_WITH(loadTokenizer(llama.path()), "tokenizer.json", "not valid JSON");

  // Model folders carry every tokenizer file along.
  writeFileAtomic(llama.path("tokenizer_config.json"), "{}");
  TempDir copy;
  REQUIRE(copyTokenizerFiles(llama.path(), copy.path()));
  for (const char* file : {"tokenizer.json", "tokenizer.model", "tokenizer_config.json"})
    REQUIRE_EQ(readTextFile(copy.path(file)), readTextFile(llama.path(file)));
  REQUIRE(!copyTokenizerFiles(dir.path("nowhere"), copy.path()));
  writeFileAtomic(llama.path("tokenizer.model"), "not a model");
  std::filesystem::remove(llama.path("tokenizer.json"));
  REQUIRE_THROWS_WITH(loadTokenizer(llama.path()), "tokenizer.model", "not a SentencePiece model");
}

// A tokenizer.json we cannot read is refused even beside vocab.json + merges.txt, which need not encode as
// it does (a Lowercase normalizer, a token added to every sequence); only SentencePiece's BPE rewritten
// (byte fallback) gives way, to tokenizer.model.
TEST_CASE(a_tokenizer_json_we_cannot_read_is_an_error_not_a_turn_to_vocab_json) {
  TempDir dir;
  trained().save(dir.path());
  const std::string file = dir.path("tokenizer.json");
  const nlohmann::json good = hfTokenizerJson(trained(), kQwen2, familyAddedTokens(trained(), kQwen2));
  auto loaded = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = good;
    edit(j);
    writeHfTokenizer(dir.path(), j);
    return loadTokenizer(dir.path());
  };
  REQUIRE(dynamic_cast<HfTokenizer*>(loaded([](auto&) {}).get()) != nullptr);
  REQUIRE_THROWS_WITH(loaded([](auto& j) {
                        j["normalizer"] = {{"type", "Lowercase"}};
                      }),
                      file, "normalizer \"Lowercase\"");
  REQUIRE_THROWS_WITH(
      loaded([](auto& j) {
        j["post_processor"] = nlohmann::json::parse(
            R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|endoftext|>"}},
                                {"Sequence": {"id": "A", "type_id": 0}}]})");
      }),
      file, "TemplateProcessing adds <|endoftext|>");
  REQUIRE_THROWS_WITH(loaded([](auto& j) { j["model"]["type"] = 5; }), file, "model type \"(5)\"");
  REQUIRE_THROWS_WITH(loaded([](auto& j) { j["model"]["byte_fallback"] = true; }), file, "byte_fallback");
  writeFileAtomic(file, "{\"model\": ");
  REQUIRE_THROWS_WITH(loadTokenizer(dir.path()), file, "not valid JSON");
  std::filesystem::remove(file);
  std::filesystem::create_directories(file);  // unreadable
  REQUIRE_THROWS_WITH(loadTokenizer(dir.path()), file);
}

// Hugging Face's LlamaTokenizer starts every encoding with <s> unless tokenizer_config.json says
// add_bos_token: false (the default is true); a malformed configuration is named, not passed over.
TEST_CASE(sentencepiece_bos_follows_add_bos_token_of_tokenizer_config) {
  TempDir dir;
  trainSentencePiece(dir.path(), trainingText(), 1000);
  REQUIRE(loadTokenizer(dir.path())->huggingFaceAddsBos());
  const std::string config = dir.path("tokenizer_config.json");
  writeFileAtomic(config, R"({"add_bos_token": true, "bos_token": "<s>"})");
  REQUIRE(loadTokenizer(dir.path())->huggingFaceAddsBos());
  writeFileAtomic(config, R"({"add_bos_token": false, "add_eos_token": false})");
  REQUIRE(!loadTokenizer(dir.path())->huggingFaceAddsBos());
  REQUIRE_EQ(loadTokenizer(dir.path())->bosId(), 1);  // still the model's <s>
  // Also where SentencePiece's tokenizer.json gives way to tokenizer.model.
  nlohmann::json j = hfTokenizerJson(trained(), kQwen2, nlohmann::json::array());
  j["model"]["byte_fallback"] = true;
  writeHfTokenizer(dir.path(), j);
  const auto fallback = loadTokenizer(dir.path());
  REQUIRE(dynamic_cast<SentencePieceTokenizer*>(fallback.get()) != nullptr);
  REQUIRE(!fallback->huggingFaceAddsBos());
  writeFileAtomic(config, R"({"add_bos_token": "false"})");
  REQUIRE_THROWS_WITH(loadTokenizer(dir.path()), config, "add_bos_token is \"false\"", "not true or false");
  writeFileAtomic(config, "[]");
  REQUIRE_THROWS_WITH(loadTokenizer(dir.path()), config, "not a JSON object");
  writeFileAtomic(config, "{");
  REQUIRE_THROWS_WITH(loadTokenizer(dir.path()), config, "not valid JSON");
}

// Tokens a LLaMA folder adds after tokenizer.model's pieces (a chat fine-tune's <|im_start|>, a <pad>) are
// each their one id, as transformers encodes them: they had been cut into pieces where tokenizer.json gave
// way to tokenizer.model. Those within its pieces must be the pieces there; a gap or a clash is named.
TEST_CASE(tokens_added_beside_tokenizer_model_are_their_one_id) {
  TempDir dir;
  trainSentencePiece(dir.path(), trainingText(), 1000);
  const int32_t pieces = loadTokenizer(dir.path())->vocabSize();
  auto withAdded = [&](const nlohmann::json& added) {
    nlohmann::json j = hfTokenizerJson(trained(), kQwen2, added);
    j["model"]["byte_fallback"] = true;  // SentencePiece's BPE rewritten: tokenizer.model is read
    writeHfTokenizer(dir.path(), j);
  };
  // Pieces named as the model file spells them ("▁" for a space) are the pieces they name.
  const auto plain = loadTokenizer(dir.path());
  const auto* model = dynamic_cast<const SentencePieceTokenizer*>(plain.get());
  REQUIRE(model != nullptr);
  int32_t spaced = 3;
  while (spaced < pieces && model->piece(spaced).rfind("\u2581", 0) != 0) ++spaced;
  REQUIRE(spaced < pieces && model->tokenBytes(spaced) != model->piece(spaced));
  withAdded({{{"id", 0}, {"content", "<unk>"}, {"special", true}},
             {{"id", spaced}, {"content", model->piece(spaced)}, {"special", false}},
             {{"id", pieces}, {"content", "<|im_start|>"}, {"special", true}},
             {{"id", pieces + 1}, {"content", "<|im_end|>"}, {"special", true}}});
  const auto tokenizer = loadTokenizer(dir.path());
  REQUIRE_EQ(tokenizer->vocabSize(), pieces + 2);
  const std::vector<int32_t> ids = tokenizer->encode("the cat<|im_start|>user<|im_end|>");
  REQUIRE_EQ(std::count(ids.begin(), ids.end(), pieces), 1);
  REQUIRE_EQ(std::count(ids.begin(), ids.end(), pieces + 1), 1);
  REQUIRE(ids.back() == pieces + 1 && std::find(ids.begin(), ids.end(), pieces) != ids.end());
  REQUIRE_EQ(tokenizer->tokenBytes(pieces), "<|im_start|>");
  REQUIRE_EQ(tokenizer->idOf("<|im_end|>"), pieces + 1);
  REQUIRE_EQ(tokenizer->decode(ids), "the cat<|im_start|>user<|im_end|>");
  // added_tokens.json (the slow tokenizer's) is read the same way, and must agree.
  writeFileAtomic(dir.path("added_tokens.json"), "{\"<|im_start|>\": " + std::to_string(pieces) + "}");
  REQUIRE_EQ(loadTokenizer(dir.path())->vocabSize(), pieces + 2);
  writeFileAtomic(dir.path("added_tokens.json"), "{\"<pad>\": " + std::to_string(pieces) + "}");
  REQUIRE_THROWS_WITH(loadTokenizer(dir.path()), "added_tokens.json", "adds \"<pad>\"", "<|im_start|>");
  std::filesystem::remove(dir.path("added_tokens.json"));
  // A gap after the pieces, and a token within them that is not the piece there: refused by name.
  withAdded({{{"id", pieces + 1}, {"content", "<|im_end|>"}}});
  REQUIRE_THROWS_WITH(loadTokenizer(dir.path()), "tokenizer.json",
                      "\"<|im_end|>\" as id " + std::to_string(pieces + 1));
  withAdded({{{"id", 5}, {"content", "<mask>"}}});
  REQUIRE_THROWS_WITH(loadTokenizer(dir.path()), "tokenizer.json", "\"<mask>\" as id 5", "has the piece");
  // transformers' LlamaTokenizer with add_eos_token ends every encoding with </s>: refused, not dropped.
  withAdded(nlohmann::json::array());
  writeFileAtomic(dir.path("tokenizer_config.json"), R"({"add_eos_token": true})");
  REQUIRE_THROWS_WITH(loadTokenizer(dir.path()), "tokenizer_config.json", "add_eos_token");
}

TEST_CASE(unsupported_and_malformed_tokenizer_json_are_named) {
  TempDir dir;
  const nlohmann::json good = hfTokenizerJson(trained(), kQwen2, familyAddedTokens(trained(), kQwen2));
  auto refused = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = good;
    edit(j);
    writeHfTokenizer(dir.path(), j);
    return loadTokenizer(dir.path());
  };
  const std::string file = dir.path("tokenizer.json");
  REQUIRE_THROWS_WITH(refused([](auto& j) { j["model"]["type"] = "WordPiece"; }), file,
                      "model type \"WordPiece\"");
  REQUIRE_THROWS_WITH(refused([](auto& j) { j["model"]["dropout"] = 0.1; }), file, "dropout");
  REQUIRE_THROWS_WITH(refused([](auto& j) { j["model"]["continuing_subword_prefix"] = "##"; }), file,
                      "continuing_subword_prefix");
  REQUIRE_THROWS_WITH(refused([](auto& j) {
                        j["normalizer"] = {{"type", "Lowercase"}};
                      }),
                      file, "normalizer \"Lowercase\"");
  REQUIRE_THROWS_WITH(refused([](auto& j) {
                        j["pre_tokenizer"] = {{"type", "Whitespace"}};
                      }),
                      file, "pre_tokenizer \"Whitespace\"");
  REQUIRE_THROWS_WITH(refused([](auto& j) { j["pre_tokenizer"]["pretokenizers"].erase(1); }), file,
                      "no ByteLevel step");
  REQUIRE_THROWS_WITH(refused([](auto& j) {
                        j["pre_tokenizer"]["pretokenizers"].push_back({{"type", "Digits"}});
                      }),
                      file, "\"Digits\" after ByteLevel");
  REQUIRE_THROWS_WITH(
      refused([](auto& j) { j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(unclosed"; }),
      file, "(unclosed", "does not compile");
  REQUIRE_THROWS_WITH(
      refused([](auto& j) { j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Sideways"; }), file,
      "behavior \"Sideways\"");
  REQUIRE_THROWS_WITH(
      refused([](auto& j) {
        j["post_processor"] = nlohmann::json::parse(
            R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                {"Sequence": {"id": "A", "type_id": 0}}]})");
      }),
      file, "TemplateProcessing adds <s>");
  REQUIRE_THROWS_WITH(refused([](auto& j) {
                        j["post_processor"] = {{"type", "RobertaProcessing"}};
                      }),
                      file, "post_processor \"RobertaProcessing\"");
  REQUIRE_THROWS_WITH(refused([](auto& j) {
                        j["decoder"] = {{"type", "WordPiece"}};
                      }),
                      file, "decoder \"WordPiece\"");
  REQUIRE_THROWS_WITH(refused([](auto& j) { j["added_tokens"][1]["lstrip"] = true; }), file, "<|im_start|>",
                      "lstrip");
  // tokenizers numbers the added tokens itself (model.vocab's id for a text it holds, the others on from
  // its size in the file's order): a file saying otherwise would encode to other ids there.
  REQUIRE_THROWS_WITH(refused([](auto& j) { j["added_tokens"][2]["id"] = 5000; }), file, "has id 5000",
                      "gives it id");
  REQUIRE_THROWS_WITH(
      refused([](auto& j) { std::swap(j["added_tokens"][1]["id"], j["added_tokens"][2]["id"]); }), file,
      "<|im_start|>", "numbered on from its size");
  REQUIRE_THROWS_WITH(refused([](auto& j) { j["added_tokens"][0]["id"] = 0; }), file, "<|endoftext|>",
                      "model.vocab's id for its text");
  REQUIRE_THROWS_WITH(
      refused([](auto& j) { j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\d*"; }), file,
      "\\d*", "can match the empty string");
  // An id far past the file's tokens is an error, not gigabytes of table.
  REQUIRE_THROWS_WITH(refused([](auto& j) { j["model"]["vocab"]["Ġextra"] = 2'000'000'000; }), file,
                      "has id 2000000000");
  REQUIRE_THROWS_WITH(refused([](auto& j) {
                        j["model"]["merges"][3] = {"Ġzz", "qq"};
                      }),
                      file, "model.merges[3]", "not in");
  REQUIRE_THROWS_WITH(refused([](auto& j) { j["model"]["merges"][2] = "one"; }), file, "model.merges[2]",
                      "two tokens");
  REQUIRE_THROWS_WITH(refused([](auto& j) { j["model"]["vocab"]["Ġextra"] = 9000; }), file, "has id 9000");
  REQUIRE_THROWS_WITH(refused([](auto& j) {
                        // A hole in the ids (the vocabulary's size unchanged: the added tokens keep theirs).
                        int64_t last = 0;
                        for (const auto& t : j["added_tokens"]) last = std::max<int64_t>(last, t["id"]);
                        j["model"]["vocab"].erase("a");
                        j["model"]["vocab"]["Ġextra"] = last + 1;
                      }),
                      file, "neither in model.vocab");
  REQUIRE_THROWS_WITH(refused([](auto& j) { j["model"]["vocab"].erase("a"); }), file, "<|im_start|>",
                      "numbered on from its size");
  REQUIRE_THROWS_WITH(refused([](auto& j) { j["model"]["vocab"]["Ġextra"] = 1; }), file,
                      "id 1 is used twice");
  REQUIRE_THROWS_WITH(refused([](auto& j) { j.erase("model"); }), file, "no \"model\"");
  REQUIRE_THROWS_WITH(refused([](auto& j) { j["added_tokens"][0]["content"] = 7; }), file, "malformed");
  writeFileAtomic(file, "{\"model\": [");
  REQUIRE_THROWS_WITH(loadTokenizer(dir.path()), file, "not valid JSON");
  // A type that is no string is no BPE, and Sequences nested 100,000 deep (a 4 MB file) are refused by name
  // instead of exhausting the stack.
  REQUIRE_THROWS_WITH(refused([](auto& j) { j["model"]["type"] = 5; }), file, "model type \"(5)\"");
  nlohmann::json marked = good;
  marked["normalizer"] = "NESTED";
  std::string nested;
  for (int i = 0; i < 100'000; ++i) nested += R"({"type": "Sequence", "normalizers": [)";
  nested += "null";
  for (int i = 0; i < 100'000; ++i) nested += "]}";
  std::string text = marked.dump();
  text.replace(text.find("\"NESTED\""), 8, nested);
  writeFileAtomic(file, text);
  REQUIRE_THROWS_WITH(loadTokenizer(dir.path()), file, "normalizer Sequences nest more than 32 deep");
}

TEST_MAIN()

#include "text/hf_tokenizer.h"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>

#include <algorithm>
#include <filesystem>

#include "io/file_format.h"
#include "text/pretokenizer.h"
#include "text/unicode.h"

namespace nf {
namespace {

// The regex of Hugging Face's ByteLevel pre-tokenizer (GPT-2's).
constexpr const char* kByteLevelPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// A section's "type", or "null" for a section that is null, for messages and dispatch; "" when it has none,
// and a type that is no string in parentheses ("(5)"), which no dispatch takes for a known one.
std::string typeOf(const nlohmann::json& j) {
  if (j.is_null()) return "null";
  if (!j.is_object() || !j.contains("type")) return "";
  return j["type"].is_string() ? j["type"].get<std::string>() : "(" + j["type"].dump() + ")";
}

// Sequences nest a few levels in real files; a file nesting thousands would exhaust the stack.
constexpr int kMaxSequenceDepth = 32;

void requireDepth(int depth, const std::string& source, const char* what) {
  if (depth > kMaxSequenceDepth)
    throw FileError(source, std::string(what) + " Sequences nest more than " +
                                std::to_string(kMaxSequenceDepth) + " deep");
}

// An optional string field that must be null or empty for us: a non-empty value changes the encoding.
bool nullOrEmpty(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return true;
  return j[key].is_string() && j[key].get_ref<const std::string&>().empty();
}

// A token named in tokenizer_config.json: a string, or an object with "content" (AddedToken).
std::string specialTokenText(const nlohmann::json& config, const char* key) {
  if (!config.is_object() || !config.contains(key)) return "";
  const nlohmann::json& t = config[key];
  if (t.is_string()) return t.get<std::string>();
  if (t.is_object() && t.contains("content") && t["content"].is_string())
    return t["content"].get<std::string>();
  return "";
}

nlohmann::json readJsonIfPresent(const std::string& path) {
  if (!std::filesystem::exists(path)) return nullptr;
  return readJsonFile(path);
}

// Every token's string by id: model.vocab's, with the added tokens that follow it (Qwen2's special tokens)
// as their own text (`literal`). Every id up to the last must have a token. An added token's id must be
// the one Hugging Face gives it: tokenizers does not read the file's ids but takes model.vocab's for a
// text it holds and numbers the others on from the vocabulary's size, in the file's order
// (AddedVocabulary::add_tokens): a file whose ids say otherwise would be read as other ids there.
std::vector<std::string> vocabulary(const nlohmann::json& vocab, const nlohmann::json& added,
                                    const std::string& source, std::vector<bool>& literal) {
  if (!vocab.is_object() || vocab.empty())
    throw FileError(source, "model.vocab must be a non-empty JSON object mapping token strings to ids");
  std::vector<std::string> strings;
  std::vector<bool> present;
  // Ids are dense (checked below), so none reaches the number of entries: a larger one is a broken file,
  // not a reason to allocate gigabytes.
  const int64_t entries = static_cast<int64_t>(vocab.size() + (added.is_array() ? added.size() : 0));
  auto place = [&](int64_t id, const std::string& text, bool isLiteral) {
    if (id < 0 || id >= entries)
      throw FileError(source, "token \"" + text + "\" has id " + std::to_string(id) + ", but the file has " +
                                  std::to_string(entries) + " tokens (ids 0…" + std::to_string(entries - 1) +
                                  ")");
    if (id >= static_cast<int64_t>(strings.size())) {
      strings.resize(id + 1);
      present.resize(id + 1, false);
      literal.resize(id + 1, false);
    }
    if (present[id]) throw FileError(source, "model.vocab: id " + std::to_string(id) + " is used twice");
    strings[id] = text;
    present[id] = true;
    literal[id] = isLiteral;
  };
  for (auto& [token, value] : vocab.items()) {
    if (!value.is_number_integer())
      throw FileError(source, "model.vocab: the id of token \"" + token + "\" is not an integer");
    place(value.get<int64_t>(), token, false);
  }
  int64_t nextAddedId = static_cast<int64_t>(vocab.size());
  if (added.is_array())
    for (const nlohmann::json& t : added) {
      if (!t.is_object() || !t.contains("id") || !t["id"].is_number_integer() || !t.contains("content") ||
          !t["content"].is_string())
        throw FileError(source, "added_tokens: malformed entry " + t.dump() +
                                    " (each needs an integer \"id\" and a string \"content\")");
      const int64_t id = t["id"].get<int64_t>();
      const std::string& content = t["content"].get_ref<const std::string&>();
      const auto inVocab = vocab.find(content);
      const int64_t theirs = inVocab != vocab.end() && inVocab->is_number_integer() ? inVocab->get<int64_t>()
                             : content.empty()                                      ? id
                                                                                    : nextAddedId++;
      if (id != theirs)
        throw FileError(source,
                        "added token \"" + content + "\" has id " + std::to_string(id) +
                            ", but Hugging Face's tokenizers gives it id " + std::to_string(theirs) +
                            (inVocab != vocab.end() ? " (model.vocab's id for its text)"
                                                    : " (added tokens not in model.vocab are numbered "
                                                      "on from its size, in the file's order)"));
      if (id >= static_cast<int64_t>(present.size()) || (id >= 0 && !present[id]))
        place(id, t["content"].get<std::string>(), true);
    }
  for (std::size_t id = 0; id < present.size(); ++id)
    if (!present[id])
      throw FileError(source, "id " + std::to_string(id) + " is neither in model.vocab nor an added token");
  return strings;
}

// ICU's normalizer for "NFC", "NFD", "NFKC" or "NFKD"; null for any other name.
const icu::Normalizer2* icuNormalizer(const std::string& form) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = form == "NFC"    ? icu::Normalizer2::getNFCInstance(status)
                              : form == "NFD"  ? icu::Normalizer2::getNFDInstance(status)
                              : form == "NFKC" ? icu::Normalizer2::getNFKCInstance(status)
                              : form == "NFKD" ? icu::Normalizer2::getNFKDInstance(status)
                                               : nullptr;
  if (U_FAILURE(status))
    throw std::runtime_error(std::string("ICU has no Unicode normalization data: ") + u_errorName(status));
  return n;
}

}  // namespace

std::unique_ptr<HfTokenizer> HfTokenizer::load(const std::string& folder) {
  const std::string path = folder + "/" + TokenizerFiles::kHuggingFace;
  if (!std::filesystem::exists(path)) throw FileError(path, "not found");
  // tokenizer_config.json says which tokens end and begin a sequence; special_tokens_map.json is older.
  nlohmann::json special = readJsonIfPresent(folder + "/tokenizer_config.json");
  const nlohmann::json map = readJsonIfPresent(folder + "/special_tokens_map.json");
  if (!special.is_object()) special = nlohmann::json::object();
  for (const char* key : {"eos_token", "bos_token"})
    if (specialTokenText(special, key).empty() && !specialTokenText(map, key).empty())
      special[key] = map[key];
  return fromJson(readTextFile(path), path, special);
}

std::unique_ptr<HfTokenizer> HfTokenizer::fromJson(const std::string& tokenizerJson,
                                                   const std::string& source,
                                                   const nlohmann::json& specialTokens) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(tokenizerJson);
  } catch (const nlohmann::json::exception& e) {
    throw FileError(source, std::string("is not valid JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object())
    throw FileError(source, "has no \"model\" object (not a Hugging Face tokenizer.json)");
  try {
    const nlohmann::json& model = j["model"];
    const std::string type = typeOf(model);
    if (type != "BPE" && !(type.empty() && model.contains("merges")))
      throw UnsupportedTokenizer(source, "model type \"" + type + "\" is not supported (only BPE)");
    if (model.value("byte_fallback", false))
      throw UnsupportedTokenizer(source,
                                 "model.byte_fallback is true (SentencePiece-style BPE); only byte-level BPE "
                                 "is supported",
                                 /*fromSentencePiece=*/true);
    if (model.contains("dropout") && !model["dropout"].is_null() && model["dropout"].get<double>() != 0.0)
      throw UnsupportedTokenizer(source, "model.dropout is set (BPE dropout encodes at random)");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
      if (!nullOrEmpty(model, key))
        throw UnsupportedTokenizer(source, std::string("model.") + key + " is set; byte-level BPE has none");
    if (!model.contains("vocab") || !model.contains("merges") || !model["merges"].is_array())
      throw FileError(source, "model needs \"vocab\" (an object) and \"merges\" (an array)");

    std::vector<bool> literal;
    const std::vector<std::string> strings =
        vocabulary(model["vocab"], j.value("added_tokens", nlohmann::json()), source, literal);
    std::vector<BpeTokenizer::MergeStrings> merges;
    merges.reserve(model["merges"].size());
    for (std::size_t rank = 0; rank < model["merges"].size(); ++rank) {
      const nlohmann::json& m = model["merges"][rank];
      const std::string where = "model.merges[" + std::to_string(rank) + "]";
      // Two encodings: "left right" (tokenizers before 0.20) and ["left", "right"].
      if (m.is_string()) {
        const std::string& line = m.get_ref<const std::string&>();
        const std::size_t space = line.find(' ');
        if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
          throw FileError(source, where + " (\"" + line + "\"): expected two tokens separated by one space");
        merges.push_back({line.substr(0, space), line.substr(space + 1), where});
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        merges.push_back({m[0].get<std::string>(), m[1].get<std::string>(), where});
      } else {
        throw FileError(source, where + " is neither \"left right\" nor [\"left\", \"right\"]");
      }
    }
    auto tokenizer = std::unique_ptr<HfTokenizer>(new HfTokenizer(
        BpeTokenizer::fromStrings(strings, merges, source, source, /*rawFallback=*/true, literal)));
    HfTokenizer& t = *tokenizer;
    t.m_source = source;
    t.m_ignoreMerges = model.value("ignore_merges", false);
    t.m_vocabSize = static_cast<int32_t>(strings.size());

    auto part = [&](const char* key) -> const nlohmann::json& {
      static const nlohmann::json null;
      return j.contains(key) ? j[key] : null;
    };
    try {
      t.parseNormalizer(part("normalizer"));
      t.parsePreTokenizer(part("pre_tokenizer"));
      t.checkPostProcessor(part("post_processor"));
    } catch (const std::invalid_argument& e) {  // a regex that does not compile
      throw FileError(source, std::string("pre_tokenizer: ") + e.what());
    }
    if (!t.m_byteLevel)
      throw UnsupportedTokenizer(source, "pre_tokenizer \"" + typeOf(part("pre_tokenizer")) +
                                             "\" has no ByteLevel step: only byte-level BPE is supported");
    if (typeOf(part("decoder")) != "ByteLevel")
      throw UnsupportedTokenizer(source, "decoder \"" + typeOf(part("decoder")) +
                                             "\" is not supported (byte-level BPE decodes with ByteLevel)");
    t.parseAddedTokens(part("added_tokens"));
    // GPT-2's own pre-tokenization and no added token a safe cut could split: GPT-2's safe cuts hold.
    t.m_gpt2Pretokenization = t.m_steps.size() == 1 && t.m_steps[0].regex &&
                              t.m_steps[0].regex->pattern() == kByteLevelPattern &&
                              std::none_of(t.m_addedContent.begin(), t.m_addedContent.end(),
                                           [](const auto& a) { return lastSafeCutMaySplit(a.second); });

    auto idOfText = [&](const std::string& text) {
      if (text.empty()) return -1;
      auto added = t.m_addedIdOfContent.find(text);
      if (added != t.m_addedIdOfContent.end()) return added->second;
      return t.idOf(text);
    };
    t.m_eotId = idOfText(kEndOfText);
    if (t.m_eotId < 0) t.m_eotId = idOfText(specialTokenText(specialTokens, "eos_token"));
    t.m_bosId = idOfText(specialTokenText(specialTokens, "bos_token"));
    return tokenizer;
  } catch (const nlohmann::json::exception& e) {
    throw FileError(source, std::string("malformed tokenizer.json: ") + e.what());
  }
}

void HfTokenizer::parseNormalizer(const nlohmann::json& j, int depth) {
  requireDepth(depth, m_source, "normalizer");
  if (j.is_null()) return;
  const std::string type = typeOf(j);
  if (type == "Sequence") {
    if (!j.contains("normalizers") || !j["normalizers"].is_array())
      throw FileError(m_source, "normalizer Sequence has no \"normalizers\" array");
    for (const nlohmann::json& n : j["normalizers"]) parseNormalizer(n, depth + 1);
    return;
  }
  if (icuNormalizer(type)) {
    m_normalizer.push_back(type);
    return;
  }
  throw UnsupportedTokenizer(m_source, "normalizer \"" + type +
                                           "\" is not supported (supported: none, NFC, NFD, NFKC, NFKD, and "
                                           "a Sequence of them)");
}

void HfTokenizer::parsePreTokenizer(const nlohmann::json& j, int depth) {
  requireDepth(depth, m_source, "pre_tokenizer");
  const std::string type = typeOf(j);
  if (m_byteLevel)
    throw UnsupportedTokenizer(
        m_source, "pre_tokenizer \"" + type + "\" after ByteLevel: ByteLevel must be the last step");
  if (type == "Sequence") {
    if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array())
      throw FileError(m_source, "pre_tokenizer Sequence has no \"pretokenizers\" array");
    for (const nlohmann::json& p : j["pretokenizers"]) parsePreTokenizer(p, depth + 1);
  } else if (type == "Split") {
    Step step;
    const nlohmann::json& pattern = j.at("pattern");
    if (pattern.contains("Regex")) {
      step.regex = std::make_shared<Regex>(pattern["Regex"].get<std::string>());
    } else if (pattern.contains("String") && !pattern["String"].get_ref<const std::string&>().empty()) {
      step.regex = std::make_shared<Regex>(Regex::escape(pattern["String"].get<std::string>()));
    } else {
      throw FileError(m_source,
                      "pre_tokenizer Split's pattern is neither {\"Regex\": …} nor a non-empty "
                      "{\"String\": …}");
    }
    // Hugging Face cuts at every empty match (onig's FindMatches); the cursor here skips them.
    if (step.regex->mayMatchEmpty())
      throw UnsupportedTokenizer(m_source, "pre_tokenizer Split's pattern \"" + step.regex->pattern() +
                                               "\" can match the empty string: not supported");
    const std::string behavior = j.at("behavior").get<std::string>();
    const std::pair<const char*, SplitBehavior> behaviors[] = {
        {"Removed", SplitBehavior::Removed},
        {"Isolated", SplitBehavior::Isolated},
        {"MergedWithPrevious", SplitBehavior::MergedWithPrevious},
        {"MergedWithNext", SplitBehavior::MergedWithNext},
        {"Contiguous", SplitBehavior::Contiguous}};
    auto found = std::find_if(std::begin(behaviors), std::end(behaviors),
                              [&](const auto& b) { return behavior == b.first; });
    if (found == std::end(behaviors))
      throw FileError(m_source, "pre_tokenizer Split has an unknown behavior \"" + behavior + "\"");
    step.behavior = found->second;
    step.invert = j.value("invert", false);
    m_steps.push_back(std::move(step));
  } else if (type == "Digits") {
    // Hugging Face's Digits cuts at Rust's char::is_numeric, the characters of \p{N}: one by one, or
    // each run as a piece.
    Step step;
    step.regex = std::make_shared<Regex>(j.value("individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)");
    m_steps.push_back(std::move(step));
  } else if (type == "ByteLevel") {
    if (j.value("add_prefix_space", true)) {
      Step step;
      step.prefixSpace = true;
      m_steps.push_back(std::move(step));
    }
    if (j.value("use_regex", true)) {
      Step step;
      step.regex = std::make_shared<Regex>(kByteLevelPattern);
      m_steps.push_back(std::move(step));
    }
    m_byteLevel = true;  // trim_offsets only moves offsets, which we do not report
  } else {
    throw UnsupportedTokenizer(m_source, "pre_tokenizer \"" + type +
                                             "\" is not supported (supported: ByteLevel, and a Sequence of "
                                             "Split and Digits steps ending in ByteLevel)");
  }
}

void HfTokenizer::checkPostProcessor(const nlohmann::json& j, int depth) const {
  requireDepth(depth, m_source, "post_processor");
  if (j.is_null()) return;
  const std::string type = typeOf(j);
  if (type == "ByteLevel") return;  // it only trims offsets
  if (type == "Sequence" && j.contains("processors") && j["processors"].is_array()) {
    for (const nlohmann::json& p : j["processors"]) checkPostProcessor(p, depth + 1);
    return;
  }
  if (type == "TemplateProcessing" && j.contains("single") && j["single"].is_array()) {
    std::string added;
    for (const nlohmann::json& piece : j["single"])
      if (piece.contains("SpecialToken"))
        added += (added.empty() ? "" : ", ") + piece["SpecialToken"].value("id", "");
    if (added.empty()) return;
    throw UnsupportedTokenizer(m_source, "post_processor TemplateProcessing adds " + added +
                                             " to every sequence; encodings here add no tokens");
  }
  throw UnsupportedTokenizer(m_source, "post_processor \"" + type +
                                           "\" is not supported (supported: none, ByteLevel, and "
                                           "TemplateProcessing that adds no tokens)");
}

void HfTokenizer::parseAddedTokens(const nlohmann::json& j) {
  if (j.is_null()) return;
  if (!j.is_array()) throw FileError(m_source, "added_tokens is not an array");
  struct Entry {
    std::string key;
    int32_t id;
    bool special;
  };
  std::vector<Entry> raw, normalized;
  for (const nlohmann::json& t : j) {
    const std::string content = t.at("content").get<std::string>();
    const int64_t id = t.at("id").get<int64_t>();
    if (content.empty() || id < 0 || id > INT32_MAX)
      throw FileError(m_source, "added token \"" + content + "\" has an empty text or a bad id");
    const std::string name = "added token \"" + content + "\" (id " + std::to_string(id) + ")";
    for (const char* flag : {"single_word", "lstrip", "rstrip"})
      if (t.value(flag, false))
        throw UnsupportedTokenizer(m_source, name + " sets " + flag + ": not supported");
    const bool special = t.value("special", false);
    if (!m_addedIdOfContent.emplace(content, static_cast<int32_t>(id)).second ||
        !m_addedContent.emplace(static_cast<int32_t>(id), content).second)
      throw FileError(m_source, name + " repeats the text or id of another added token");
    // "normalized" tokens are looked for in the normalized text, so their own text is normalized too.
    if (t.value("normalized", !special))
      normalized.push_back({normalize(content), static_cast<int32_t>(id), special});
    else
      raw.push_back({content, static_cast<int32_t>(id), special});
  }

  auto build = [](std::vector<Entry> entries, AddedSet& set) {
    // Longest first: PCRE2 takes the first alternative that matches at the leftmost position, which
    // makes this Hugging Face's leftmost-longest match.
    std::stable_sort(entries.begin(), entries.end(),
                     [](const Entry& a, const Entry& b) { return a.key.size() > b.key.size(); });
    std::string all, ordinary;
    for (const Entry& e : entries) {
      set.idOf[e.key] = e.id;
      (all.empty() ? all : all += "|") += Regex::escape(e.key);
      if (!e.special) (ordinary.empty() ? ordinary : ordinary += "|") += Regex::escape(e.key);
    }
    if (!all.empty()) set.all.emplace(all, Regex::Mode::Bytes);
    if (!ordinary.empty()) set.ordinary.emplace(ordinary, Regex::Mode::Bytes);
  };
  build(std::move(raw), m_rawAdded);
  build(std::move(normalized), m_normalizedAdded);
}

std::string HfTokenizer::normalize(std::string_view text) const {
  std::string current(text);
  for (const std::string& form : m_normalizer) {
    const icu::Normalizer2& n = *icuNormalizer(form);
    UErrorCode status = U_ZERO_ERROR;
    const icu::StringPiece piece(current.data(), static_cast<int32_t>(current.size()));
    if (n.isNormalizedUTF8(piece, status) && U_SUCCESS(status)) continue;
    status = U_ZERO_ERROR;
    std::string normalized;
    icu::StringByteSink<std::string> sink(&normalized);
    n.normalizeUTF8(0, piece, sink, nullptr, status);
    if (U_FAILURE(status))
      throw std::runtime_error(m_source + ": Unicode normalization failed: " + u_errorName(status));
    current.swap(normalized);
  }
  return current;
}

template <typename Rest>
void HfTokenizer::splitAdded(std::string_view text, const AddedSet& set, bool allowSpecial,
                             std::vector<int32_t>& out, const Rest& rest) const {
  const std::optional<Regex>& matcher = allowSpecial ? set.all : set.ordinary;
  if (!matcher) {
    rest(text);
    return;
  }
  std::vector<Regex::Match> matches;
  matcher->findAll(text, matches);
  std::size_t pos = 0;
  for (const Regex::Match& m : matches) {
    if (m.begin > pos) rest(text.substr(pos, m.begin - pos));
    out.push_back(set.idOf.at(std::string(text.substr(m.begin, m.end - m.begin))));
    pos = m.end;
  }
  if (pos < text.size()) rest(text.substr(pos));
}

void HfTokenizer::encodeAppend(std::string_view text, std::vector<int32_t>& out, bool allowSpecial) const {
  try {
    encodeText(text, out, allowSpecial);
  } catch (const FileError&) {
    throw;
  } catch (const std::runtime_error& e) {  // the regex engine's limits: say whose pattern met them
    throw FileError(m_source, std::string("cannot encode the text: ") + e.what());
  }
}

void HfTokenizer::encodeText(std::string_view text, std::vector<int32_t>& out, bool allowSpecial) const {
  splitAdded(text, m_rawAdded, allowSpecial, out, [&](std::string_view gap) {
    // Runs of bytes that are not UTF-8 bypass normalizer and pre-tokenizer (see the header).
    const auto* bytes = reinterpret_cast<const unsigned char*>(gap.data());
    std::size_t validStart = 0, i = 0;
    while (i < gap.size()) {
      char32_t c;
      const int length = decodeUtf8(bytes + i, bytes + gap.size(), c);
      if (c != kInvalidByte) {
        i += static_cast<std::size_t>(length);
        continue;
      }
      const std::size_t runStart = i;
      while (i < gap.size() && decodeUtf8(bytes + i, bytes + gap.size(), c) == 1 && c == kInvalidByte) ++i;
      encodeValid(gap.substr(validStart, runStart - validStart), out, allowSpecial);
      m_bpe.encodeWord(gap.substr(runStart, i - runStart), out);
      validStart = i;
    }
    encodeValid(gap.substr(validStart), out, allowSpecial);
  });
}

void HfTokenizer::encodeValid(std::string_view text, std::vector<int32_t>& out, bool allowSpecial) const {
  if (text.empty()) return;
  const std::string normalized = m_normalizer.empty() ? std::string() : normalize(text);
  const std::string_view view = m_normalizer.empty() ? text : std::string_view(normalized);
  splitAdded(view, m_normalizedAdded, allowSpecial, out,
             [&](std::string_view piece) { encodePiece(piece, 0, out); });
}

// Each piece goes through the remaining steps before the next piece is cut, so no step holds more
// than one piece (the text between two added tokens can be a whole file).
void HfTokenizer::encodePiece(std::string_view piece, std::size_t stepIndex,
                              std::vector<int32_t>& out) const {
  if (piece.empty()) return;
  if (stepIndex == m_steps.size()) {
    // ignore_merges looks the piece up in model.vocab only: an added token's text is no vocabulary word.
    const int32_t whole = m_ignoreMerges ? m_bpe.idOf(piece) : -1;
    if (whole >= 0 && m_addedContent.count(whole) == 0)
      out.push_back(whole);
    else
      m_bpe.encodeWord(piece, out);
    return;
  }
  const Step& step = m_steps[stepIndex];
  if (step.prefixSpace) {
    if (piece[0] == ' ')
      encodePiece(piece, stepIndex + 1, out);
    else
      encodePiece(" " + std::string(piece), stepIndex + 1, out);
    return;
  }
  // Hugging Face's NormalizedString::split: the matches and the gaps between them cover the piece, and
  // the behavior decides which are kept and which join their neighbour. `pending` is the last kept
  // segment, held back while the next segment may still join it.
  struct Segment {
    std::size_t begin, end;
    bool match;
  };
  std::optional<Segment> pending;
  bool previousMatch = false;
  auto emit = [&](const Segment& s) {
    encodePiece(piece.substr(s.begin, s.end - s.begin), stepIndex + 1, out);
  };
  auto flush = [&] {
    if (pending) emit(*pending);
    pending.reset();
  };
  auto add = [&](const Segment& s) {
    switch (step.behavior) {
      case SplitBehavior::Isolated:
        emit(s);
        break;
      case SplitBehavior::Removed:
        if (!s.match) emit(s);
        break;
      case SplitBehavior::Contiguous:  // runs of delimiters, and of the rest, are one segment each
        if (pending && pending->match == s.match) {
          pending->end = s.end;
        } else {
          flush();
          pending = s;
        }
        break;
      case SplitBehavior::MergedWithPrevious:  // a delimiter joins the segment before it
        if (pending && s.match && !previousMatch) {
          pending->end = s.end;
        } else {
          flush();
          pending = s;
        }
        break;
      case SplitBehavior::MergedWithNext:  // a delimiter joins the segment after it
        if (s.match) {
          flush();
          pending = s;
        } else if (pending) {
          pending->end = s.end;
          flush();
        } else {
          emit(s);
        }
        break;
    }
    previousMatch = s.match;
  };
  Regex::Cursor cursor(*step.regex, piece);
  std::size_t pos = 0;
  for (Regex::Match m; cursor.next(m); pos = m.end) {
    if (m.begin > pos) add({pos, m.begin, step.invert});
    add({m.begin, m.end, !step.invert});
  }
  if (pos < piece.size()) add({pos, piece.size(), step.invert});
  flush();
}

std::string HfTokenizer::tokenBytes(int32_t id) const {
  if (id < 0 || id >= m_vocabSize)
    throw std::out_of_range("token id " + std::to_string(id) + " is out of range for a vocabulary of " +
                            std::to_string(m_vocabSize));
  auto added = m_addedContent.find(id);
  return added != m_addedContent.end() ? added->second : m_bpe.tokenBytes(id);
}

std::string HfTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string text;
  for (int32_t id : ids) text += tokenBytes(id);
  return text;
}

int32_t HfTokenizer::idOf(std::string_view bytes) const {
  auto added = m_addedIdOfContent.find(std::string(bytes));
  return added != m_addedIdOfContent.end() ? added->second : m_bpe.idOf(bytes);
}

std::size_t HfTokenizer::streamCut(std::string_view text) const {
  return m_gpt2Pretokenization ? lastSafeCut(text) : 0;
}

}  // namespace nf

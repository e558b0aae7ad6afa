#include "data/tokenize.h"

#include <filesystem>
#include <sstream>

#include "data/token_file.h"
#include "text/text_source.h"
#include "util/random.h"

namespace nf {

std::string RandomRepeats::describe() const {
  std::ostringstream text;
  text << "random repeated spans: after a document with chance " << chance << ", " << minSpan << "-"
       << maxSpan << " uniformly random tokens twice (seed " << seed << ")";
  return text.str();
}

TokenizeStats tokenizeFiles(const std::vector<std::string>& inputs, const Tokenizer& tokenizer,
                            const std::string& tokenizerFolder, const std::string& outPath,
                            const ProgressFn& progress, const RandomRepeats& repeats) {
  if (!(repeats.chance >= 0 && repeats.chance <= 1) || repeats.minSpan < 1 ||
      repeats.maxSpan < repeats.minSpan)
    throw std::invalid_argument("random repeats need a chance in [0, 1] and 1 <= min span <= max span");
  if (tokenizer.eotId() < 0)
    throw std::invalid_argument(tokenizer.source() + " has no end-of-text token to separate documents with");
  TokenFileMeta meta;
  meta.dtype = tokenDTypeFor(tokenizer.vocabSize());
  meta.vocabSize = tokenizer.vocabSize();
  meta.eotTokenId = tokenizer.eotId();
  meta.tokenizer = tokenizerFolder;
  meta.tokenizerFingerprint = tokenizerFingerprint(tokenizer);
  meta.sources = inputs;
  if (repeats.chance > 0) meta.sources.push_back(repeats.describe());
  TokenizeStats stats;
  for (const auto& input : inputs) stats.bytes += static_cast<int64_t>(std::filesystem::file_size(input));

  const int32_t eot = tokenizer.eotId();
  // Where Hugging Face's tokenizer starts every encoding with a begin-of-sequence token of its own (LLaMA's
  // <s>, unless tokenizer_config.json says add_bos_token: false), each document starts with it, as its
  // models saw documents in pretraining; GPT-2-style files only separate them with end-of-text.
  const int32_t bos = tokenizer.huggingFaceAddsBos() && tokenizer.bosId() != eot ? tokenizer.bosId() : -1;
  meta.bosTokenId = bos;  // the analyses' and document windows' sequences start there
  TokenFileWriter writer(outPath, meta);
  std::vector<int32_t> ids;
  std::string pending;  // the document's text not encoded yet
  bool documentStarted = false;
  // Random spans draw from every id but the special tokens: the documents' separators, and tokens that
  // ordinary text never gives (<|im_start|>, <|padding|>, <unk>).
  std::vector<int32_t> pool;
  if (repeats.chance > 0) {
    const std::vector<bool> special = specialTokenIds(tokenizer);
    for (int32_t id = 0; id < tokenizer.vocabSize(); ++id)
      if (!special[id] && id != eot && id != bos) pool.push_back(id);
  }
  Random random(repeats.seed);
  std::vector<int32_t> span;
  auto maybeRepeatDocument = [&] {
    if (repeats.chance == 0 || !random.chance(repeats.chance)) return;
    span.resize(repeats.minSpan + random.below(repeats.maxSpan - repeats.minSpan + 1));
    for (int32_t& id : span) id = random.pick(pool);
    if (bos >= 0) writer.append(&bos, 1);
    writer.append(span.data(), span.size());
    writer.append(span.data(), span.size());
    writer.append(&eot, 1);
    ++stats.repeatDocuments;
  };
  auto encode = [&](std::string_view text) {
    ids.clear();
    tokenizer.encodeAppend(text, ids, /*allowSpecial=*/false);
    writer.append(ids.data(), ids.size());
  };
  int64_t bytesBefore = 0;
  for (const auto& input : inputs) {
    const int64_t inputBytes = static_cast<int64_t>(std::filesystem::file_size(input));
    // Parts arrive cut where GPT-2's pre-tokenization allows; other tokenizers decide for themselves.
    DocumentSink sink{[&](std::string_view text) {
                        if (!documentStarted && bos >= 0) writer.append(&bos, 1);
                        documentStarted = true;
                        pending += text;
                        const std::size_t cut = tokenizer.streamCut(pending);
                        if (cut == 0) return;
                        encode(std::string_view(pending).substr(0, cut));
                        pending.erase(0, cut);
                      },
                      [&] {
                        if (!documentStarted && bos >= 0) writer.append(&bos, 1);
                        documentStarted = false;
                        encode(pending);
                        pending.clear();
                        writer.append(&eot, 1);
                        maybeRepeatDocument();
                      }};
    // One bar over all inputs, in bytes.
    ProgressFn overall;
    if (progress)
      overall = [&](const Progress& p) {
        progress({"tokenize", bytesBefore + p.done, stats.bytes, "B",
                  p.finished && bytesBefore + inputBytes == stats.bytes});
      };
    stats.documents += streamDocuments(input, sink, overall);
    bytesBefore += inputBytes;
  }
  stats.tokens = writer.tokensWritten();
  if (stats.tokens == 0)
    throw FileError(inputs.empty() ? outPath : inputs.front(), "contains no text to tokenize");
  stats.documents += stats.repeatDocuments;
  writer.setDocuments(stats.documents);
  writer.finish();
  return stats;
}

}  // namespace nf

#include "text/text_source.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "text/pretokenizer.h"
#include "text/tokenizer.h"

namespace nf {
namespace {

constexpr std::size_t kBlockBytes = 1 << 20;

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void report(const ProgressFn& progress, const std::string& path, int64_t done, int64_t total, bool finished) {
  if (progress)
    progress({"read " + std::filesystem::path(path).filename().string(), done, total, "B", finished});
}

int64_t streamPlainText(std::ifstream& in, const std::string& path, int64_t totalBytes,
                        const DocumentSink& sink, const ProgressFn& progress) {
  const std::string_view marker = kEndOfText;
  std::string buffer, block(kBlockBytes, '\0');
  int64_t documents = 0, bytesRead = 0;
  bool documentOpen = false;
  auto emit = [&](std::string_view text) {
    if (text.empty()) return;
    sink.text(text);
    documentOpen = true;
  };
  auto endDocument = [&] {
    if (!documentOpen) return;
    sink.documentEnd();
    documentOpen = false;
    ++documents;
  };
  for (bool eof = false; !eof;) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (in.bad()) throw FileError(path, "read failed");
    eof = got < block.size();
    buffer.append(block.data(), got);
    bytesRead += static_cast<int64_t>(got);

    std::size_t start = 0;
    for (std::size_t hit; (hit = buffer.find(marker, start)) != std::string::npos;) {
      emit(std::string_view(buffer).substr(start, hit - start));
      endDocument();
      start = hit + marker.size();
    }
    std::string_view rest = std::string_view(buffer).substr(start);
    // Keep back the tail after the last safe cut: it may continue in the next block (even a partial
    // marker, which contains no newline).
    const std::size_t cut = eof ? rest.size() : lastSafeCut(rest);
    emit(rest.substr(0, cut));
    buffer.erase(0, start + cut);
    report(progress, path, bytesRead, totalBytes, false);
  }
  endDocument();
  return documents;
}

int64_t streamJsonLines(std::ifstream& in, const std::string& path, int64_t totalBytes,
                        const DocumentSink& sink, const ProgressFn& progress) {
  std::string line;
  int64_t documents = 0, bytesRead = 0, lineNumber = 0, lastReport = 0;
  while (std::getline(in, line)) {
    ++lineNumber;
    bytesRead += static_cast<int64_t>(line.size()) + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json record;
    try {
      record = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw FileError(path, "line " + std::to_string(lineNumber) + " is not valid JSON: " + e.what());
    }
    if (!record.is_object() || !record.contains("text") || !record["text"].is_string())
      throw FileError(path, "line " + std::to_string(lineNumber) + " has no string field \"text\"");
    const auto& text = record["text"].get_ref<const std::string&>();
    if (text.empty()) continue;
    sink.text(text);
    sink.documentEnd();
    ++documents;
    if (bytesRead - lastReport >= static_cast<int64_t>(kBlockBytes)) {
      report(progress, path, bytesRead, totalBytes, false);
      lastReport = bytesRead;
    }
  }
  if (in.bad()) throw FileError(path, "read failed");
  return documents;
}

// Text is read as UTF-8 bytes. A UTF-8 byte-order mark (Windows editors write one) is no part of the text;
// UTF-16 (Notepad's "Unicode") would be tokenized as junk with NUL bytes, one document, exit status 0.
void requireUtf8AndSkipByteOrderMark(std::ifstream& in, const std::string& path) {
  std::string start(4096, '\0');
  in.read(start.data(), static_cast<std::streamsize>(start.size()));
  start.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) throw FileError(path, "read failed");
  in.clear();
  const bool utf16 = start.rfind("\xff\xfe", 0) == 0 || start.rfind("\xfe\xff", 0) == 0;
  if (utf16 || start.find('\0') != std::string::npos)
    throw FileError(path,
                    std::string(utf16 ? "is UTF-16 text (its byte-order mark says)" : "holds NUL bytes") +
                        ", not UTF-8: save it as UTF-8 (iconv -f UTF-16 -t UTF-8 …)");
  in.seekg(start.rfind("\xef\xbb\xbf", 0) == 0 ? 3 : 0);
}

}  // namespace

int64_t streamDocuments(const std::string& path, const DocumentSink& sink, const ProgressFn& progress) {
  const bool jsonLines = endsWith(path, ".jsonl");
  if (!jsonLines && !endsWith(path, ".txt"))
    throw FileError(path, "unsupported text format (expected .txt or .jsonl)");
  requireRegularFile(path);  // a FIFO would block, a device never end
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path, "cannot open for reading");
  std::error_code ec;
  const auto totalBytes = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  requireUtf8AndSkipByteOrderMark(in, path);
  const int64_t documents = jsonLines ? streamJsonLines(in, path, totalBytes, sink, progress)
                                      : streamPlainText(in, path, totalBytes, sink, progress);
  report(progress, path, totalBytes, totalBytes, true);
  return documents;
}

}  // namespace nf

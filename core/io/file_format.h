// Every JSON file format of ours names itself and its version — {"format": "normfree-schedule", "version": 1,
// …} — and every reader checks both before reading anything else, so a file from a newer build is refused
// with a clear message instead of being half understood (llm.c's magic number + version, for JSON).
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace nf {

struct FileFormat {
  const char* name;  // "normfree-schedule"
  int version;       // the version this build writes; it reads this one and every older one
};

// Ours, in one list, so that a version bump is made in one place (docs/FORMATS.md says what changed).
inline constexpr FileFormat kRunConfigFormat{"normfree-run", 1};      // a run's config.json
inline constexpr FileFormat kScheduleFormat{"normfree-schedule", 1};  // schedule.json, schedule files
inline constexpr FileFormat kCheckpointStateFormat{"normfree-checkpoint", 1};  // a checkpoint's state.json
inline constexpr FileFormat kMetricsFormat{"normfree-metrics", 2};             // metrics.jsonl's start record
inline constexpr FileFormat kModelBlockFormat{"normfree-model", 1};      // config.json's "normfree" block
inline constexpr FileFormat kTokenSidecarFormat{"nanogpt-tokens", 1};    // a token file's .bin.json
inline constexpr FileFormat kIoiFormat{"normfree-ioi", 1};               // IOI prompt sets
inline constexpr FileFormat kServeFormat{"normfree-serve", 1};           // a served run's serve.json
inline constexpr FileFormat kSourceFormat{"normfree-source", 1};         // a run's source/source.json
inline constexpr FileFormat kBenchmarkFormat{"normfree-benchmarks", 1};  // normfree-cli bench's results
inline constexpr FileFormat kCorpusFormat{"normfree-corpus", 1};         // a corpus folder's corpus.json
inline constexpr FileFormat kAnalysisFormat{"normfree-analysis", 1};     // an analysis result's "header"
// A checkpoint's optimizer.pt: LibTorch's archive, its format and version under the keys below.
inline constexpr FileFormat kOptimizerStateFormat{"normfree-optimizer", 1};

enum class WhenUnmarked {
  Refuse,      // a file without "format" is not one of ours
  IsVersion1,  // written before the format was versioned, or by hand: read as version 1
};

// Checks j["format"] and j["version"] against `format`; returns the file's version. Throws FileError(source,
// …) for another format, a version that is not a positive integer, or one newer than this build reads (the
// message names the version found and the newest supported).
int checkFileFormat(const nlohmann::json& j, const FileFormat& format, const std::string& source,
                    WhenUnmarked unmarked = WhenUnmarked::Refuse);

// {"format": name, "version": version}, to start a file's JSON object with.
nlohmann::json formatHeader(const FileFormat& format);

// A whole JSON file, parsed: FileError naming it when it cannot be read or is not valid JSON. For files of
// other tools' formats (Hugging Face's): a key given twice in one object keeps its last value, as Python's
// json does.
nlohmann::json readJsonFile(const std::string& path);
// JSON text whose keys are unique in every object: nlohmann::json (like Python's json) keeps the last of a
// duplicate unsaid, so a hand-edited {"layer": 0, …, "layer": 1} would mean whichever came last. Throws
// std::invalid_argument naming the key, or nlohmann's parse_error.
nlohmann::json parseJsonUniqueKeys(const std::string& text);
// A file of a format we define (a schedule, a run's config.json or state.json, a token file's sidecar):
// readJsonFile, and a key twice in one object refused, naming the file and the key.
nlohmann::json readFormatFile(const std::string& path);

}  // namespace nf

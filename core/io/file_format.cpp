#include "io/file_format.h"

#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <vector>

#include "io/atomic_file.h"

namespace nf {

int checkFileFormat(const nlohmann::json& j, const FileFormat& format, const std::string& source,
                    WhenUnmarked unmarked) {
  if (!j.is_object())
    throw FileError(source, std::string("is not a ") + format.name + " file (not a JSON object)");
  if (!j.contains("format")) {
    if (unmarked == WhenUnmarked::IsVersion1) return 1;
    throw FileError(source, std::string("is not a ") + format.name + " file (it has no \"format\" field)");
  }
  const nlohmann::json& name = j["format"];
  if (!name.is_string() || name.get<std::string>() != format.name)
    throw FileError(source, std::string("is a ") +
                                (name.is_string() ? name.get<std::string>() : name.dump()) + " file, not " +
                                format.name);
  if (!j.contains("version")) {
    if (unmarked == WhenUnmarked::IsVersion1) return 1;
    throw FileError(source, std::string("has no \"version\" field (") + format.name + ")");
  }
  const nlohmann::json& version = j["version"];
  if (!version.is_number_integer() || version.get<int64_t>() < 1)
    throw FileError(source, std::string("has an invalid ") + format.name + " version " + version.dump() +
                                " (expected a whole number ≥ 1)");
  if (version.get<int64_t>() > format.version)
    throw FileError(source, std::string("is ") + format.name + " version " + version.dump() +
                                ", but this build reads versions up to " + std::to_string(format.version) +
                                " (was it written by a newer NormFree Workbench?)");
  return version.get<int>();
}

nlohmann::json formatHeader(const FileFormat& format) {
  return {{"format", format.name}, {"version", format.version}};
}

nlohmann::json readJsonFile(const std::string& path) {
  const std::string text = readTextFile(path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw FileError(path, std::string("is not valid JSON: ") + e.what());
  }
}

nlohmann::json parseJsonUniqueKeys(const std::string& text) {
  std::vector<std::set<std::string>> keysOfOpenObjects;
  std::string duplicate;
  const nlohmann::json::parser_callback_t noDuplicateKeys = [&](int, nlohmann::json::parse_event_t event,
                                                                nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) keysOfOpenObjects.emplace_back();
    if (event == Event::object_end && !keysOfOpenObjects.empty()) keysOfOpenObjects.pop_back();
    if (event == Event::key && !keysOfOpenObjects.empty() &&
        !keysOfOpenObjects.back().insert(parsed.get<std::string>()).second && duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  nlohmann::json j = nlohmann::json::parse(text, noDuplicateKeys);
  if (!duplicate.empty())
    throw std::invalid_argument("the key \"" + duplicate + "\" appears twice in one object");
  return j;
}

nlohmann::json readFormatFile(const std::string& path) {
  const std::string text = readTextFile(path);
  try {
    return parseJsonUniqueKeys(text);
  } catch (const nlohmann::json::exception& e) {
    throw FileError(path, std::string("is not valid JSON: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw FileError(path, e.what());
  }
}

}  // namespace nf

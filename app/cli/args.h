// A small command-line parser: positional arguments, --key value and --flag options, generated help.
#pragma once
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nf::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The whole of text as a number, or nothing if any character is left over.
template <typename T>
std::optional<T> parseNumber(const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

class Args {
 public:
  Args(std::string command, std::string summary);
  Args& positional(const std::string& name, const std::string& help);
  Args& option(const std::string& name, const std::string& valueName, const std::string& help,
               std::optional<std::string> defaultValue = std::nullopt);
  Args& flag(const std::string& name, const std::string& help);
  // One or more values after the other positionals (e.g. input files).
  Args& positionalList(const std::string& name, const std::string& help);

  // Returns false when --help was asked for (help is then printed to stdout). Throws UsageError.
  bool parse(const std::vector<std::string>& argv);
  std::string help() const;

  const std::string& get(const std::string& name) const;  // positional or option (default applied)
  bool has(const std::string& name) const;                // option given (or defaulted) / flag set
  int getInt(const std::string& name) const;
  int64_t getInt64(const std::string& name) const;
  double getDouble(const std::string& name) const;
  const std::vector<std::string>& getList() const { return m_listValues; }

 private:
  struct Option {
    std::string name, valueName, help;
    std::optional<std::string> defaultValue;
    bool isFlag = false;
  };
  std::string m_command, m_summary;
  std::vector<std::pair<std::string, std::string>> m_positionals;
  std::optional<std::pair<std::string, std::string>> m_list;
  std::vector<std::string> m_listValues;
  std::vector<Option> m_options;
  std::map<std::string, std::string> m_values;
};

}  // namespace nf::cli

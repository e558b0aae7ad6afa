#include "args.h"

#include <iostream>
#include <sstream>

namespace nf::cli {

Args::Args(std::string command, std::string summary)
    : m_command(std::move(command)), m_summary(std::move(summary)) {}

Args& Args::positional(const std::string& name, const std::string& help) {
  m_positionals.emplace_back(name, help);
  return *this;
}

Args& Args::positionalList(const std::string& name, const std::string& help) {
  m_list = {name, help};
  return *this;
}

Args& Args::option(const std::string& name, const std::string& valueName, const std::string& help,
                   std::optional<std::string> defaultValue) {
  m_options.push_back({name, valueName, help, std::move(defaultValue), false});
  return *this;
}

Args& Args::flag(const std::string& name, const std::string& help) {
  m_options.push_back({name, "", help, std::nullopt, true});
  return *this;
}

bool Args::parse(const std::vector<std::string>& argv) {
  std::size_t next = 0;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << help();
      return false;
    }
    if (a.rfind("--", 0) == 0) {
      std::string name = a.substr(2), value;
      const auto eq = name.find('=');
      if (eq != std::string::npos) value = name.substr(eq + 1), name = name.substr(0, eq);
      const Option* opt = nullptr;
      for (auto& o : m_options)
        if (o.name == name) opt = &o;
      if (!opt) throw UsageError("unknown option --" + name + " for '" + m_command + "' (see --help)");
      if (opt->isFlag) {
        if (eq != std::string::npos) throw UsageError("--" + name + " takes no value");
        m_values[name] = "1";
        continue;
      }
      if (eq == std::string::npos) {
        if (i + 1 >= argv.size()) throw UsageError("--" + name + " needs a value <" + opt->valueName + ">");
        value = argv[++i];
      }
      m_values[name] = value;
    } else {
      if (next < m_positionals.size())
        m_values[m_positionals[next++].first] = a;
      else if (m_list)
        m_listValues.push_back(a);
      else
        throw UsageError("unexpected argument '" + a + "' (see --help)");
    }
  }
  if (next < m_positionals.size())
    throw UsageError("missing <" + m_positionals[next].first + "> (see --help)");
  if (m_list && m_listValues.empty()) throw UsageError("missing <" + m_list->first + "> (see --help)");
  for (auto& o : m_options)
    if (!m_values.count(o.name) && o.defaultValue) m_values[o.name] = *o.defaultValue;
  return true;
}

std::string Args::help() const {
  std::ostringstream out;
  out << "usage: normfree-cli " << m_command;
  for (auto& [name, h] : m_positionals) out << " <" << name << ">";
  if (m_list) out << " <" << m_list->first << ">...";
  if (!m_options.empty()) out << " [options]";
  out << "\n\n" << m_summary << "\n";
  if (!m_positionals.empty() || m_list) out << "\narguments:\n";
  for (auto& [name, h] : m_positionals) out << "  " << name << "\n      " << h << "\n";
  if (m_list) out << "  " << m_list->first << "...\n      " << m_list->second << "\n";
  out << "\noptions:\n";
  for (auto& o : m_options) {
    out << "  --" << o.name << (o.isFlag ? "" : " <" + o.valueName + ">") << "\n      " << o.help;
    if (o.defaultValue) out << " (default: " << *o.defaultValue << ")";
    out << "\n";
  }
  out << "  --help\n      show this help\n";
  return out.str();
}

const std::string& Args::get(const std::string& name) const {
  auto it = m_values.find(name);
  if (it == m_values.end()) throw UsageError("missing --" + name + " (see --help)");
  return it->second;
}

bool Args::has(const std::string& name) const { return m_values.count(name) > 0; }

int Args::getInt(const std::string& name) const {
  auto value = parseNumber<int>(get(name));
  if (!value) throw UsageError("--" + name + " expects an integer, got '" + get(name) + "'");
  return *value;
}

int64_t Args::getInt64(const std::string& name) const {
  auto value = parseNumber<int64_t>(get(name));
  if (!value) throw UsageError("--" + name + " expects an integer, got '" + get(name) + "'");
  return *value;
}

double Args::getDouble(const std::string& name) const {
  auto value = parseNumber<double>(get(name));
  if (!value) throw UsageError("--" + name + " expects a number, got '" + get(name) + "'");
  return *value;
}

}  // namespace nf::cli

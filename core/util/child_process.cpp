#include "util/child_process.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstring>

extern char** environ;

namespace nf {

std::vector<std::string> environmentWith(const std::vector<std::string>& replacements) {
  auto replaced = [&](const char* entry) {
    return std::any_of(replacements.begin(), replacements.end(), [&](const std::string& r) {
      const std::size_t nameAndEquals = r.find('=') + 1;
      return std::strncmp(entry, r.c_str(), nameAndEquals) == 0;
    });
  };
  std::vector<std::string> variables;
  for (char** e = environ; *e; ++e)
    if (!replaced(*e)) variables.emplace_back(*e);
  variables.insert(variables.end(), replacements.begin(), replacements.end());
  return variables;
}

std::vector<char*> pointers(std::vector<std::string>& texts) {
  std::vector<char*> p;
  for (auto& t : texts) p.push_back(t.data());
  p.push_back(nullptr);
  return p;
}

std::string howItEnded(int waitStatus) {
  if (WIFEXITED(waitStatus)) return "exited with status " + std::to_string(WEXITSTATUS(waitStatus));
  if (WIFSIGNALED(waitStatus))
    return "was killed by signal " + std::to_string(WTERMSIG(waitStatus)) + " (" +
           strsignal(WTERMSIG(waitStatus)) + ")";
  return "ended with wait status " + std::to_string(waitStatus);
}

}  // namespace nf

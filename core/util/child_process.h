// Starting child processes with posix_spawn: their environment, their argument vectors, how they ended.
// Plain C++ (no torch): the local launcher's workers and the benchmark's eager references use it.
#pragma once
#include <string>
#include <vector>

namespace nf {

// This process's environment with each variable named in `replacements` ("NAME=value" entries) dropped
// and the replacements appended: what a child should see when only those variables differ.
std::vector<std::string> environmentWith(const std::vector<std::string>& replacements);

// argv/envp for posix_spawn: pointers into `texts`, which must outlive them, and a final null.
std::vector<char*> pointers(std::vector<std::string>& texts);

// A wait status in words: "exited with status 1", "was killed by signal 9 (Killed)".
std::string howItEnded(int waitStatus);

}  // namespace nf

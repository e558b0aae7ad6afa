// What every fuzz target shares: inputs as files (the readers take paths and memory-map them), the line
// between a parse error the code reports on purpose and a finding, and a sink that makes the compiler keep
// reads of returned data.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <new>
#include <string>
#include <string_view>
#include <utility>

namespace nf::fuzz {

// A folder of this process's own in /dev/shm (memory, so a million inputs cost no disk writes), made on
// first use and removed at exit. The readers get real paths, with siblings (a token file's sidecar).
inline const std::string& scratchDir() {
  // Never destroyed: the exit handler below runs after the destructors of statics made later.
  static const std::string& dir = *new std::string([] {
    const char* base = std::getenv("NF_FUZZ_SCRATCH");
    std::string path = base ? base : (std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp");
    path += "/nf-fuzz-" + std::to_string(::getpid());
    std::filesystem::create_directories(path);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratchDir(), ignored);
    });
    return path;
  }());
  return dir;
}

// Replaces <scratchDir>/<name> with `bytes` and returns its path. Failing to write is the harness's fault,
// not the parser's, so it stops the run.
inline std::string writeInput(const std::string& name, std::string_view bytes) {
  const std::string path = scratchDir() + "/" + name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::perror(path.c_str());
    std::abort();
  }
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      std::perror(path.c_str());
      std::abort();
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return path;
}

inline void removeInput(const std::string& name) { ::unlink((scratchDir() + "/" + name).c_str()); }

inline std::string_view asText(const uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Splits at the first `separator` into what comes before and after it; false (and everything in `first`)
// when there is none.
inline bool splitAt(std::string_view input, char separator, std::string_view& first,
                    std::string_view& second) {
  const std::size_t cut = input.find(separator);
  if (cut == std::string_view::npos) {
    first = input;
    second = {};
    return false;
  }
  first = input.substr(0, cut);
  second = input.substr(cut + 1);
  return true;
}

// Runs `parse`. The parsers report bad input by throwing std::exception subclasses (nf::FileError,
// std::invalid_argument, nlohmann::json's exceptions): those are the expected outcome for most inputs.
// Running out of memory on an input of a few KB is not: it is a finding (libFuzzer's -malloc_limit_mb
// catches most such allocations before this does). Anything that is not a std::exception escapes to
// libFuzzer, which reports it as a crash with its input.
template <typename Parse>
void expectOnlyParseErrors(Parse&& parse) {
  try {
    std::forward<Parse>(parse)();
  } catch (const std::bad_alloc& e) {
    std::fprintf(stderr, "finding: std::bad_alloc from a small input (%s)\n", e.what());
    std::abort();
  } catch (const std::exception&) {
  }
}

// A property that must hold for every accepted input (a written file reads back the same).
inline void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "finding: %s\n", what);
    std::abort();
  }
}

// Values the optimizer cannot drop, so every byte a reader hands out is read.
inline void keep(uint64_t value) {
  static volatile uint64_t sink = 0;
  sink = sink + value;
}
inline void touch(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t sum = 0;
  for (std::size_t i = 0; i < size; ++i) sum = sum * 31 + p[i];
  keep(sum);
}

}  // namespace nf::fuzz

// A minimal test harness for the engine tests (plain C++, so they also run on GPU servers without Qt).
// Each test file is one executable run by CTest; it prints one line per case and a closing
// "N passed, N failed" line, and exits non-zero when anything failed.
#pragma once
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace nf::test {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct Skip : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Case {
  const char* name;
  std::function<void()> body;
};

inline std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}

struct Registrar {
  Registrar(const char* name, std::function<void()> body) { registry().push_back({name, std::move(body)}); }
};

inline std::string where(const char* file, int line) {
  std::string f = file;
  auto slash = f.find_last_of('/');
  return (slash == std::string::npos ? f : f.substr(slash + 1)) + ":" + std::to_string(line) + ": ";
}

// Runs every case (or those whose name contains argv[1]).
inline int runAll(int argc, char** argv) {
  int passed = 0, failed = 0, skipped = 0;
  for (auto& c : registry()) {
    if (argc > 1 && std::string(c.name).find(argv[1]) == std::string::npos) continue;
    try {
      c.body();
      std::cout << "PASS " << c.name << std::endl;
      ++passed;
    } catch (const Skip& s) {
      std::cout << "SKIP " << c.name << ": " << s.what() << std::endl;
      ++skipped;
    } catch (const std::exception& e) {
      std::cout << "FAIL " << c.name << ": " << e.what() << std::endl;
      ++failed;
    }
  }
  std::cout << passed << " passed, " << failed << " failed";
  if (skipped) std::cout << ", " << skipped << " skipped";
  std::cout << std::endl;
  return failed == 0 && passed > 0 ? 0 : 1;
}

}  // namespace nf::test

#define NF_CONCAT_(a, b) a##b
#define NF_CONCAT(a, b) NF_CONCAT_(a, b)
#define TEST_CASE(name)                                                            \
  static void NF_CONCAT(test_, name)();                                            \
  static nf::test::Registrar NF_CONCAT(reg_, name)(#name, NF_CONCAT(test_, name)); \
  static void NF_CONCAT(test_, name)()

#define REQUIRE(cond)                                                                                 \
  do {                                                                                                \
    if (!(cond)) throw nf::test::Failure(nf::test::where(__FILE__, __LINE__) + "REQUIRE(" #cond ")"); \
  } while (0)

#define REQUIRE_MSG(cond, msg)                                                      \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::ostringstream nf_os;                                                     \
      nf_os << nf::test::where(__FILE__, __LINE__) << "REQUIRE(" #cond ") " << msg; \
      throw nf::test::Failure(nf_os.str());                                         \
    }                                                                               \
  } while (0)

#define REQUIRE_EQ(a, b) REQUIRE_MSG((a) == (b), "with " #a " = " << (a) << ", " #b " = " << (b))

// Expects expr to throw a std::exception whose what() contains every listed fragment.
#define REQUIRE_THROWS_WITH(expr, ...)                                                   \
  do {                                                                                   \
    bool nf_threw = false;                                                               \
    try {                                                                                \
      (void)(expr);                                                                      \
    } catch (const nf::test::Failure&) {                                                 \
      throw;                                                                             \
    } catch (const std::exception& nf_e) {                                               \
      nf_threw = true;                                                                   \
      for (const std::string& nf_part : std::initializer_list<std::string>{__VA_ARGS__}) \
        REQUIRE_MSG(std::string(nf_e.what()).find(nf_part) != std::string::npos,         \
                    "message '" << nf_e.what() << "' lacks '" << nf_part << "'");        \
    }                                                                                    \
    REQUIRE_MSG(nf_threw, #expr " did not throw");                                       \
  } while (0)

#define SKIP(reason) throw nf::test::Skip(reason)

#define TEST_MAIN() \
  int main(int argc, char** argv) { return nf::test::runAll(argc, argv); }

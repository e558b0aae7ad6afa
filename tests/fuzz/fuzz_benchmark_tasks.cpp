// Downstream benchmark files (eval/benchmark_tasks.h): the first byte picks the task, the rest is its JSONL
// file. An accepted file must give items a scorer can index: a request per choice, a length per choice and
// the gold one among them.
#include "eval/benchmark_tasks.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::vector<nf::BenchmarkTask>& tasks = nf::allBenchmarkTasks();
  const nf::BenchmarkTask task = tasks[data[0] % tasks.size()];
  const std::string path = nf::fuzz::writeInput("task.jsonl", nf::fuzz::asText(data + 1, size - 1));
  nf::fuzz::expectOnlyParseErrors([&] {
    const nf::BenchmarkData read = nf::readBenchmark(task, path);
    nf::fuzz::require(!read.items.empty(), "an accepted benchmark file has no items");
    for (const nf::BenchmarkItem& item : read.items) {
      nf::fuzz::require(!item.requests.empty() && item.choiceLengths.size() == item.requests.size(),
                        "an accepted item has no request or not a length per choice");
      nf::fuzz::require(item.gold >= 0 && item.gold < static_cast<int>(item.requests.size()),
                        "an accepted item's gold choice is not one of its choices");
      for (const nf::LoglikelihoodRequest& request : item.requests)
        nf::fuzz::touch(request.continuation.data(), request.continuation.size());
    }
  });
  return 0;
}

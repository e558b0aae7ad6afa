// Downstream benchmarks for the bundled models, made from the synthetic corpus in the files' own formats
// (eval/benchmark_tasks.h reads them as it reads the real ones), so the benchmark path runs offline and
// measures something these models can do:
//   hellaswag_val.jsonl        a story's next sentence: its first words given, the true rest against the
//                              rests of three sentences from other stories
//   winogrande_1.1/dev.jsonl   an IOI sentence with the giver blanked ("When Mary and John went to the
//                              store, _ gave a drink to John."): partial scoring asks which name makes the
//                              rest of the sentence likely — the IOI circuit's own question
//   lambada_test.jsonl         a story cut after a name that occurred earlier in it: the name is the target
// Items come from the corpus's validation documents (the val.txt stream of the seed: never trained on).
// Torch-free.
#pragma once
#include <cstdint>
#include <string>

namespace nf {

// Writes the three files under `folder` (atomically), `items` items each; returns the number written.
int64_t writeSyntheticBenchmarks(const std::string& folder, uint64_t seed, int64_t items);

}  // namespace nf

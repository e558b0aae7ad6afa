// Evaluations during the run (trainer_state.h): every held-out file, sharded over the workers and gathered
// on worker 0 in the one-process order; an "eval" record each, and the divergence guard's look at it.
#include "run/metrics_records.h"
#include "train/trainer_state.h"

namespace nf {

using json = nlohmann::json;

void Trainer::Impl::evaluateAll(int64_t step) {
  if (evalFiles.empty()) return;
  lastEvaluated = step;
  model->setNormObserver(nullptr);  // evaluation never moves the EMAs
  EvalOptions options;
  options.context = config().optimizer.context;
  options.maxTokens = config().eval.tokens;
  options.batchSize = config().optimizer.microBatch;
  options.shard = worker.rank;
  options.shards = worker.worldSize;
  for (const TokenFile& file : evalFiles) {
    TokenValues values;
    const EvalResult evaluated = evaluateTokens(*model, file, options, values);
    if (group) values = gatherTokenValues(values, "the evaluation of " + file.path());
    if (!isMain()) continue;
    requireEvaluatedTokens(values, evaluated);
    const LossSummary summary = summarize(values);
    // (The starting model's evaluation only sets the mark the later ones are compared with.)
    if (const auto why = guard->checkEvaluation(file.path(), summary.meanLoss); why && step > 0)
      divergedEvaluation = *why;
    json r = toJson(summary);
    r.erase("calibration_bins");
    r[record::kType] = record::kEval;
    r["step"] = step;
    r["file"] = file.path();
    record(r);
  }
  if (observing) model->setNormObserver(tracker.get());
}

// Every worker's per-token values, concatenated in rank order (= the one-process order of the chunks).
TokenValues Trainer::Impl::gatherTokenValues(const TokenValues& own, const std::string& during) {
  const int64_t n = static_cast<int64_t>(own.size());
  const torch::Tensor counts =
      group->gather(torch::full({1}, n, torch::TensorOptions().dtype(torch::kLong).device(device)), during)
          .to(torch::kCPU);
  const int64_t most = counts.max().item<int64_t>();
  torch::Tensor rows = torch::zeros({4, most}, torch::kFloat32);
  if (n > 0) {
    rows[0].narrow(0, 0, n).copy_(torch::from_blob(const_cast<float*>(own.loss.data()), {n}));
    rows[1].narrow(0, 0, n).copy_(torch::from_blob(const_cast<float*>(own.entropy.data()), {n}));
    rows[2].narrow(0, 0, n).copy_(torch::from_blob(const_cast<float*>(own.confidence.data()), {n}));
    rows[3].narrow(0, 0, n).copy_(
        torch::from_blob(const_cast<uint8_t*>(own.correct.data()), {n}, torch::kUInt8).to(torch::kFloat32));
  }
  const torch::Tensor all = group->gather(rows.to(device), during).to(torch::kCPU).contiguous();
  TokenValues values;
  for (int r = 0; r < group->size(); ++r) {
    const int64_t count = counts[r].item<int64_t>();
    const float* row = all[r].data_ptr<float>();
    values.loss.insert(values.loss.end(), row, row + count);
    values.entropy.insert(values.entropy.end(), row + most, row + most + count);
    values.confidence.insert(values.confidence.end(), row + 2 * most, row + 2 * most + count);
    for (int64_t i = 0; i < count; ++i) values.correct.push_back(row[3 * most + i] != 0);
  }
  return values;
}

}  // namespace nf

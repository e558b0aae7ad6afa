// Tracked analyses: measured at the run's cadence and at each removal event, on the model as it is then —
// the same numbers the analyses give on the run's checkpoint of that step — and their settings kept and
// checked like every other setting of a run.
#include <torch/torch.h>

#include "analysis/attention_sinks.h"
#include "analysis/logit_attribution.h"
#include "analysis/residual_norms.h"
#include "analysis/tracked_analyses.h"
#include "data/token_sequences.h"
#include "fixtures.h"
#include "io/file_format.h"
#include "model/causal_lm.h"
#include "run/run_directory.h"
#include "run_fixtures.h"
#include "train/trainer.h"

using namespace nf;
using namespace nf::test;
using json = nlohmann::json;

namespace {

// The mean next-token cross-entropy of a model on sequences, written out from its definition.
double meanNextTokenLoss(CausalLMImpl& model, const TokenSequences& data) {
  torch::NoGradGuard noGrad;
  const torch::Tensor tokens = torch::tensor(std::vector<int64_t>(data.tokens.begin(), data.tokens.end()))
                                   .view({data.count, data.length});
  const torch::Tensor logProbs = torch::log_softmax(model.forward(tokens).to(torch::kFloat64), -1);
  const torch::Tensor next = tokens.narrow(1, 1, data.length - 1).unsqueeze(-1);
  return -logProbs.narrow(1, 0, data.length - 1).gather(-1, next).mean().item<double>();
}

void requireClose(double got, double expected, const std::string& what) {
  REQUIRE_MSG(std::abs(got - expected) <= 1e-7 * std::max(1.0, std::abs(expected)),
              what << ": tracked " << got << ", analysis " << expected);
}

}  // namespace

// Also while interpolation ramps run (sites made fake at 14 and 16 still mix in their norms at step 20): the
// tracked model was a step's ramps ahead of its checkpoint's.
TEST_CASE(tracked_analyses_come_at_the_cadence_and_each_event_and_match_the_analyses_of_that_step) {
  for (const int64_t ramp : {0, 8}) {
    TempDir dir;
    RunConfig config = smallRun(dir);  // events at steps 5, 7, 10, 12, 14, 16 of 30
    config.removal.interpolationSteps = ramp;
    config.tracking.analyses = {"nmae", "sinks", "pos0-ratio", "val-ce"};
    config.tracking.every = 10;
    config.tracking.sequences = 4;
    config.tracking.length = 16;
    REQUIRE(Trainer::start(dir.path("run"), config)->run());

    const std::vector<json> tracked = records(dir.path("run"), "track");
    std::vector<int64_t> steps, eventSteps;
    for (const json& r : tracked) {
      steps.push_back(r["step"].get<int64_t>());
      if (r["event"].get<bool>()) eventSteps.push_back(r["step"].get<int64_t>());
      for (const std::string& name : config.tracking.analyses) {
        REQUIRE(r["values"].contains(name));
        REQUIRE(r["seconds"][name].get<double>() >= 0);
      }
      const int layers = smallConfig().nLayer;
      REQUIRE(r["per_layer"]["nmae"].size() == static_cast<std::size_t>(layers));
      REQUIRE(r["per_layer"]["sinks"].size() == static_cast<std::size_t>(layers));
      REQUIRE(r["per_layer"]["pos0-ratio"].size() == static_cast<std::size_t>(layers + 1));  // and the final
      REQUIRE(!r["per_layer"].contains("val-ce"));
      for (const std::string& name : config.tracking.analyses)
        REQUIRE_EQ(r["data"][name].get<std::string>(), dir.path("train.bin") + ": 4 sequences of 16 tokens");
    }
    REQUIRE(steps == (std::vector<int64_t>{0, 5, 7, 10, 12, 14, 16, 20, 30}));
    REQUIRE(eventSteps == (std::vector<int64_t>{5, 7, 10, 12, 14, 16}));

    // Steps 20 and 30 have no event: the model measured there is the checkpoint of that step.
    const TokenSequences data = readSequences(dir.path("train.bin"), 4, 16, -1);
    for (const int64_t step : {20, 30}) {
      const json& r = tracked[step == 20 ? 7 : 8];
      const SnapshotPtr snapshot = ModelSnapshot::load(run::checkpointPath(dir.path("run"), step));
      AttributionOptions noInterval;
      noInterval.bootstrapSamples = 0;
      requireClose(r["values"]["nmae"], logitAttribution(*snapshot, data, noInterval).overallNmae, "NMAE");
      requireClose(r["values"]["sinks"], attentionSinks(*snapshot, data).sinkRate, "sink rate");
      double largest = 0;
      for (const ResidualNormRow& row : residualNorms(*snapshot, data, 1).rows)
        largest = std::max(largest, row.position0.mean / row.rest.mean);
      requireClose(r["values"]["pos0-ratio"], largest, "position-0 ratio");
      requireClose(r["values"]["val-ce"], meanNextTokenLoss(snapshot->model(), data), "cross-entropy");
    }
    // Once every site is fake, DLA is the direct effect.
    REQUIRE(tracked.back()["values"]["nmae"].get<double>() < 1e-3);
  }
}

// A resume supersedes the records at and after its step (the events there fire again): the step it goes on
// from is measured again even off the cadence, so its curve keeps the last point before the resume.
TEST_CASE(a_resumed_run_measures_again_the_step_it_goes_on_from) {
  TempDir dir;
  RunConfig config = smallRun(dir);  // events at steps 5 … 16 of 30
  config.tracking.analyses = {"val-ce"};
  config.tracking.every = 20;
  config.tracking.sequences = 2;
  config.tracking.length = 16;
  REQUIRE(Trainer::start(dir.path("run"), config)->run());
  ResumeOverrides longer;
  longer.maxSteps = 35;
  REQUIRE(Trainer::resume(dir.path("run"), std::nullopt, longer)->run());
  REQUIRE(Trainer::resume(dir.path("run"))->run());  // nothing left to train: it finishes at once
  std::vector<int64_t> steps;
  for (const json& r : records(dir.path("run"), "track")) steps.push_back(r["step"].get<int64_t>());
  REQUIRE(steps == (std::vector<int64_t>{0, 5, 7, 10, 12, 14, 16, 20, 30, 35}));
}

TEST_CASE(tracking_settings_are_kept_in_config_json_and_checked_on_read) {
  TempDir dir;
  RunConfig config = smallRun(dir);
  config.tracking.analyses = {"sinks", "nmae"};
  config.tracking.every = 7;
  config.tracking.sequences = 3;
  config.tracking.data = "val.bin";
  const RunConfig back = runConfigFromJson(toJson(config), "config.json");
  REQUIRE(back.tracking.analyses == config.tracking.analyses);
  REQUIRE(back.tracking.every == 7);
  REQUIRE(back.tracking.sequences == 3);
  REQUIRE(back.tracking.data == "val.bin");
  REQUIRE(back.tracking.interval(500) == 7);
  REQUIRE(TrackingSettings{}.interval(500) == 25);  // a twentieth of the run by default

  json j = toJson(config);
  j.erase("tracking");  // a run from before tracking existed tracks nothing
  REQUIRE(runConfigFromJson(j, "config.json").tracking.analyses.empty());
  j = toJson(config);
  j["tracking"]["analyses"] = {"nmae", "nmea"};
  REQUIRE_THROWS_WITH(runConfigFromJson(j, "runs/x/config.json"), "runs/x/config.json",
                      "no tracked analysis \"nmea\"");
  j["tracking"]["analyses"] = {"nmae"};
  j["tracking"]["sequences"] = 0;
  REQUIRE_THROWS_WITH(runConfigFromJson(j, "runs/x/config.json"), "tracking settings out of range");

  REQUIRE(parseTrackedAnalyses(" nmae, sinks,val-ce ") ==
          (std::vector<std::string>{"nmae", "sinks", "val-ce"}));
  REQUIRE_THROWS_WITH(parseTrackedAnalyses("nmae,nmae"), "named twice");
  REQUIRE_THROWS_WITH(parseTrackedAnalyses("dla"), "known: nmae, sinks, pos0-ratio");
}

TEST_CASE(tracking_the_ioi_analyses_needs_a_tokenizer_and_says_so_at_the_start) {
  TempDir dir;
  RunConfig config = smallRun(dir);  // a random model: no tokenizer files
  config.tracking.analyses = {"nmae", "ioi"};
  REQUIRE_THROWS_WITH(Trainer::start(dir.path("run"), config), "tokenizer");
}

TEST_MAIN()

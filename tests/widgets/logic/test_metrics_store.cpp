// The training view's metrics, headless (no Qt): every record kind of metrics.jsonl lands in the series the
// plots read, lines that are not records (a half-written last line of a followed file) change nothing,
// clear() makes the plots rebuild, and the smoothed loss is TensorBoard's bias-corrected EMA.
#include <cmath>
#include <string>
#include <vector>

#include "check.h"
#include "logic/MetricsStore.h"

namespace {

bool near(double a, double b, double tolerance = 1e-12) { return std::abs(a - b) <= tolerance; }

// Everything a plot could read, to check that a refused line changed nothing.
bool sameContents(const MetricsStore& a, const MetricsStore& b) {
  auto sameSeries = [](const std::vector<double>& x, const std::vector<double>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))) return false;
    return true;
  };
  const auto& s = a.steps;
  const auto& t = b.steps;
  return sameSeries(s.step, t.step) && sameSeries(s.ce, t.ce) && sameSeries(s.aux, t.aux) &&
         sameSeries(s.loss, t.loss) && sameSeries(s.lr, t.lr) && sameSeries(s.gradNorm, t.gradNorm) &&
         sameSeries(s.tokensPerSecond, t.tokensPerSecond) && a.evals.size() == b.evals.size() &&
         a.events.size() == b.events.size() && a.scales.size() == b.scales.size() && a.mode == b.mode &&
         a.maxSteps == b.maxSteps && a.lastStatus == b.lastStatus && a.generation == b.generation;
}

}  // namespace

TEST_CASE(a_step_record_fills_every_series) {
  MetricsStore m;
  REQUIRE(m.ingest(R"({"type":"step","step":1,"ce":3.5,"aux":0.25,"loss":3.75,"lr":0.0006,"grad_norm":1.5,)"
                   R"("tokens_per_second":1200,"scales":{"LN_v.2":{"tracked":2.5,"frozen":null},)"
                   R"("LN_f":{"tracked":4.0,"frozen":3.0}}})"));
  REQUIRE(m.steps.step == std::vector<double>{1});
  REQUIRE(m.steps.ce == std::vector<double>{3.5});
  REQUIRE(m.steps.aux == std::vector<double>{0.25});
  REQUIRE(m.steps.loss == std::vector<double>{3.75});
  REQUIRE(m.steps.lr == std::vector<double>{0.0006});
  REQUIRE(m.steps.gradNorm == std::vector<double>{1.5});
  REQUIRE(m.steps.tokensPerSecond == std::vector<double>{1200});
  REQUIRE_EQ(m.lastStep(), int64_t{1});
  // Per-site scales: a real site's frozen scale is NaN (not plotted), a fake one's is its value.
  REQUIRE_EQ(m.scales.size(), size_t{2});
  const MetricsStore::ScalePoint v = m.scales.at("LN_v.2").at(0);
  REQUIRE(v.step == 1 && v.tracked == 2.5 && std::isnan(v.frozen));
  const MetricsStore::ScalePoint f = m.scales.at("LN_f").at(0);
  REQUIRE(f.step == 1 && f.tracked == 4.0 && f.frozen == 3.0);
}

TEST_CASE(a_multi_worker_step_gives_the_world_size_and_each_workers_pace) {
  MetricsStore m;
  REQUIRE(m.ingest(R"({"type":"step","step":1,"tokens_per_second":8000})"));
  REQUIRE_EQ(m.worldSize, 1);
  REQUIRE(m.workerTokensPerSecond.empty());
  REQUIRE(m.ingest(R"({"type":"step","step":2,"tokens_per_second":8000,"world_size":2,)"
                   R"("worker_tokens_per_second":[4100,3900]})"));
  REQUIRE_EQ(m.worldSize, 2);
  REQUIRE(m.workerTokensPerSecond == (std::vector<double>{4100, 3900}));
  // A malformed value is not trusted.
  REQUIRE(m.ingest(R"({"type":"step","step":3,"world_size":"two","worker_tokens_per_second":{}})"));
  REQUIRE_EQ(m.worldSize, 1);
  REQUIRE(m.workerTokensPerSecond.empty());
}

TEST_CASE(missing_step_values_are_gaps_not_zeros) {
  // A fine-tuning run has no aux loss or scales: the series stay aligned, with NaN where a value is absent.
  MetricsStore m;
  REQUIRE(m.ingest(R"({"type":"step","step":3,"ce":2.0,"lr":"fast"})"));
  REQUIRE_EQ(m.steps.step.size(), size_t{1});
  REQUIRE_EQ(m.steps.ce.at(0), 2.0);
  REQUIRE(std::isnan(m.steps.aux.at(0)) && std::isnan(m.steps.loss.at(0)) && std::isnan(m.steps.lr.at(0)));
  REQUIRE(std::isnan(m.steps.gradNorm.at(0)) && std::isnan(m.steps.tokensPerSecond.at(0)));
  REQUIRE(m.scales.empty());
}

TEST_CASE(steps_only_go_forward) {
  // A followed file re-read from the start must not plot its steps twice.
  MetricsStore m;
  REQUIRE(m.ingest(R"({"type":"step","step":1,"ce":3})"));
  REQUIRE(m.ingest(R"({"type":"step","step":2,"ce":2.9})"));
  const MetricsStore before = m;
  REQUIRE(!m.ingest(R"({"type":"step","step":2,"ce":9})"));
  REQUIRE(!m.ingest(R"({"type":"step","step":1,"ce":9,"scales":{"LN_f":{"tracked":1}}})"));
  REQUIRE(sameContents(m, before));
  REQUIRE(m.ingest(R"({"type":"step","step":5,"ce":2.5})"));
  REQUIRE(m.steps.step == (std::vector<double>{1, 2, 5}));
  REQUIRE(m.steps.ce == (std::vector<double>{3, 2.9, 2.5}));
}

TEST_CASE(a_resume_or_rollback_takes_the_run_back_to_its_step_and_the_plots_rebuild) {
  MetricsStore m;
  for (int step = 1; step <= 6; ++step)
    m.ingest(R"({"type":"step","step":)" + std::to_string(step) + R"(,"loss":)" + std::to_string(step) +
             R"(,"scales":{"LN_f":{"tracked":1,"frozen":null}}})");
  m.ingest(R"({"type":"eval","step":2,"file":"val.bin","mean_loss":3})");
  m.ingest(R"({"type":"eval","step":6,"file":"val.bin","mean_loss":9})");
  m.ingest(R"({"type":"event","step":3,"description":"step 3: LN_f → fake"})");
  m.ingest(R"({"type":"event","step":5,"description":"step 5: LN_v.0 → fake"})");
  const int64_t generation = m.generation;
  // The run went on from 4 steps done: what came after in the file belongs to the stretch it left.
  REQUIRE(m.ingest(R"({"type":"rollback","step":4,"from_step":6,"lr":0.0003})"));
  REQUIRE(m.steps.step == (std::vector<double>{1, 2, 3, 4}));
  REQUIRE(m.steps.loss == (std::vector<double>{1, 2, 3, 4}));
  REQUIRE_EQ(m.scales["LN_f"].size(), 4u);
  REQUIRE_EQ(m.evals["val.bin"].size(), 1u);
  REQUIRE_EQ(m.events.size(), 1u);  // the event of step 5 fires again
  REQUIRE(m.generation > generation);
  REQUIRE(m.ingest(R"({"type":"step","step":5,"loss":2.5})"));  // the steps trained again are taken
  REQUIRE(m.steps.loss.back() == 2.5);
  // A resume at the newest step changes nothing, and the plots need not rebuild.
  const int64_t now = m.generation;
  REQUIRE(m.ingest(R"({"type":"resume","step":5})"));
  REQUIRE_EQ(m.steps.step.size(), 5u);
  REQUIRE_EQ(m.generation, now);
  // A run killed just after an event's record at step 5 was written, resumed at 5 with the event moved: the
  // undone record had stayed on every plot beside the event as it fired again (currentHistory drops it).
  REQUIRE(m.ingest(R"({"type":"event","step":5,"description":"step 5: LN_v.1 → fake"})"));
  REQUIRE_EQ(m.events.size(), 2u);
  REQUIRE(m.ingest(R"({"type":"resume","step":5})"));
  REQUIRE_EQ(m.events.size(), 1u);
  REQUIRE(m.generation > now);
  REQUIRE(m.ingest(R"({"type":"warning","step":5,"code":"low_disk_space","message":"1 GiB free"})"));
  REQUIRE_EQ(m.lastWarning, std::string("1 GiB free"));
  REQUIRE_EQ(m.lastWarningCode, std::string("low_disk_space"));  // what the GUI translates by
  REQUIRE_EQ(m.lastCheckpointStep, int64_t{-1});
  REQUIRE(m.ingest(R"({"type":"checkpoint","step":5,"path":"c","bytes":2048,"free_bytes":1})"));
  REQUIRE_EQ(m.lastCheckpointStep, int64_t{5});
  REQUIRE(m.lastCheckpointBytes == 2048);
}

TEST_CASE(tracked_analyses_become_one_series_each_with_their_layers_events_and_cost) {
  MetricsStore m;
  REQUIRE(m.ingest(R"({"type":"track","step":0,"event":false,"values":{"nmae":50,"val-ce":2.5},)"
                   R"("per_layer":{"nmae":[40,60]},"seconds":{"nmae":0.25,"val-ce":0.05}})"));
  REQUIRE(
      m.ingest(R"({"type":"track","step":10,"event":true,"values":{"nmae":30},"per_layer":{"nmae":[20,40]},)"
               R"("seconds":{"nmae":0.75}})"));
  REQUIRE_EQ(m.tracked.size(), 2u);
  const MetricsStore::TrackedSeries& nmae = m.tracked["nmae"];
  REQUIRE_EQ(nmae.points.size(), 2u);
  REQUIRE(nmae.points[0].step == 0 && !nmae.points[0].atEvent && nmae.points[0].value == 50);
  REQUIRE(nmae.points[1].step == 10 && nmae.points[1].atEvent);
  REQUIRE(nmae.points[1].perLayer == (std::vector<double>{20, 40}));
  REQUIRE(near(nmae.secondsPerMeasurement(), 0.5));
  REQUIRE(m.tracked["val-ce"].points[0].perLayer.empty());
  REQUIRE(nmae.data.empty());  // records before "data" existed
  REQUIRE(m.ingest(
      R"({"type":"track","step":12,"event":false,"data":{"nmae":"val.bin: 2 sequences"},"values":{"nmae":29}})"));
  REQUIRE_EQ(m.tracked["nmae"].data, std::string("val.bin: 2 sequences"));
  REQUIRE(m.tracked["val-ce"].data.empty());  // not measured in that record
  // Measured again at step 10 (a file read twice): replaced, not doubled; a rollback to 10 drops step 10.
  REQUIRE(m.ingest(R"({"type":"track","step":10,"event":true,"values":{"nmae":31}})"));
  REQUIRE_EQ(m.tracked["nmae"].points.size(), 2u);
  REQUIRE(m.tracked["nmae"].points.back().value == 31);
  for (int step = 1; step <= 12; ++step)
    m.ingest(R"({"type":"step","step":)" + std::to_string(step) + R"(,"loss":1})");
  REQUIRE(m.ingest(R"({"type":"rollback","step":10})"));
  REQUIRE_EQ(m.tracked["nmae"].points.size(), 1u);
  // A damaged record changes nothing.
  REQUIRE(!m.ingest(R"({"type":"track","step":"x","values":{"nmae":1}})"));
  REQUIRE(m.ingest(R"({"type":"track","step":11,"event":"yes","values":{"nmae":"high"},"seconds":[]})"));
  REQUIRE_EQ(m.tracked["nmae"].points.size(), 1u);
}

TEST_CASE(evaluations_are_kept_per_file) {
  MetricsStore m;
  REQUIRE(m.ingest(R"({"type":"eval","step":10,"file":"/data/owt/val.bin","mean_loss":3.25})"));
  REQUIRE(m.ingest(R"({"type":"eval","step":10,"file":"/other/place/val.bin","mean_loss":6.5})"));
  REQUIRE(m.ingest(R"({"type":"eval","step":20,"file":"/data/owt/val.bin","mean_loss":3.0})"));
  REQUIRE(m.ingest(R"({"type":"eval","step":20,"file":"/other/place/val.bin","mean_loss":6.0})"));
  REQUIRE(m.ingest(R"({"type":"eval","step":20,"file":"pile.bin","mean_loss":4.5})"));
  REQUIRE(m.ingest(R"({"type":"eval","step":30,"mean_loss":2.0})"));                   // no file: "eval"
  REQUIRE(m.ingest(R"({"type":"eval","step":30,"file":"val.bin","mean_loss":9.0})"));  // a third val.bin
  REQUIRE_EQ(m.evals.size(), size_t{5});
  REQUIRE(m.evals.at("val.bin (3)").at(0).loss == 9.0);
  // The first file of a name is called by it; another of the same name, in another folder, by its path.
  const auto& val = m.evals.at("val.bin");
  REQUIRE_EQ(val.size(), size_t{2});
  REQUIRE(val[0].step == 10 && val[0].loss == 3.25 && val[1].step == 20 && val[1].loss == 3.0);
  const auto& other = m.evals.at("/other/place/val.bin");
  REQUIRE(other.size() == 2 && other[0].loss == 6.5 && other[1].loss == 6.0);
  REQUIRE(m.evals.at("pile.bin").at(0).loss == 4.5);
  REQUIRE(m.evals.at("eval").at(0).step == 30);
  REQUIRE(m.steps.step.empty());
}

TEST_CASE(applied_events_are_listed_in_order) {
  MetricsStore m;
  REQUIRE(m.ingest(R"({"type":"event","step":40,"description":"step 40: LN_mlp.0 → fake"})"));
  REQUIRE(m.ingest(R"({"type":"event","step":42,"description":"step 42: LN_mlp.1 → fake"})"));
  REQUIRE_EQ(m.events.size(), size_t{2});
  REQUIRE_EQ(m.events[0].step, int64_t{40});
  REQUIRE_EQ(m.events[0].description, std::string("step 40: LN_mlp.0 → fake"));
  REQUIRE_EQ(m.events[1].step, int64_t{42});
}

TEST_CASE(status_records_tell_the_mode_budget_and_latest_state) {
  struct Row {
    const char* line;
    const char* status;
    const char* mode;
    int64_t maxSteps;
  };
  // Applied in order to one store: "start" sets the mode and the step budget; a resume only changes the
  // budget it was given (`resume --steps N`), as the trainer writes it, under "overrides".
  const Row rows[] = {
      {R"({"type":"start","mode":"remove","max_steps":300})", "start", "remove", 300},
      {R"({"type":"stop","step":120})", "stop", "remove", 300},
      {R"({"type":"resume","step":120,"mode":"finetune","max_steps":5})", "resume", "remove", 300},
      {R"({"type":"resume","step":120,"overrides":{"lr":0.001}})", "resume", "remove", 300},
      {R"({"type":"resume","step":120,"overrides":{"max_steps":-4}})", "resume", "remove", 300},
      {R"({"type":"resume","step":120,"overrides":{"max_steps":450}})", "resume", "remove", 450},
      {R"({"type":"finish","step":450})", "finish", "remove", 450},
      {R"({"type":"start","mode":"finetune","max_steps":50})", "start", "finetune", 50},
  };
  MetricsStore m;
  REQUIRE(m.lastStatus.empty());
  for (const Row& r : rows) {
    REQUIRE_MSG(m.ingest(r.line), r.line);
    REQUIRE_MSG(m.lastStatus == r.status, r.line);
    REQUIRE_MSG(m.mode == r.mode, r.line);
    REQUIRE_MSG(m.maxSteps == r.maxSteps, r.line);
  }
  // A run the autopilot ended before its budget: the finish record's reason, until the run goes on.
  REQUIRE(m.finishReason.empty());
  REQUIRE(m.ingest(R"({"type":"finish","step":40,"reason":"autopilot: the smoothed loss has not fallen"})"));
  REQUIRE_EQ(m.finishReason, "autopilot: the smoothed loss has not fallen");
  REQUIRE(m.ingest(R"({"type":"resume","step":40})"));
  REQUIRE(m.finishReason.empty());
}

TEST_CASE(lines_that_are_not_records_are_refused_and_change_nothing) {
  MetricsStore m;
  REQUIRE(m.ingest(R"({"type":"start","mode":"remove","max_steps":300})"));
  REQUIRE(m.ingest(R"({"type":"step","step":1,"ce":3,"scales":{"LN_f":{"tracked":1}}})"));
  REQUIRE(m.ingest(R"({"type":"eval","step":1,"file":"val.bin","mean_loss":3})"));
  const MetricsStore before = m;
  const char* lines[] = {
      "",
      "not json",
      R"({"type":"step","step":2,"ce":2.9)",  // half written: the writer is mid-line
      R"([{"type":"step","step":2}])",
      R"("step")",
      R"({"step":2,"ce":2.9})",  // no type
      R"({"type":5,"step":2})",
      R"({"type":null})",
  };
  for (const char* line : lines) {
    REQUIRE_MSG(!m.ingest(line), "accepted: " << line);
    REQUIRE_MSG(sameContents(m, before), "changed by: " << line);
  }
  // A record of a kind this version does not plot is skipped, not an error.
  REQUIRE(m.ingest(R"({"type":"checkpoint","step":1,"path":"ckpt"})"));
  REQUIRE(sameContents(m, before));
}

TEST_CASE(clear_empties_the_store_and_bumps_the_generation) {
  MetricsStore m;
  REQUIRE(m.ingest(R"({"type":"start","mode":"remove","max_steps":300})"));
  REQUIRE(m.ingest(R"({"type":"step","step":7,"ce":3,"scales":{"LN_f":{"tracked":1}}})"));
  REQUIRE(m.ingest(R"({"type":"eval","step":7,"file":"val.bin","mean_loss":3})"));
  REQUIRE(m.ingest(R"({"type":"event","step":7,"description":"x"})"));
  REQUIRE_EQ(m.generation, int64_t{0});
  m.clear();
  REQUIRE_EQ(m.generation, int64_t{1});
  REQUIRE(m.steps.step.empty() && m.steps.ce.empty() && m.evals.empty() && m.events.empty() &&
          m.scales.empty());
  REQUIRE(m.mode.empty() && m.maxSteps == 0 && m.lastStatus.empty() && m.lastStep() == 0);
  // A followed run resumed from an earlier checkpoint: its steps start again below the old ones.
  REQUIRE(m.ingest(R"({"type":"step","step":3,"ce":3})"));
  REQUIRE_EQ(m.lastStep(), int64_t{3});
  m.clear();
  m.clear();
  REQUIRE_EQ(m.generation, int64_t{3});
}

TEST_CASE(recent_throughput_is_the_mean_of_the_last_steps) {
  MetricsStore m;
  REQUIRE_EQ(m.recentTokensPerSecond(), 0.0);  // nothing yet: unknown
  const double tps[] = {100, 200, 600};
  for (int i = 0; i < 3; ++i)
    REQUIRE(m.ingest(R"({"type":"step","step":)" + std::to_string(i + 1) + R"(,"tokens_per_second":)" +
                     std::to_string(tps[i]) + "}"));
  REQUIRE(near(m.recentTokensPerSecond(), 300));   // fewer steps than the window: all of them
  REQUIRE(near(m.recentTokensPerSecond(2), 400));  // (200 + 600) / 2
  REQUIRE(near(m.recentTokensPerSecond(1), 600));
  // 25 steps at 1, 2, …, 25 tokens/s: the default window is the last 20, 6 … 25, mean 15.5.
  MetricsStore many;
  for (int i = 1; i <= 25; ++i)
    REQUIRE(many.ingest(R"({"type":"step","step":)" + std::to_string(i) + R"(,"tokens_per_second":)" +
                        std::to_string(i) + "}"));
  REQUIRE(near(many.recentTokensPerSecond(), 15.5));
}

TEST_CASE(the_smoother_is_a_bias_corrected_ema) {
  // By hand, smoothing 0.9, inputs 10, 20, 30:
  //   1: average 0.1·10 = 1,               weight 0.1               → 10
  //   2: average 0.9·1 + 0.1·20 = 2.9,     weight 0.09 + 0.1 = 0.19  → 15.2631578947…
  //   3: average 0.9·2.9 + 0.1·30 = 5.61,  weight 0.171 + 0.1 = 0.271 → 20.7011070110…
  Smoother s;
  REQUIRE(near(s.next(10), 10));  // the first point is the value itself, not pulled towards 0
  REQUIRE(near(s.next(20), 2.9 / 0.19));
  REQUIRE(near(s.next(30), 5.61 / 0.271));

  // Closed form: the mean of the inputs weighted a^(n−i), a = smoothing (TensorBoard's debiased EMA).
  for (double a : {0.0, 0.5, 0.6, 0.95}) {
    Smoother t;
    t.smoothing = a;
    const std::vector<double> xs = {3.2, 2.9, 3.1, 2.5, 2.2, 2.4, 1.9};
    for (size_t n = 1; n <= xs.size(); ++n) {
      double numerator = 0, denominator = 0;
      for (size_t i = 0; i < n; ++i) {
        numerator += std::pow(a, static_cast<double>(n - 1 - i)) * xs[i];
        denominator += std::pow(a, static_cast<double>(n - 1 - i));
      }
      const double got = t.next(xs[n - 1]);
      REQUIRE_MSG(near(got, numerator / denominator, 1e-12), "a " << a << ", n " << n << ": " << got);
    }
  }
  // Smoothing 0 is the raw series; a constant series stays constant.
  Smoother raw;
  raw.smoothing = 0;
  REQUIRE(near(raw.next(5), 5) && near(raw.next(-1), -1));
  Smoother flat;
  for (int i = 0; i < 50; ++i) REQUIRE(near(flat.next(2.5), 2.5));
}

TEST_MAIN()

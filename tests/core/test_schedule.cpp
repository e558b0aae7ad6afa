// Schedules and presets: the paper's Table 4 exactly, readable validation errors, JSON round trip.
#include <nlohmann/json.hpp>

#include "check.h"
#include "train/settings.h"

using namespace nf;

namespace {

// Steps of the make_fake events of one site kind, by layer.
std::vector<int64_t> stepsOf(const Schedule& s, SiteKind kind) {
  std::vector<int64_t> steps;
  for (const auto& e : s.events)
    if (e.site == kind && e.action == EventAction::MakeFake) steps.push_back(e.step);
  return steps;
}

std::vector<int64_t> range(int64_t first, int64_t last, int64_t gap) {
  std::vector<int64_t> r;
  for (int64_t s = first; s <= last; s += gap) r.push_back(s);
  return r;
}

}  // namespace

TEST_CASE(paper_presets_reproduce_table_4) {
  struct Row {
    const char* name;
    int layers;
    int64_t micro, accumulation;
    double lr, minLr;
    int64_t warmup, maxSteps, mlp0, mlp1, mlpGap, qk0, qk1, qkGap, v0, v1, vGap, f;
    double lambda, momentum;
  };
  const Row rows[] = {
      {"gpt2", 12, 32, 16, 6e-4, 3e-4, 25, 300, 20, 42, 2, 44, 66, 2, 68, 101, 3, 104, 0.1, 0.9},
      {"gpt2-medium", 24, 22, 23, 6e-4, 3e-4, 10, 500, 20, 66, 2, 68, 114, 2, 116, 185, 3, 188, 0.1, 0.9},
      {"gpt2-large", 36,  28, 18,  3e-4, 4e-5, 15,  1200, 30,   170, 4,
       174,          314, 4,  318, 528,  6,    534, 0.03, 0.912},
      {"gpt2-xl", 48, 18, 28, 1e-4, 2e-5, 20, 1200, 50, 238, 4, 242, 430, 4, 434, 716, 6, 722, 0.01, 0.942},
  };
  for (const Row& row : rows) {
    const Preset& p = findPreset(row.name);
    REQUIRE_EQ(p.nLayer, row.layers);
    REQUIRE_EQ(p.optimizer.microBatch, row.micro);
    REQUIRE_EQ(p.optimizer.accumulation, row.accumulation);
    REQUIRE_EQ(p.optimizer.context, 1024);
    REQUIRE_EQ(p.optimizer.lr, row.lr);
    REQUIRE_EQ(p.optimizer.minLr, row.minLr);
    REQUIRE_EQ(p.optimizer.warmupSteps, row.warmup);
    REQUIRE_EQ(p.optimizer.maxSteps, row.maxSteps);
    REQUIRE_EQ(p.optimizer.weightDecay, 0.01);
    REQUIRE_EQ(p.optimizer.clipNorm, 1.0);
    REQUIRE_EQ(p.removal.auxWeight, row.lambda);
    REQUIRE_MSG(std::abs(p.removal.emaMomentum - row.momentum) < 5e-4,
                row.name << " k " << p.removal.emaMomentum);
    REQUIRE(stepsOf(p.schedule, SiteKind::Mlp) == range(row.mlp0, row.mlp1, row.mlpGap));
    REQUIRE(stepsOf(p.schedule, SiteKind::Qk) == range(row.qk0, row.qk1, row.qkGap));
    REQUIRE(stepsOf(p.schedule, SiteKind::V) == range(row.v0, row.v1, row.vGap));
    REQUIRE(stepsOf(p.schedule, SiteKind::Final) == std::vector<int64_t>{row.f});
    REQUIRE_EQ(stepsOf(p.schedule, SiteKind::Mlp).size(), static_cast<std::size_t>(row.layers));
    // Layer i of a group at start + i·gap, from block 0 upward.
    for (const auto& e : p.schedule.events)
      if (e.site == SiteKind::V) REQUIRE_EQ(e.step, row.v0 + e.layer * row.vGap);
    p.schedule.validate(p.nLayer, p.optimizer.maxSteps);
  }
  for (const char* name : {"blog-v2", "tiny"}) {
    const Preset& p = findPreset(name);
    p.schedule.validate(p.nLayer, p.optimizer.maxSteps);
  }
  REQUIRE_THROWS_WITH(findPreset("gpt3"), "unknown preset 'gpt3'", "gpt2-xl");
}

TEST_CASE(validation_names_every_problem) {
  Schedule s;
  s.events = {{1, 10, EventAction::MakeFake, SiteKind::Mlp, 0},
              {2, 12, EventAction::MakeFake, SiteKind::Mlp, 7},     // layer out of range
              {3, 14, EventAction::MakeFake, SiteKind::Mlp, -1},    // removes LN_mlp.0 again
              {4, 99, EventAction::MakeFake, SiteKind::Final, -1},  // past the last step
              {5, 20, EventAction::EndEotTreatment, SiteKind::Qk, -1}};
  REQUIRE_THROWS_WITH(s.validate(4, 50), "layer 7 is out of range",
                      "LN_mlp.0 is already made fake at step 10", "step 99 is past the last step 49",
                      "end-of-text treatment exists on LN_v only");
  REQUIRE_THROWS_WITH(
      scheduleFromJson(nlohmann::json::parse(R"({"events": [{"step": 3, "site": "LN_xx", "layer": 0}]})"),
                       "s.json"),
      "s.json", "event 0", "unknown site 'LN_xx'");
  REQUIRE_THROWS_WITH(
      scheduleFromJson(nlohmann::json::parse(R"({"events": [{"site": "LN_v", "layer": 0}]})"), "s.json"),
      "s.json", "step");
  REQUIRE_THROWS_WITH(
      scheduleFromJson(nlohmann::json::parse(R"({"events": [{"step": 1, "site": "LN_v", "layer": -2}]})"),
                       "s.json"),
      "layer must be a block index or \"all\"");
}

TEST_CASE(schedule_json_round_trips) {
  const Schedule& s = findPreset("blog-v2").schedule;
  const Schedule back = scheduleFromJson(toJson(s), "x");
  REQUIRE(back == s);
  // Ids are assigned in file order when missing; "all" means every layer.
  const Schedule plain = scheduleFromJson(
      nlohmann::json::parse(R"([{"step": 5, "site": "LN_qk", "layer": "all"}, {"step": 2, "site": "LN_f"}])"),
      "x");
  REQUIRE_EQ(plain.events.size(), 2u);
  REQUIRE_EQ(plain.events[0].step, 2);  // sorted by step
  REQUIRE_EQ(plain.events[1].id, 1);
  REQUIRE_EQ(Schedule::sitesOf(plain.events[1], 3).size(), 3u);
  REQUIRE_EQ(describe(plain.events[1]), "step 5: LN_qk.all → fake");
}

TEST_MAIN()

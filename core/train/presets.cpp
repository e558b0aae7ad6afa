// The presets (train/settings.h declares them): the paper's four GPT-2 schedules (PROTOCOL §4, Table 4),
// the blog's v2 recipe, the bundled models' and by-depth's rule for any other depth.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "train/settings.h"

namespace nf {
namespace {

Schedule numbered(std::vector<std::vector<ScheduleEvent>> groups) {
  Schedule s;
  for (auto& group : groups) s.events.insert(s.events.end(), group.begin(), group.end());
  int64_t id = 1;
  for (auto& e : s.events) e.id = id++;
  s.sort();
  return s;
}

// A preset from PROTOCOL §4's table row.
Preset paperPreset(std::string name, int nLayer, int64_t micro, int64_t accumulation, double lr, double minLr,
                   int64_t warmup, int64_t maxSteps, std::array<int64_t, 7> groups, double lambda,
                   double momentum) {
  Preset p;
  p.name = std::move(name);
  p.description = "the paper's schedule for " + p.name + " (Table 4): " + std::to_string(micro) + "×" +
                  std::to_string(accumulation) + " sequences of 1024 tokens per step";
  p.nLayer = nLayer;
  p.optimizer.microBatch = micro;
  p.optimizer.accumulation = accumulation;
  p.optimizer.context = 1024;
  p.optimizer.lr = lr;
  p.optimizer.minLr = minLr;
  p.optimizer.warmupSteps = warmup;
  p.optimizer.maxSteps = maxSteps;
  p.removal.auxWeight = lambda;
  p.removal.emaMomentum = momentum;
  const auto [mlp, mlpGap, qk, qkGap, v, vGap, f] = groups;
  p.schedule =
      numbered({layerGroup(SiteKind::Mlp, mlp, mlpGap, nLayer), layerGroup(SiteKind::Qk, qk, qkGap, nLayer),
                layerGroup(SiteKind::V, v, vGap, nLayer), layerGroup(SiteKind::Final, f, 0, nLayer)});
  return p;
}

// A preset for small models: the paper's order and λ = 0.1, k = 0.9, 32 sequences per step, LR 6e-4 → 6e-5
// after 20 steps of warmup, the schedule's groups in the given order.
Preset shortPreset(std::string name, std::string description, int nLayer, int64_t context, int64_t maxSteps,
                   std::vector<std::vector<ScheduleEvent>> groups) {
  Preset p;
  p.name = std::move(name);
  p.description = std::move(description);
  p.nLayer = nLayer;
  p.optimizer.microBatch = 32;
  p.optimizer.accumulation = 1;
  p.optimizer.context = context;
  p.optimizer.lr = 6e-4;
  p.optimizer.minLr = 6e-5;
  p.optimizer.warmupSteps = 20;
  p.optimizer.maxSteps = maxSteps;
  p.removal.auxWeight = 0.1;
  p.removal.emaMomentum = 0.9;
  p.schedule = numbered(std::move(groups));
  return p;
}

struct DepthRule {
  int64_t start, mlpGap, qkGap, vGap;
};

DepthRule depthRule(int nLayer) {
  if (nLayer <= 24) return {20, 2, 2, 3};
  return {nLayer <= 36 ? 30 : 50, 4, 4, 6};
}

std::vector<Preset> makePresets() {
  std::vector<Preset> all;
  all.push_back(paperPreset("gpt2", 12, 32, 16, 6e-4, 3e-4, 25, 300, {20, 2, 44, 2, 68, 3, 104}, 0.1, 0.9));
  all.push_back(
      paperPreset("gpt2-medium", 24, 22, 23, 6e-4, 3e-4, 10, 500, {20, 2, 68, 2, 116, 3, 188}, 0.1, 0.9));
  // Large and XL scale k with the micro-batch: 0.9^(micro/32).
  all.push_back(paperPreset("gpt2-large", 36, 28, 18, 3e-4, 4e-5, 15, 1200, {30, 4, 174, 4, 318, 6, 534},
                            0.03, std::pow(0.9, 28.0 / 32)));
  all.push_back(paperPreset("gpt2-xl", 48, 18, 28, 1e-4, 2e-5, 20, 1200, {50, 4, 242, 4, 434, 6, 722}, 0.01,
                            std::pow(0.9, 18.0 / 32)));

  // The blog's v2 recipe for GPT-2 Small: warm up with LN, then whole kinds at once with the special
  // treatments on, then the treatments off; 100 steps between stages; no auxiliary loss (the blog had none).
  Preset blog = all[0];
  blog.name = "blog-v2";
  blog.description =
      "the blog's v2 recipe for GPT-2 Small: ln_2, ln_1 qk, ln_1 v, ln_f (all layers at once) "
      "with position-0 and end-of-text treatments, then EOT off, then position 0 off";
  blog.optimizer.warmupSteps = 25;
  blog.optimizer.maxSteps = 1000;
  blog.removal.auxWeight = 0;
  blog.removal.pos0Treatment = true;
  blog.removal.eotTreatment = true;
  blog.schedule = numbered({layerGroup(SiteKind::Mlp, 300, 0, 12),
                            layerGroup(SiteKind::Qk, 400, 0, 12),
                            layerGroup(SiteKind::V, 500, 0, 12),
                            layerGroup(SiteKind::Final, 600, 0, 12),
                            {{0, 700, EventAction::EndEotTreatment, SiteKind::V, -1}},
                            {{0, 800, EventAction::EndPos0Treatment, SiteKind::Mlp, -1},
                             {0, 800, EventAction::EndPos0Treatment, SiteKind::Qk, -1},
                             {0, 800, EventAction::EndPos0Treatment, SiteKind::V, -1},
                             {0, 800, EventAction::EndPos0Treatment, SiteKind::Final, -1}}});
  all.push_back(blog);

  // The bundled tiny model (4 layers): the paper's order and λ, short gaps, fits in minutes on a laptop.
  all.push_back(
      shortPreset("tiny",
                  "the bundled tiny GPT-2 (4 layers): LN_mlp, LN_qk, LN_v one layer every 10 steps, "
                  "LN_f, then recovery; 32×128 tokens per step",
                  4, 128, 500,
                  {layerGroup(SiteKind::Mlp, 40, 10, 4), layerGroup(SiteKind::Qk, 90, 10, 4),
                   layerGroup(SiteKind::V, 140, 10, 4), layerGroup(SiteKind::Final, 190, 0, 4)}));
  // 6-layer models of 256 tokens (tools/small-models-sweep.sh): gaps and recovery scaled to the depth; a
  // minute on a GPU, about an hour on two cores.
  all.push_back(shortPreset("small",
                            "6-layer models of 256 tokens (the small-models sweep): LN_mlp, LN_qk one layer "
                            "every 15 steps, LN_v every 20, LN_f, then recovery; 32×256 tokens per step",
                            6, 256, 800,
                            {layerGroup(SiteKind::Mlp, 60, 15, 6), layerGroup(SiteKind::Qk, 170, 15, 6),
                             layerGroup(SiteKind::V, 280, 20, 6), layerGroup(SiteKind::Final, 430, 0, 6)}));
  // Their 12-layer siblings: the same 800 steps, twice the sites, so shorter gaps within a kind.
  all.push_back(shortPreset("small-12",
                            "12-layer models of 256 tokens (the small-models sweep): LN_mlp, LN_qk one layer "
                            "every 10 steps, LN_v every 15, LN_f, then recovery; 32×256 tokens per step",
                            12, 256, 800,
                            {layerGroup(SiteKind::Mlp, 60, 10, 12), layerGroup(SiteKind::Qk, 200, 10, 12),
                             layerGroup(SiteKind::V, 340, 15, 12), layerGroup(SiteKind::Final, 560, 0, 12)}));

  // Appendix C removes LayerNorm from Pythia-70M (6 blocks) without giving its schedule: GPT-2 Small's
  // settings, with the depth rule's schedule for 6 blocks.
  Preset pythia = all[0];
  pythia.name = "pythia-70m";
  pythia.description =
      "Pythia-70M (Appendix C): GPT-2 Small's settings, the schedule by the depth rule for 6 blocks "
      "(LN_mlp from step 20, LN_qk from 32, LN_v from 44, LN_f at 62)";
  pythia.nLayer = 6;
  pythia.schedule = scheduleForDepth(6);
  pythia.optimizer.maxSteps = stepsForDepth(6);
  all.push_back(pythia);

  Preset byDepth = all[0];
  byDepth.name = "by-depth";
  byDepth.description =
      "any model: GPT-2 Small's settings with the paper's schedule rule for the model's depth (the rule "
      "that gives Table 4's schedules for 12 to 48 blocks)";
  byDepth.nLayer = 0;
  byDepth.schedule = {};
  all.push_back(byDepth);
  return all;
}

}  // namespace

Schedule scheduleForDepth(int nLayer) {
  const DepthRule r = depthRule(nLayer);
  const int64_t qk = r.start + r.mlpGap * nLayer, v = qk + r.qkGap * nLayer, final = v + r.vGap * nLayer;
  return numbered({layerGroup(SiteKind::Mlp, r.start, r.mlpGap, nLayer),
                   layerGroup(SiteKind::Qk, qk, r.qkGap, nLayer), layerGroup(SiteKind::V, v, r.vGap, nLayer),
                   layerGroup(SiteKind::Final, final, 0, nLayer)});
}

int64_t stepsForDepth(int nLayer) {
  const DepthRule r = depthRule(nLayer);
  const int64_t last = r.start + (r.mlpGap + r.qkGap + r.vGap) * nLayer;
  return std::max<int64_t>(300, (last * 5 / 2 + 99) / 100 * 100);
}

Schedule presetSchedule(const Preset& preset, int nLayer) {
  return preset.nLayer == 0 ? scheduleForDepth(nLayer) : preset.schedule;
}

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = makePresets();
  return all;
}

const Preset& findPreset(const std::string& name) {
  std::string names;
  for (const auto& p : presets()) {
    if (p.name == name) return p;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  throw std::invalid_argument("unknown preset '" + name + "' (known: " + names + ")");
}

const Preset& presetForDepth(int nLayer) {
  for (const Preset& p : presets())
    if (p.nLayer == nLayer) return p;
  return findPreset("by-depth");
}

}  // namespace nf

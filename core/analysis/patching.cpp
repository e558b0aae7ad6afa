#include "analysis/patching.h"

#include <torch/torch.h>

#include <algorithm>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/analysis_kernels.h"
#include "analysis/ioi_runs.h"
#include "io/json_read.h"
#include "model/causal_lm.h"

namespace nf {
namespace {

std::vector<std::string> positionLabels(const IoiPromptSet& set) {
  std::vector<std::string> labels;
  for (int64_t p = 0; p < set.length; ++p) {
    std::string label = std::to_string(p);
    if (p == set.firstNamePosition) label += " name1";
    if (p == set.secondNamePosition) label += " name2";
    if (p == set.subjectPosition) label += " S2";
    if (p == set.endPosition) label += " end";
    labels.push_back(label);
  }
  return labels;
}

}  // namespace

std::vector<double> PatchingGrid::error() const {
  std::vector<double> e(activation.size());
  for (size_t i = 0; i < e.size(); ++i) e[i] = attribution[i] - activation[i];
  return e;
}

PatchingResult ioiPatching(const ModelSnapshot& snapshot, const IoiPromptSet& set,
                           const PatchingOptions& options, const ProgressFn& progress) {
  CausalLMImpl& model = snapshot.model();
  const int L = model.config().nLayer, H = model.config().nHead;
  const int64_t T = set.length;
  IoiRuns runs(model, set);
  const int64_t totalSteps = 2 + L * (options.headPositions ? 3 : 2);
  int64_t stepsDone = 0;
  auto report = [&](const std::string& what) {
    ++stepsDone;
    if (progress) progress({"patching", stepsDone, totalSteps, "passes", stepsDone == totalSteps, what});
  };

  // Clean run: the activations to patch in.
  HookSet clean;
  for (int l = 0; l < L; ++l) clean.cache(HookPoint::residPre(l)), clean.cache(HookPoint::headOut(l));
  double ldClean = 0;
  {
    torch::NoGradGuard noGrad;
    ldClean = runs.logitDifference(runs.cleanTokens, &clean).item<double>();
  }
  report("clean run");

  // Corrupted run with gradients with respect to every patched activation (a zero added to each), even
  // when the caller runs under a no-grad guard.
  torch::AutoGradMode gradients(true);
  std::map<HookPoint, torch::Tensor> deltas, corruptedValues;
  HookSet corrupted;
  for (int l = 0; l < L; ++l)
    for (const HookPoint& point : {HookPoint::residPre(l), HookPoint::headOut(l)})
      corrupted.edit(point, [&](const torch::Tensor& value, const HookPoint& p) {
        corruptedValues[p] = value.detach();
        deltas[p] = torch::zeros_like(value).set_requires_grad(true);
        return value + deltas[p];
      });
  const torch::Tensor ldCorruptedTensor = runs.logitDifference(runs.corruptedTokens, &corrupted);
  ldCorruptedTensor.sum().backward();
  const double ldCorrupted = ldCorruptedTensor.item<double>();
  report("corrupted run and backward");
  const double range = ldClean - ldCorrupted;
  if (!(std::abs(range) > 1e-9))
    throw std::runtime_error("the clean and corrupted logit differences are equal (" +
                             std::to_string(ldClean) + "): nothing to patch");

  PatchingResult r;
  r.header = makeHeader("ioi_patching", snapshot, "IOI prompt set (" + set.frame + ")",
                        static_cast<int64_t>(set.prompts.size()), T);
  r.frame = set.frame;
  r.prompts = static_cast<int64_t>(set.prompts.size());
  r.length = T;
  r.firstNamePosition = set.firstNamePosition;
  r.secondNamePosition = set.secondNamePosition;
  r.subjectPosition = set.subjectPosition;
  r.endPosition = set.endPosition;
  r.exampleClean = set.prompts.front().clean;
  r.exampleCorrupted = set.prompts.front().corrupted;
  r.cleanLogitDiff = ldClean;
  r.corruptedLogitDiff = ldCorrupted;

  const std::vector<std::string> positions = positionLabels(set);
  std::vector<std::string> layerLabels, headLabels, layerHeadLabels;
  for (int l = 0; l < L; ++l) {
    layerLabels.push_back("L" + std::to_string(l));
    for (int h = 0; h < H; ++h) layerHeadLabels.push_back("L" + std::to_string(l) + "H" + std::to_string(h));
  }
  for (int h = 0; h < H; ++h) headLabels.push_back("H" + std::to_string(h));
  r.residPre = {"resid_pre", L, T, layerLabels, positions, {}, {}};
  r.heads = {"heads", L, H, layerLabels, headLabels, {}, {}};
  if (options.headPositions)
    r.headPositions = {"head_positions", L * H, T, layerHeadLabels, positions, {}, {}};

  auto normalized = [&](const torch::Tensor& ld) { return toDoubles((ld - ldCorrupted) / range); };
  auto append = [](std::vector<double>& to, const std::vector<double>& values) {
    to.insert(to.end(), values.begin(), values.end());
  };
  const auto boolOptions = torch::TensorOptions().dtype(torch::kBool);
  for (int l = 0; l < L; ++l) {
    const HookPoint resid = HookPoint::residPre(l), head = HookPoint::headOut(l);
    // Attribution: Σ over prompts and d_model of (a_clean − a_corr) · ∂LD/∂a, per cell.
    const torch::Tensor residProduct =
        ((clean.at(resid) - corruptedValues[resid]) * deltas[resid].grad()).sum(-1);
    const torch::Tensor headProduct =
        ((clean.at(head) - corruptedValues[head]) * deltas[head].grad()).sum(-1);
    append(r.residPre.attribution, toDoubles(residProduct.sum(0) / range));                       // [T]
    append(r.heads.attribution, toDoubles(headProduct.sum(std::vector<int64_t>{0, 1}) / range));  // [H]
    if (options.headPositions)
      append(r.headPositions.attribution, toDoubles(headProduct.sum(0).t().contiguous() / range));  // [H, T]

    // Activation: one replica per cell.
    append(r.residPre.activation, normalized(runs.patched(resid, clean.at(resid), torch::eye(T, boolOptions),
                                                          options.maxBatchTokens)));
    report("resid_pre L" + std::to_string(l));
    const torch::Tensor headMasks = torch::eye(H, boolOptions).unsqueeze(1).expand({H, T, H});  // [C=H, T, H]
    append(r.heads.activation,
           normalized(runs.patched(head, clean.at(head), headMasks, options.maxBatchTokens)));
    report("heads L" + std::to_string(l));
    if (options.headPositions) {
      // Cell (h, p) patches head h at position p: masks [H·T, T, H].
      const torch::Tensor cells = torch::eye(H * T, boolOptions).view({H * T, H, T}).transpose(1, 2);
      append(r.headPositions.activation,
             normalized(runs.patched(head, clean.at(head), cells, options.maxBatchTokens)));
      report("head positions L" + std::to_string(l));
    }
  }
  return r;
}

double patchResidPre(const ModelSnapshot& snapshot, const IoiPromptSet& set, int layer,
                     const std::vector<int64_t>& positions) {
  CausalLMImpl& model = snapshot.model();
  IoiRuns runs(model, set);
  torch::NoGradGuard noGrad;
  HookSet clean;
  const HookPoint point = HookPoint::residPre(layer);
  clean.cache(point);
  const double ldClean = runs.logitDifference(runs.cleanTokens, &clean).item<double>();
  const double ldCorrupted = runs.logitDifference(runs.corruptedTokens).item<double>();
  torch::Tensor mask = torch::zeros({1, set.length}, torch::kBool);
  for (int64_t p : positions) mask[0][p] = true;
  const double ld = runs.patched(point, clean.at(point), mask, 1 << 16).item<double>();
  return (ld - ldCorrupted) / (ldClean - ldCorrupted);
}

nlohmann::json toJson(const PatchingResult& r) {
  auto grid = [](const PatchingGrid& g) {
    return nlohmann::json{{"name", g.name},
                          {"rows", g.rows},
                          {"columns", g.columns},
                          {"row_labels", g.rowLabels},
                          {"column_labels", g.columnLabels},
                          {"activation", g.activation},
                          {"attribution", g.attribution},
                          {"error", g.error()}};
  };
  nlohmann::json grids = nlohmann::json::array({grid(r.residPre), grid(r.heads)});
  if (r.headPositions.rows > 0) grids.push_back(grid(r.headPositions));
  return {{"header", toJson(r.header)},
          {"frame", r.frame},
          {"prompts", r.prompts},
          {"length", r.length},
          {"positions",
           {{"name1", r.firstNamePosition},
            {"name2", r.secondNamePosition},
            {"subject2", r.subjectPosition},
            {"end", r.endPosition}}},
          {"example_clean", r.exampleClean},
          {"example_corrupted", r.exampleCorrupted},
          {"clean_logit_diff", r.cleanLogitDiff},
          {"corrupted_logit_diff", r.corruptedLogitDiff},
          {"grids", grids}};
}

PatchingResult patchingResultFromJson(const nlohmann::json& result) {
  return readJson(result, "analysis result", [](const JsonIn& j) {
    PatchingResult r;
    r.header = analysisHeaderFromJson(j["header"]);
    r.frame = j["frame"].text();
    r.prompts = j["prompts"].whole<int64_t>();
    r.length = j["length"].whole<int64_t>();
    const JsonIn positions = j["positions"];
    r.firstNamePosition = positions["name1"].whole<int64_t>();
    r.secondNamePosition = positions["name2"].whole<int64_t>();
    r.subjectPosition = positions["subject2"].whole<int64_t>();
    r.endPosition = positions["end"].whole<int64_t>();
    r.exampleClean = j["example_clean"].wholes<int32_t>();
    r.exampleCorrupted = j["example_corrupted"].wholes<int32_t>();
    r.cleanLogitDiff = j["clean_logit_diff"].real();
    r.corruptedLogitDiff = j["corrupted_logit_diff"].real();
    // error() and gridCsv index by rows and columns: a grid's lists must fit them.
    const std::vector<PatchingGrid> grids = j["grids"].list([](const JsonIn& g) {
      PatchingGrid p;
      p.name = g["name"].text();
      p.rows = g["rows"].whole<int64_t>();
      p.columns = g["columns"].whole<int64_t>();
      p.rowLabels = g["row_labels"].list([](const JsonIn& x) { return x.text(); });
      p.columnLabels = g["column_labels"].list([](const JsonIn& x) { return x.text(); });
      p.activation = g["activation"].reals();
      p.attribution = g["attribution"].reals();
      g["row_labels"].requireSize(p.rows, "rows");
      g["column_labels"].requireSize(p.columns, "columns");
      for (const char* values : {"activation", "attribution"})
        g[values].requireSize(p.rows * p.columns, "rows × columns");  // no overflow: both are list sizes
      return p;
    });
    // Found by name: toJson leaves head_positions out when it was not computed.
    const std::pair<const char*, PatchingGrid*> slots[] = {
        {"resid_pre", &r.residPre}, {"heads", &r.heads}, {"head_positions", &r.headPositions}};
    for (const auto& slot : slots) {
      const auto it = std::find_if(grids.begin(), grids.end(),
                                   [&](const PatchingGrid& g) { return g.name == slot.first; });
      if (it != grids.end())
        *slot.second = *it;
      else if (slot.second != &r.headPositions)
        j["grids"].fail(std::string("a list holding the \"") + slot.first + "\" grid");
    }
    return r;
  });
}

std::string gridCsv(const PatchingGrid& grid, const std::vector<double>& values) {
  std::ostringstream out;
  out << std::setprecision(9) << grid.name;
  for (const std::string& label : grid.columnLabels) out << ',' << label;
  out << '\n';
  for (int64_t row = 0; row < grid.rows; ++row) {
    out << grid.rowLabels[row];
    for (int64_t column = 0; column < grid.columns; ++column)
      out << ',' << values[row * grid.columns + column];
    out << '\n';
  }
  return out.str();
}

}  // namespace nf

// Cost of the two heaviest analyses against a plain forward pass over the same tokens, in the same
// invocation: DLA + DE for every component (heads, MLPs, embeddings, biases) on validation-like sequences,
// and a full resid_pre activation-patching grid (plus the heads grid and attribution patching) on an IOI set.
// Models: the bundled tiny GPT-2 and a random GPT-2-small-shaped one. Prints figures, asserts nothing.
//   bench_analysis [--device cpu|cuda] [--prompts N] [--sequences S] [--length T] [--skip-small]
//                  [--skip-tiny] [--small-sequences S (default: S / 4)]
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "analysis/logit_attribution.h"
#include "analysis/patching.h"
#include "data/ioi.h"
#include "model/causal_lm.h"
#include "model/hf_checkpoint.h"

namespace {

double seconds(const std::function<void()>& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void bench(const std::string& label, nf::CausalLMImpl& model, const nf::IoiPromptSet& set, int64_t sequences,
           int64_t length) {
  const auto snapshot = nf::ModelSnapshot::copyOf(model, -1, label);
  nf::CausalLMImpl& m = snapshot->model();
  const nf::ModelShape& c = m.config();
  nf::TokenSequences data;
  data.count = sequences;
  data.length = std::min<int64_t>(length, c.nPositions);
  auto gen = at::detail::createCPUGenerator(1);
  const torch::Tensor tokens =
      torch::randint(0, std::min(c.vocabSize, 2048), {sequences, data.length}, gen, torch::kLong);
  data.tokens.assign(tokens.data_ptr<int64_t>(), tokens.data_ptr<int64_t>() + tokens.numel());
  const double tokenCount = static_cast<double>(sequences * data.length);

  torch::NoGradGuard noGrad;
  m.forward(tokens.slice(0, 0, 1).to(m.device()));  // warm-up
  // In batches of 8 sequences: all logits of 1000 × 512 GPT-2 tokens would need ~100 GB.
  const double forward = seconds([&] {
    for (int64_t first = 0; first < sequences; first += 8)
      m.forward(tokens.slice(0, first, std::min(sequences, first + 8)).to(m.device())).sum().item<double>();
  });
  nf::AttributionOptions options;
  options.bootstrapSamples = 1000;
  const double dla = seconds([&] { nf::logitAttribution(*snapshot, data, options); });
  const int components = c.nLayer * c.nHead + 1 + 2 * c.nLayer;
  std::printf(
      "%-22s DLA+DE  %3lld × %4lld tokens, %3d components: %8.2f s  %9.0f tok/s   plain forward %7.3f s  "
      "(ratio %.0f)\n",
      label.c_str(), static_cast<long long>(sequences), static_cast<long long>(data.length), components, dla,
      tokenCount / dla, forward, dla / forward);

  std::vector<int64_t> ids;
  for (const auto& p : set.prompts) ids.insert(ids.end(), p.corrupted.begin(), p.corrupted.end());
  const torch::Tensor prompts =
      torch::tensor(ids).view({static_cast<int64_t>(set.prompts.size()), set.length});
  const double promptForward = seconds([&] { m.forward(prompts.to(m.device())).sum().item<double>(); });
  nf::PatchingOptions patching;
  patching.headPositions = false;
  const double grid = seconds([&] { nf::ioiPatching(*snapshot, set, patching); });
  const int64_t cells = c.nLayer * set.length + c.nLayer * c.nHead;
  std::printf(
      "%-22s patching %3zu prompts × %lld tokens: resid_pre %d×%lld + heads %d×%d = %lld cells and "
      "attribution: %7.2f s   one forward of the set %.4f s  (%.2f forwards per cell)\n",
      label.c_str(), set.prompts.size(), static_cast<long long>(set.length), c.nLayer,
      static_cast<long long>(set.length), c.nLayer, c.nHead, static_cast<long long>(cells), grid,
      promptForward, grid / promptForward / static_cast<double>(cells));
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as soon as it is measured
  std::string device = "cpu";
  int64_t prompts = 96, sequences = 8, length = 128, smallSequences = 0;
  bool skipSmall = false, skipTiny = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--skip-small" || a == "--skip-tiny") {
      (a == "--skip-small" ? skipSmall : skipTiny) = true;
      continue;
    }
    if (i + 1 >= argc) break;
    const std::string v = argv[++i];
    if (a == "--device")
      device = v;
    else if (a == "--prompts")
      prompts = std::stoll(v);
    else if (a == "--sequences")
      sequences = std::stoll(v);
    else if (a == "--length")
      length = std::stoll(v);
    else if (a == "--small-sequences")
      smallSequences = std::stoll(v);
  }
  const std::string bundled = std::string(NF_SOURCE_DIR) + "/resources/tiny-gpt2";
  nf::IoiOptions ioi;
  ioi.count = prompts;
  const nf::IoiPromptSet set = nf::makeIoiPromptSet(*nf::loadTokenizer(bundled), ioi);
  std::printf("bench_analysis: device %s, ATen threads %d\n", device.c_str(), at::get_num_threads());

  if (!skipTiny) {
    nf::CausalLM tiny = nf::loadModel(bundled, torch::Device(device));
    bench("bundled tiny (4L d128)", *tiny, set, sequences, length);
  }
  if (!skipSmall) {
    nf::ModelShape small;  // GPT-2 small's shape, random weights
    nf::CausalLM model = nf::makeModel(small);
    model->initWeights(0);
    model->to(torch::Device(device));
    bench("GPT-2 small shape", *model, set,
          smallSequences > 0 ? smallSequences : std::max<int64_t>(1, sequences / 4), length);
  }
  return 0;
}

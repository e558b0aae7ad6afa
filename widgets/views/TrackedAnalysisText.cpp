#include "views/TrackedAnalysisText.h"

QString TrackedAnalysisText::title(const std::string& name) {
  if (name == "nmae") return tr("NMAE of DLA (%)");
  if (name == "sinks") return tr("attention sink rate");
  if (name == "pos0-ratio") return tr("position-0 residual norm ratio");
  if (name == "ioi") return tr("IOI logit difference (nats)");
  if (name == "patching-error") return tr("attribution patching error (%)");
  if (name == "confidence") return tr("confidence-neuron effect on entropy (nats)");
  if (name == "val-ce") return tr("cross-entropy on the tracking data (nats)");
  return QString::fromStdString(name);
}

QString TrackedAnalysisText::layer(const std::string& name, int layer, int layers) {
  // The position-0 ratio has one value per resid_pre and one for the final residual.
  if (name == "pos0-ratio" && layer == layers - 1) return tr("final residual");
  return tr("layer %1").arg(layer);
}

// The records of a run's metrics.jsonl and the codes of its warnings, each named once: the trainer writes
// them, and the CLI, the workbench and the steering endpoint read them by these names — a typo is then a
// compile error, not a pane that silently stays empty. A new record type or warning code is added here first;
// their fields are in docs/FORMATS.md. Plain C++: the workbench's Qt-free logic includes it too.
#pragma once
#include <string_view>

namespace nf::record {

inline constexpr char kType[] = "type";  // every record's field naming its kind, one of:

inline constexpr char kStart[] = "start";            // the run began (the first record: format and version)
inline constexpr char kResume[] = "resume";          // it went on from a checkpoint at "step"
inline constexpr char kStep[] = "step";              // one optimizer step: losses, LR, gradient norm, scales
inline constexpr char kEvent[] = "event";            // a removal event applied at the start of "step"
inline constexpr char kEdit[] = "edit";              // a live change of the schedule
inline constexpr char kAutopilot[] = "autopilot";    // the autopilot switched on or off ("enabled")
inline constexpr char kEval[] = "eval";              // an evaluation of one token file
inline constexpr char kTrack[] = "track";            // tracked analyses measured on the model at "step"
inline constexpr char kCheckpoint[] = "checkpoint";  // a checkpoint written
inline constexpr char kWarning[] = "warning";        // something a watcher should know ("code", "message")
inline constexpr char kDivergence[] = "divergence";  // a diverged loss caught before its update
inline constexpr char kRollback[] = "rollback";      // training went back to a sane checkpoint
inline constexpr char kPause[] = "pause";            // held between two steps
inline constexpr char kContinue[] = "continue";      // training again after a pause
inline constexpr char kStop[] = "stop";              // stopped before the last step, with a checkpoint
inline constexpr char kFinish[] = "finish";          // every step done, the final model written

// Whether a record of this type says what the run is doing now (the last one of them is its state).
inline bool isRunStatus(std::string_view type) {
  return type == kStart || type == kResume || type == kPause || type == kContinue || type == kStop ||
         type == kFinish;
}

}  // namespace nf::record

namespace nf::warning_code {

inline constexpr char kCheckpointFailed[] = "checkpoint_failed";  // a periodic checkpoint was not written
inline constexpr char kLowDiskSpace[] = "low_disk_space";         // the run's disk is filling up
inline constexpr char kTrackingFailed[] = "tracking_failed";      // a tracked analysis could not be measured
inline constexpr char kMetricsLost[] =
    "metrics_lost";                                 // a resumed run's log is shorter than at its checkpoint
inline constexpr char kSitesKept[] = "sites_kept";  // a removal's schedule never makes these sites fake
inline constexpr char kTreatmentsLeftOn[] =
    "treatments_left_on";  // a removal's schedule never switches off a treatment it uses
inline constexpr char kEndOfTextDiffers[] =
    "end_of_text_differs";  // a removal's training data ends documents with another id than the model's

}  // namespace nf::warning_code

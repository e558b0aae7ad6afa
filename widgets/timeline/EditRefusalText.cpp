#include "timeline/EditRefusalText.h"

namespace {

QString str(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

QString EditRefusalText::of(const nf::ScheduleProblem& p) {
  using Code = nf::ScheduleProblem::Code;
  const QString where = tr("event %1 (%2): ").arg(p.eventId).arg(str(p.event));
  switch (p.code) {
    case Code::DuplicateId:
      return where + tr("the id is used twice");
    case Code::NegativeStep:
      return where + tr("the step is negative");
    case Code::PastLastStep:
      return where + tr("step %1 is past the last step %2").arg(p.step).arg(p.limit);
    case Code::LayerOutOfRange:
      return where + tr("layer %1 is out of range (the model has %2 layers)").arg(p.layer).arg(p.limit);
    case Code::EotTreatmentNotOnV:
      return where + tr("the end-of-text treatment exists on LN_v only");
    case Code::SiteAlreadyChanged:
      return where + (p.makeFake ? tr("%1 is already made fake at step %2")
                                 : tr("%1 is already switched off at step %2"))
                         .arg(str(p.site))
                         .arg(p.firstStep);
    case Code::TreatmentNotUsed:
      return where + (p.makeFake
                          ? tr("the run does not use the position-0 treatment, so there is nothing to "
                               "switch off")
                          : tr("the run does not use the end-of-text treatment, so there is nothing to "
                               "switch off"));
    case Code::SiteNeverFake:
      if (p.firstStep >= 0)
        return where + tr("%1 is made fake only at step %2, so it has no treatment yet to switch off")
                           .arg(str(p.site))
                           .arg(p.firstStep);
      return where + tr("%1 is never made fake, so it never gets a treatment to switch off").arg(str(p.site));
  }
  return where;
}

QString EditRefusalText::of(const nf::EditResult& result) {
  if (result.accepted || !result.refusal) return QString();
  const nf::EditRefusal& r = *result.refusal;
  using Code = nf::EditRefusal::Code;
  switch (r.code) {
    case Code::NoSuchEvent:
      return tr("there is no event %1").arg(r.eventId);
    case Code::EventAlreadyApplied:
      return tr("event %1 (%2) has already been applied").arg(r.eventId).arg(str(r.event));
    case Code::StepAlreadyStarted:
      return tr("step %1 has already started: an edit can reach step %2 or later")
          .arg(r.step)
          .arg(r.runStep + 1);
    case Code::InvalidSchedule: {
      QStringList lines;
      for (const nf::ScheduleProblem& p : r.problems) lines << of(p);
      return lines.join('\n');
    }
    case Code::Failed:
      return str(r.detail);  // a file error: its path and the system's message
    case Code::NotEditable:
      return tr("this run is trained by another process (followed through its files); edit it where it runs");
  }
  return str(result.reason);
}

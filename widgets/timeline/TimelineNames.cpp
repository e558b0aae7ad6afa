#include "timeline/TimelineNames.h"

#include <QStringList>
#include <algorithm>

QString TimelineNames::rowName(int row) {
  switch (row) {
    case 0:
      return QStringLiteral("LN_mlp");
    case 1:
      return QStringLiteral("LN_qk");
    case 2:
      return QStringLiteral("LN_v");
    case 3:
      return QStringLiteral("LN_f");
    default:
      return tr("treatments");
  }
}

QColor TimelineNames::rowColor(int row) {
  static const QColor colors[] = {QColor(0x1f77b4), QColor(0xff7f0e), QColor(0x2ca02c), QColor(0xd62728),
                                  QColor(0x9467bd)};
  return colors[std::clamp(row, 0, 4)];
}

// An event's sites as the engine names them: "LN_v.1", "LN_mlp.all", "LN_f".
QString TimelineNames::sitesOf(const nf::ScheduleEvent& e) {
  QString sites = QString::fromStdString(nf::siteKindName(e.site));
  if (e.site != nf::SiteKind::Final)
    sites += e.layer < 0 ? QStringLiteral(".all") : QStringLiteral(".%1").arg(e.layer);
  return sites;
}

// What an event changes, as a sentence's subject: "LN_v.1", "the end of LN_mlp.all's position-0 treatment".
QString TimelineNames::subjectOf(const nf::ScheduleEvent& e) {
  switch (e.action) {
    case nf::EventAction::EndPos0Treatment:
      return tr("the end of %1's position-0 treatment").arg(sitesOf(e));
    case nf::EventAction::EndEotTreatment:
      return tr("the end of %1's end-of-text treatment").arg(sitesOf(e));
    case nf::EventAction::MakeFake:
      break;
  }
  return sitesOf(e);
}

// Several events' subjects: the first three, then how many more.
QString TimelineNames::subjectsOf(const std::vector<nf::ScheduleEvent>& events) {
  constexpr size_t kNamed = 3;
  QStringList names;
  for (size_t i = 0; i < events.size() && i < kNamed; ++i) names << subjectOf(events[i]);
  QString text = names.join(QStringLiteral(", "));
  if (events.size() > kNamed) text += tr(" and %n more", "", static_cast<int>(events.size() - kNamed));
  return text;
}

QString TimelineNames::happeningOf(const nf::ScheduleEvent& e) {
  switch (e.action) {
    case nf::EventAction::EndPos0Treatment:
      return tr("the position-0 treatment of %1 ends at step %2").arg(sitesOf(e)).arg(e.step);
    case nf::EventAction::EndEotTreatment:
      return tr("the end-of-text treatment of %1 ends at step %2").arg(sitesOf(e)).arg(e.step);
    case nf::EventAction::MakeFake:
      break;
  }
  return tr("%1 becomes fake at step %2").arg(sitesOf(e)).arg(e.step);
}

QString TimelineNames::layerLabel(const nf::ScheduleEvent& e) {
  if (e.action == nf::EventAction::EndPos0Treatment) return QStringLiteral("0");
  if (e.action == nf::EventAction::EndEotTreatment) return QStringLiteral("E");
  if (e.site == nf::SiteKind::Final) return QStringLiteral("f");
  return e.layer < 0 ? QStringLiteral("∀") : QString::number(e.layer);
}

#include "views/ModelInfoView.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace {

// Numbers read the same in both languages, as the plots and every other pane show them: a decimal point,
// and narrow spaces between thousands ("1 071 872": German's "1.071.872" beside "s = 2.151" read as two
// kinds of point, and "4,3 MB" beside "2.381 nats" as two kinds of decimal).
QString groupedCount(int64_t count) {
  QString digits = QString::number(count);
  for (int i = static_cast<int>(digits.size()) - 3; i > (count < 0 ? 1 : 0); i -= 3)
    digits.insert(i, QChar(0x202F));
  return digits;
}

// One colour per normalization kind, so the grid reads at a glance which sites are still real.
QColor kindColor(const std::string& kind) {
  if (kind == "layernorm" || kind == "rmsnorm") return QColor(0xd6, 0xe4, 0xf5);
  if (kind == "fakeln" || kind == "fakerms") return QColor(0xc8, 0xe6, 0xc9);
  if (kind == "identity") return QColor(0xee, 0xee, 0xee);
  return QColor(0xff, 0xe0, 0xb2);  // layernorm_scaling
}

}  // namespace

QString normKindLabel(const std::string& kind) {
  if (kind == "layernorm") return ModelInfoView::tr("LayerNorm");
  if (kind == "fakeln") return ModelInfoView::tr("FakeLN");
  if (kind == "rmsnorm") return ModelInfoView::tr("RMSNorm");
  if (kind == "fakerms") return ModelInfoView::tr("FakeRMSNorm");
  if (kind == "layernorm_scaling") return ModelInfoView::tr("LN Scaling");
  return ModelInfoView::tr("Identity");
}

ModelInfoView::ModelInfoView(QWidget* parent) : QWidget(parent) {
  m_title = new QLabel(this);
  m_title->setWordWrap(true);
  QFont big = m_title->font();
  big.setPointSizeF(big.pointSizeF() * 1.4);
  big.setBold(true);
  m_title->setFont(big);
  m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_shape = new QLabel(this);
  m_shape->setWordWrap(true);  // a long shape line must not widen the dock
  m_shape->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_normState = new QLabel(this);
  m_normState->setWordWrap(true);
  m_sites = new QTableWidget(this);
  m_sites->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_sites->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_sites->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_title);
  layout->addWidget(m_shape);
  layout->addWidget(m_normState);
  layout->addWidget(m_sites, 1);
  retranslate();
}

void ModelInfoView::showRunElsewhere(const QString& run, const QString& where) {
  clear();
  m_elsewhereRun = run;
  m_elsewhere = where;
  retranslate();
}

QString ModelInfoView::titleText() const { return m_title->text(); }

void ModelInfoView::clear() {
  m_elsewhereRun.clear();
  m_elsewhere.clear();
  m_hasSummary = false;
  m_hasRun = false;
  m_summary = {};
  retranslate();
}

void ModelInfoView::setSummary(const nf::ModelSummary& summary) {
  m_elsewhereRun.clear();
  m_elsewhere.clear();
  m_summary = summary;
  m_hasSummary = true;
  m_hasRun = false;
  m_frozen.clear();
  retranslate();
}

void ModelInfoView::showRunState(const std::map<std::string, double>& frozenScales, int64_t step) {
  const bool sitesChanged = !m_hasRun || frozenScales != m_frozen;
  m_hasRun = true;
  m_frozen = frozenScales;
  m_runStep = step;
  if (sitesChanged)
    retranslate();  // the table too
  else
    m_normState->setText(stateText());  // only the step moved: the table (and its scroll) stay
}

QString ModelInfoView::normName() const {
  for (const nf::SiteSummary& site : m_summary.sites)
    if (site.kind == "rmsnorm" || site.kind == "fakerms") return tr("RMSNorm");
  return tr("LayerNorm");
}

QString ModelInfoView::stateText() const {
  if (m_hasRun)
    return m_realSites == 0 ? tr("<b>At step %1 of the run: %2-free</b> — every site has a frozen scale.")
                                  .arg(m_runStep)
                                  .arg(normName())
                            : tr("<b>At step %1 of the run:</b> %2 of %3 sites still normalize per token.")
                                  .arg(m_runStep)
                                  .arg(m_realSites)
                                  .arg(m_summary.sites.size());
  if (m_summary.layerNormFree)
    return tr("%1-free: no site divides by a per-token statistic.").arg(normName());
  return tr(
      "Normalization per site (LN_qk and LN_v are the attention norm as seen by queries/keys and by "
      "values):");
}

void ModelInfoView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QWidget::changeEvent(event);
}

void ModelInfoView::retranslate() {
  m_sites->clear();
  if (!m_hasSummary && !m_elsewhere.isEmpty()) {
    m_title->setText(m_elsewhereRun.isEmpty() ? tr("Connecting to %1…").arg(m_elsewhere) : m_elsewhereRun);
    m_shape->setText(tr("This run's model is on the machine that trains it (%1), not in a folder here: its "
                        "removal events are on the timeline, its losses and scales on the plots, and the "
                        "analysis panes compute on that machine.")
                         .arg(m_elsewhere));
    m_normState->clear();
    m_sites->setRowCount(0);
    m_sites->setColumnCount(0);
    return;
  }
  if (!m_hasSummary) {
    m_title->setText(tr("No model open"));
    m_shape->setText(
        tr("Open a model folder (Hugging Face layout of GPT-2, Pythia, LLaMA or Qwen2: config.json and "
           "safetensors) with File › Open Model Folder…"));
    m_normState->clear();
    m_sites->setRowCount(0);
    m_sites->setColumnCount(0);
    return;
  }
  const nf::ModelSummary& s = m_summary;
  // In a run, the pane shows the run's model, not the folder it started from (that one is unchanged).
  m_title->setText(m_hasRun ? tr("The run's model, started from %1").arg(QString::fromStdString(s.folder))
                            : QString::fromStdString(s.folder));
  m_shape->setText(tr("%9 · %1 layers · %2 heads · d_model %3 · context %4 · vocabulary %5 · %6 parameters · "
                      "%7 MB in %8 file(s)")
                       .arg(s.shape.nLayer)
                       .arg(s.shape.nHead)
                       .arg(s.shape.nEmbd)
                       .arg(s.shape.nPositions)
                       .arg(s.shape.vocabSize)
                       .arg(groupedCount(s.parameterCount))
                       .arg(s.weightBytes / 1e6, 0, 'f', 1)
                       .arg(s.weightFiles.size())
                       .arg(QString::fromStdString(s.shape.family)));
  // A run's sites: those its events made fake so far take their frozen scale.
  std::vector<nf::SiteSummary> sites = s.sites;
  int real = 0;
  for (nf::SiteSummary& site : sites) {
    if (const auto frozen = m_frozen.find(site.site); m_hasRun && frozen != m_frozen.end()) {
      if (site.kind == "layernorm") site.kind = "fakeln";
      if (site.kind == "rmsnorm") site.kind = "fakerms";
      site.scale = frozen->second;
    }
    real += site.kind == "layernorm" || site.kind == "rmsnorm";
  }
  m_realSites = real;
  m_normState->setText(stateText());

  // Rows: blocks, then the final LN; columns: the three per-block sites.
  m_sites->setColumnCount(3);
  m_sites->setHorizontalHeaderLabels({tr("LN_qk"), tr("LN_v"), tr("LN_mlp")});
  m_sites->horizontalHeaderItem(0)->setToolTip(tr("ln_1 as seen by the queries and keys"));
  m_sites->horizontalHeaderItem(1)->setToolTip(tr("ln_1 as seen by the values"));
  m_sites->horizontalHeaderItem(2)->setToolTip(tr("ln_2, before the MLP"));
  m_sites->setRowCount(s.shape.nLayer + 1);
  QStringList rows;
  for (int l = 0; l < s.shape.nLayer; ++l) rows << tr("block %1").arg(l);
  rows << tr("final (LN_f)");
  m_sites->setVerticalHeaderLabels(rows);
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const nf::SiteSummary& site = sites[i];
    const bool isFinal = site.site == "LN_f";
    const int row = isFinal ? s.shape.nLayer : static_cast<int>(i / 3);
    const int column = isFinal ? 0 : static_cast<int>(i % 3);
    QString text = normKindLabel(site.kind);
    if (site.kind == "fakeln" || site.kind == "fakerms") {
      text += "\n" + tr("s = %1").arg(site.scale, 0, 'g', 4);  // a second line: the columns are narrow
      if (site.pos0Treatment) text += tr(" · pos 0: %1").arg(site.scalePos0, 0, 'g', 4);
      if (site.eotTreatment) text += tr(" · EOT");
    }
    auto* item = new QTableWidgetItem(text);
    item->setBackground(kindColor(site.kind));
    item->setForeground(Qt::black);
    item->setToolTip(QString::fromStdString(site.site));
    m_sites->setItem(row, column, item);
  }
  if (s.shape.nLayer >= 0) m_sites->setSpan(s.shape.nLayer, 0, 1, 3);
}

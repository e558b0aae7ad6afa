#include "analysis/TokensPane.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>
#include <cmath>
#include <stdexcept>

#include "analysis/TokenViews.h"
#include "io/json_read.h"

TokensPane::TokensPane(AnalysisRunner* runner, QWidget* parent) : AnalysisPane(runner, "tokens", parent) {
  m_sequence = new QSpinBox(this);
  m_sequence->setRange(0, 4095);  // until a result says how many sequences there are
  m_sequence->setKeyboardTracking(false);
  const QString firstHeads = QStringLiteral("L0H0, L0H1"), firstHead = QStringLiteral("L0H0");
  m_heads = new QLineEdit(firstHeads, this);
  m_component = new QLineEdit(firstHead, this);
  m_component->setMaximumWidth(80);
  m_exportPatterns = new QPushButton(this);
  m_exportText = new QPushButton(this);
  connect(m_sequence, qOverload<int>(&QSpinBox::valueChanged), this, [this] { refresh(); });
  connect(m_heads, &QLineEdit::editingFinished, this, [this] { refresh(); });
  connect(m_component, &QLineEdit::editingFinished, this, [this] { refresh(); });
  // The heads and sequence named are a model's: another may lack them (every compute had failed on them,
  // their fields hidden on the page shown before a result).
  connect(runner, &AnalysisRunner::modelReplaced, this, [this, firstHeads, firstHead] {
    const QSignalBlocker quiet(m_sequence);
    m_sequence->setValue(0);
    m_heads->setText(firstHeads);
    m_component->setText(firstHead);
  });
  auto* controls = new QHBoxLayout;
  controls->addWidget(m_sequence);
  controls->addWidget(m_heads, 1);
  controls->addWidget(m_component);
  body()->addLayout(controls);

  m_patterns = new AttentionGrid(this);
  m_locked = new QLabel(this);
  m_locked->setWordWrap(true);
  connect(m_patterns, &AttentionGrid::lockChanged, this,
          [this] { m_locked->setText(m_patterns->lockedText()); });
  m_dlaTitle = new QLabel(this);
  m_deTitle = new QLabel(this);
  for (QLabel* title : {m_dlaTitle, m_deTitle}) title->setWordWrap(true);  // side by side in a narrow dock
  m_dla = new TokenText(this);
  m_de = new TokenText(this);
  auto* exports = new QHBoxLayout;
  exports->addWidget(m_exportPatterns);
  exports->addWidget(m_exportText);
  exports->addStretch(1);
  connect(m_exportPatterns, &QPushButton::clicked, this, [this] {
    if (hasResult()) exportInteractively(resultFigures()[0], this);
  });
  connect(m_exportText, &QPushButton::clicked, this, [this] {
    if (hasResult()) exportInteractively(resultFigures()[1], this);
  });
  body()->addWidget(m_patterns);
  body()->addWidget(m_locked);
  // DLA and DE side by side: the same text, the same colour scale.
  auto* texts = new QHBoxLayout;
  auto* dlaColumn = new QVBoxLayout;
  dlaColumn->addWidget(m_dlaTitle);
  dlaColumn->addWidget(m_dla);
  dlaColumn->addStretch(1);
  auto* deColumn = new QVBoxLayout;
  deColumn->addWidget(m_deTitle);
  deColumn->addWidget(m_de);
  deColumn->addStretch(1);
  texts->addLayout(dlaColumn, 1);
  texts->addLayout(deColumn, 1);
  body()->addLayout(texts);
  body()->addLayout(exports);
  body()->addStretch(1);
  retranslate();
}

std::vector<std::pair<int, int>> TokensPane::parseHeads(const QString& text) {
  static const QRegularExpression head(QStringLiteral(R"(^\s*(?:L(\d+)H(\d+)|(\d+)\.(\d+))\s*$)"),
                                       QRegularExpression::CaseInsensitiveOption);
  std::vector<std::pair<int, int>> heads;
  for (const QString& part : text.split(QRegularExpression("[,;]"), Qt::SkipEmptyParts)) {
    const QRegularExpressionMatch m = head.match(part);
    if (!m.hasMatch())
      throw std::invalid_argument(
          tr("'%1' is not a head: write L1H2 or 1.2").arg(part.trimmed()).toStdString());
    const bool named = !m.captured(1).isEmpty();
    heads.emplace_back(m.captured(named ? 1 : 3).toInt(), m.captured(named ? 2 : 4).toInt());
  }
  return heads;
}

void TokensPane::setHeads(const QString& heads) {
  m_heads->setText(heads);
  refresh();
}

void TokensPane::setComponent(int layer, int head) {
  m_component->setText(QString("L%1H%2").arg(layer).arg(head));
  refresh();
}

void TokensPane::setSequence(int sequence) { m_sequence->setValue(sequence); }

AnalysisWork TokensPane::makeWork() {
  QPointer<TokensPane> self(this);
  const int64_t sequence = m_sequence->value();
  const QString headsText = m_heads->text(), componentText = m_component->text();
  return [self, sequence, headsText, componentText](const AnalysisInputs& in,
                                                    const nf::ProgressFn& progress) -> std::function<void()> {
    const std::vector<std::pair<int, int>> component = parseHeads(componentText);
    if (component.size() != 1)
      throw std::invalid_argument(tr("name one head whose DLA and DE colour the text").toStdString());
    nf::AnalysisRequest request = in.request("tokens");
    request.length = 0;  // the whole context
    request.traceSequence = std::min<int64_t>(sequence, in.sequences - 1);
    request.sequences = request.traceSequence + 1;
    std::tie(request.traceLayer, request.traceHead) = component.front();
    request.heads = parseHeads(headsText);
    const nlohmann::json r = in.run(request, "now", progress);
    const std::vector<int32_t> ids = r.at("tokens").get<std::vector<int32_t>>();
    const std::vector<std::string> texts = AnalysisInputs::sentTexts(r, "token_texts", ids);
    auto tokens = std::make_shared<QStringList>();
    for (const std::string& t : texts) *tokens << QString::fromStdString(t);
    auto heads = std::make_shared<std::vector<AttentionGrid::Head>>();
    for (const nlohmann::json& p : r.at("patterns"))
      heads->push_back({QString("L%1H%2").arg(p.at("layer").get<int>()).arg(p.at("head").get<int>()),
                        p.at("pattern").get<std::vector<double>>()});
    const auto dla = std::make_shared<std::vector<double>>(r.at("dla").get<std::vector<double>>());
    const auto de = std::make_shared<std::vector<double>>(r.at("de").get<std::vector<double>>());
    // The grid indexes a pattern by query and key when it paints (a served result, of another build perhaps).
    for (const AttentionGrid::Head& h : *heads)
      if (h.pattern.size() != ids.size() * ids.size())
        throw std::invalid_argument("the tokens result's pattern of " + h.name.toStdString() + " holds " +
                                    std::to_string(h.pattern.size()) + " values, not " +
                                    std::to_string(ids.size()) + "² for its tokens");
    const nf::AnalysisHeader header = nf::analysisHeaderFromJson(r.at("header"));
    const QString name = QString("L%1H%2").arg(request.traceLayer).arg(request.traceHead);
    const int64_t sequences = in.sequences, shownSequence = request.traceSequence;
    return [self, tokens, heads, dla, de, header, name, sequences, shownSequence] {
      if (!self) return;
      {
        const QSignalBlocker block(self->m_sequence);  // a new range is not a request for a new sequence
        self->m_sequence->setRange(0, static_cast<int>(sequences - 1));
        self->m_sequence->setValue(static_cast<int>(shownSequence));
      }
      self->m_patterns->show(*tokens, *heads);
      double range = 0;  // one scale for DLA and DE, so one colour is one value in both
      for (const auto* values : {dla.get(), de.get()})
        for (double v : *values) range = std::max(range, std::abs(v));
      self->m_dla->show(*tokens, *dla, range, tr("DLA"));
      self->m_de->show(*tokens, *de, range, tr("DE"));
      self->m_dlaTitle->setText(tr("<b>%1's DLA</b> (cached final scale) per predicted token").arg(name));
      self->m_deTitle->setText(tr("<b>%1's direct effect</b> (final norm recomputed)").arg(name));
      self->showHeader(header.step, header.model, header.norms, header.data);
    };
  };
}

QList<AnalysisPane::PaintedFigure> TokensPane::resultFigures() const {
  if (!hasResult()) return {};
  return {
      {"tokens_patterns", tr("Tokens: attention patterns"),
       [this](const QString& path, QString* error) {
         return m_patterns->exportTo(path, error, provenance());
       }},
      {"tokens_dla", tr("Tokens: text by DLA"),
       [this](const QString& path, QString* error) { return m_dla->exportTo(path, error, provenance()); }},
      {"tokens_de", tr("Tokens: text by direct effect"),
       [this](const QString& path, QString* error) { return m_de->exportTo(path, error, provenance()); }}};
}

QString TokensPane::description() const {
  return tr(
      "One validation sequence whole, as CircuitsVis draws a prompt: the attention patterns of the "
      "heads named over the full context (hover a cell for its weight; click to lock a query row in "
      "every head), and the text coloured by one head's direct logit attribution and, beside it, its "
      "direct effect on one diverging scale.");
}

void TokensPane::retranslate() {
  AnalysisPane::retranslate();
  m_sequence->setToolTip(tr("the validation sequence shown"));
  m_heads->setToolTip(tr("heads whose attention patterns are drawn, e.g. L1H2, L2H3 (at most 16)"));
  m_component->setToolTip(tr("the head whose DLA and direct effect colour the text"));
  m_exportPatterns->setText(tr("Export patterns…"));
  m_exportText->setText(tr("Export DLA text…"));
  m_exportPatterns->setToolTip(tr("SVG (one vector rectangle per cell), PNG or CSV"));
  m_exportText->setToolTip(tr("SVG, PNG or CSV of the text coloured by DLA"));
  m_locked->setText(m_patterns->lockedText());
}

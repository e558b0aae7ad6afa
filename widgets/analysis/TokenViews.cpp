#include "analysis/TokenViews.h"

#include <QBuffer>
#include <QFileInfo>
#include <QImage>
#include <QMouseEvent>
#include <QPainter>
#include <QSvgGenerator>
#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <functional>

#include "io/atomic_file.h"
#include "views/Plots.h"

namespace {

constexpr int kTitle = 18, kGap = 10;  // a panel's title row; the space between panels

// Attention: white at 0, dark blue at 1.
QColor weightColour(double w) {
  const double t = std::clamp(w, 0.0, 1.0);
  return QColor::fromRgbF(1 - t * (1 - 0.03), 1 - t * (1 - 0.19), 1 - t * (1 - 0.42));
}

// Signed values: blue below zero, white at zero, red above, full at ±range.
QColor signedColour(double v, double range) {
  const double t = range > 0 ? std::clamp(v / range, -1.0, 1.0) : 0;
  const QColor end = t < 0 ? QColor(0x21, 0x66, 0xac) : QColor(0xb2, 0x18, 0x2b);
  const double a = std::abs(t);
  return QColor::fromRgbF(1 - a * (1 - end.redF()), 1 - a * (1 - end.greenF()), 1 - a * (1 - end.blueF()));
}

QString shown(const QString& token) {  // a token as text shows it: spaces and line breaks visible
  QString t = token;
  t.replace('\n', QStringLiteral("⏎"));
  return t.isEmpty() ? QStringLiteral("∅") : t;
}

// Writes what `paint` draws at `width` × `height` as .svg (vector) or .png, or `csv` as .csv; atomically.
bool exportPainted(const QString& path, int width, int height, const std::function<void(QPainter&)>& paint,
                   const QString& csv, const QStringList& provenance, QString* error) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  const QString source = provenance.join("; ");
  QByteArray bytes;
  if (suffix == "csv") {
    for (const QString& line : provenance) bytes += ("# " + line + "\n").toUtf8();  // a reader skips them
    bytes += csv.toUtf8();
  } else if (suffix == "svg") {
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(QSize(width, height));
    svg.setViewBox(QRect(0, 0, width, height));
    svg.setDescription(source.isEmpty() ? QStringLiteral("NormFree Workbench")
                                        : QStringLiteral("NormFree Workbench: ") + source);
    QPainter painter(&svg);
    paint(painter);
  } else if (suffix == "png") {
    QImage image(width * 2, height * 2, QImage::Format_ARGB32);
    image.fill(Qt::white);
    {
      QPainter painter(&image);
      painter.scale(2, 2);  // a print-quality raster
      paint(painter);
    }
    image.setText("Software", "NormFree Workbench");
    if (!source.isEmpty()) image.setText("Source", source);
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
  } else {
    if (error) *error = QObject::tr("unknown format '%1' (svg, png or csv)").arg(suffix);
    return false;
  }
  try {
    nf::writeFileAtomic(path.toStdString(), bytes.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------

AttentionGrid::AttentionGrid(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

void AttentionGrid::show(const QStringList& tokens, std::vector<Head> heads) {
  m_tokens = tokens;
  m_heads = std::move(heads);
  m_locked = -1;
  updateGeometry();
  update();
  Q_EMIT lockChanged();
}

int AttentionGrid::columns() const { return std::max(1, std::min(2, headCount())); }

QRectF AttentionGrid::panel(int head, int width) const {
  const int cols = columns();
  const double side = std::max(40.0, (width - (cols - 1) * kGap) / static_cast<double>(cols));
  const int row = head / cols, col = head % cols;
  return {col * (side + kGap), row * (side + kTitle + kGap) + kTitle, side, side};
}

int AttentionGrid::heightForWidth(int width) const {
  if (m_heads.empty()) return 0;
  const QRectF last = panel(headCount() - 1, width);
  return static_cast<int>(std::ceil(last.bottom())) + 2;
}

double AttentionGrid::weight(int head, int query, int key) const {
  return m_heads[static_cast<std::size_t>(head)].pattern[static_cast<std::size_t>(query) * length() + key];
}

QString AttentionGrid::cellText(int head, int query, int key) const {
  return tr("%1 · query %2 '%3' → key %4 '%5': %6")
      .arg(m_heads[static_cast<std::size_t>(head)].name)
      .arg(query)
      .arg(shown(m_tokens[query]))
      .arg(key)
      .arg(shown(m_tokens[key]))
      .arg(weight(head, query, key), 0, 'f', 3);
}

QString AttentionGrid::lockedText() const {
  if (m_locked < 0) return tr("Click a cell to lock its query row in every head.");
  QStringList most;
  for (int h = 0; h < headCount(); ++h) {
    int best = 0;
    for (int k = 1; k <= m_locked; ++k)
      if (weight(h, m_locked, k) > weight(h, m_locked, best)) best = k;
    most << tr("%1 → '%2' %3")
                .arg(m_heads[h].name, shown(m_tokens[best]))
                .arg(weight(h, m_locked, best), 0, 'f', 2);
  }
  return tr("Query %1 '%2' attends most to: %3 (click it again to unlock)")
      .arg(m_locked)
      .arg(shown(m_tokens[m_locked]), most.join(", "));
}

void AttentionGrid::lockQuery(int query) {
  m_locked = query >= 0 && query < length() ? query : -1;
  update();
  Q_EMIT lockChanged();
}

AttentionGrid::Cell AttentionGrid::cellAt(const QPointF& point) const {
  for (int h = 0; h < headCount(); ++h) {
    const QRectF r = panel(h, width());
    if (!r.contains(point) || length() == 0) continue;
    const double cell = r.width() / length();
    return {h, std::min(length() - 1, static_cast<int>((point.y() - r.top()) / cell)),
            std::min(length() - 1, static_cast<int>((point.x() - r.left()) / cell))};
  }
  return {};
}

void AttentionGrid::paint(QPainter& painter, int width) const {
  const int n = length();
  for (int h = 0; h < headCount(); ++h) {
    const QRectF r = panel(h, width);
    painter.setPen(palette().color(QPalette::WindowText));
    painter.drawText(QRectF(r.left(), r.top() - kTitle, r.width(), kTitle), Qt::AlignLeft | Qt::AlignVCenter,
                     tr("%1 (row: query, column: key)").arg(m_heads[h].name));
    const double cell = r.width() / std::max(1, n);
    painter.setPen(Qt::NoPen);
    for (int q = 0; q < n; ++q)
      for (int k = 0; k <= q; ++k) {  // causal: nothing above the diagonal
        painter.setBrush(weightColour(weight(h, q, k)));
        painter.drawRect(QRectF(r.left() + k * cell, r.top() + q * cell, cell, cell));
      }
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(QColor(0x99, 0x99, 0x99), 0.5));
    painter.drawRect(r);
    if (m_locked >= 0) {
      painter.setPen(QPen(QColor(0xff, 0x8c, 0x00), 1.5));
      painter.drawRect(QRectF(r.left(), r.top() + m_locked * cell, r.width(), cell));
    }
  }
}

void AttentionGrid::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  paint(painter, width());
}

void AttentionGrid::mouseMoveEvent(QMouseEvent* event) {
  const Cell c = cellAt(event->position());
  if (c.head < 0 || c.key > c.query)
    QToolTip::hideText();
  else
    QToolTip::showText(event->globalPosition().toPoint(), cellText(c.head, c.query, c.key), this);
}

void AttentionGrid::mousePressEvent(QMouseEvent* event) {
  const Cell c = cellAt(event->position());
  if (c.head >= 0) lockQuery(c.query == m_locked ? -1 : c.query);
}

bool AttentionGrid::exportTo(const QString& path, QString* error, const QStringList& provenance) const {
  QString csv = "head,query,key,query_token,key_token,weight\n";
  for (int h = 0; h < headCount(); ++h)
    for (int q = 0; q < length(); ++q)
      for (int k = 0; k <= q; ++k)
        csv += QString("%1,%2,%3,%4,%5,%6\n")
                   .arg(m_heads[h].name)
                   .arg(q)
                   .arg(k)
                   .arg(csvField(m_tokens[q]), csvField(m_tokens[k]))
                   .arg(weight(h, q, k), 0, 'g', 6);
  const int w = std::max(width(), 400);
  return exportPainted(
      path, w, heightForWidth(w), [&](QPainter& p) { paint(p, w); }, csv, provenance, error);
}

// ---------------------------------------------------------------------------------------------------------

TokenText::TokenText(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

void TokenText::show(const QStringList& tokens, const std::vector<double>& values, double range,
                     const QString& what) {
  m_tokens = tokens;
  m_values = values;
  m_range = range;
  m_what = what;
  updateGeometry();
  update();
}

QString TokenText::tokenText(int token) const {
  if (token == 0 || token - 1 >= static_cast<int>(m_values.size()))
    return tr("'%1' (position %2): nothing predicts it").arg(shown(m_tokens[token])).arg(token);
  return tr("'%1' predicted at position %2 · %3 %4")
      .arg(shown(m_tokens[token]))
      .arg(token - 1)
      .arg(m_what)
      .arg(m_values[static_cast<std::size_t>(token - 1)], 0, 'f', 4);
}

std::vector<QRectF> TokenText::layout(int width) const {
  const QFontMetricsF metrics(font());
  const double line = metrics.height() + 6;
  std::vector<QRectF> boxes;
  double x = 0, y = 0;
  for (const QString& token : m_tokens) {
    const double w = metrics.horizontalAdvance(shown(token)) + 4;
    if (x > 0 && x + w > width) {
      x = 0;
      y += line;
    }
    boxes.emplace_back(x, y, w, line - 2);
    x += w + 1;
    if (token.contains('\n')) {  // a line break ends the line, as in the text
      x = 0;
      y += line;
    }
  }
  return boxes;
}

int TokenText::heightForWidth(int width) const {
  const std::vector<QRectF> boxes = layout(width);
  return boxes.empty() ? 0 : static_cast<int>(std::ceil(boxes.back().bottom())) + 2;
}

void TokenText::paint(QPainter& painter, int width) const {
  const std::vector<QRectF> boxes = layout(width);
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const bool valued = i > 0 && i - 1 < m_values.size();
    const QColor fill = valued ? signedColour(m_values[i - 1], m_range) : QColor(0xee, 0xee, 0xee);
    painter.setPen(Qt::NoPen);
    painter.setBrush(fill);
    painter.drawRect(boxes[i]);
    painter.setPen(fill.lightnessF() < 0.45 ? Qt::white : Qt::black);
    painter.drawText(boxes[i], Qt::AlignCenter, shown(m_tokens[static_cast<int>(i)]));
  }
}

void TokenText::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  paint(painter, width());
}

void TokenText::mouseMoveEvent(QMouseEvent* event) {
  const std::vector<QRectF> boxes = layout(width());
  for (std::size_t i = 0; i < boxes.size(); ++i)
    if (boxes[i].contains(event->position())) {
      QToolTip::showText(event->globalPosition().toPoint(), tokenText(static_cast<int>(i)), this);
      return;
    }
  QToolTip::hideText();
}

bool TokenText::exportTo(const QString& path, QString* error, const QStringList& provenance) const {
  QString csv = "position,token," + m_what + "\n";
  for (int i = 0; i < tokenCount(); ++i)
    csv +=
        QString("%1,%2,%3\n")
            .arg(i)
            .arg(csvField(m_tokens[i]))
            .arg(i > 0 && i - 1 < static_cast<int>(m_values.size()) ? QString::number(m_values[i - 1], 'g', 6)
                                                                    : QString());
  const int w = std::max(width(), 400);
  return exportPainted(
      path, w, heightForWidth(w), [&](QPainter& p) { paint(p, w); }, csv, provenance, error);
}

// The Tokens pane's two views of one sequence, painted by hand so that an SVG export has one vector
// rectangle per cell (QCustomPlot draws a colour map as one image):
//   AttentionGrid — several heads' attention patterns over the whole sequence side by side; hover a cell
//                   for its query, key and weight; click one to lock its query row in every head (again:
//                   unlock), as CircuitsVis's attention heads do;
//   TokenText     — the sequence as running text, each token on the colour of its value (diverging, white
//                   at zero); hover a token for its value.
// Both export as SVG (vector cells), PNG or CSV.
#pragma once
#include <QStringList>
#include <QWidget>
#include <vector>

class AttentionGrid : public QWidget {
  Q_OBJECT
 public:
  struct Head {
    QString name;                 // "L1H2"
    std::vector<double> pattern;  // length² weights, row = query position
  };
  explicit AttentionGrid(QWidget* parent = nullptr);
  void show(const QStringList& tokens, std::vector<Head> heads);
  int length() const { return static_cast<int>(m_tokens.size()); }
  int headCount() const { return static_cast<int>(m_heads.size()); }
  double weight(int head, int query, int key) const;
  QString cellText(int head, int query, int key) const;  // what hovering the cell says
  void lockQuery(int query);                             // −1: none
  int lockedQuery() const { return m_locked; }
  QString lockedText() const;  // where the locked query attends most, per head
  // `provenance` ("model: …" lines): in the CSV's '#' lines, the PNG's Source chunk, the SVG's description.
  bool exportTo(const QString& path, QString* error, const QStringList& provenance = {}) const;
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;
  QSize sizeHint() const override { return {420, heightForWidth(420)}; }
  QSize minimumSizeHint() const override { return {160, 80}; }  // a narrow dock: the cells shrink

 Q_SIGNALS:
  void lockChanged();

 protected:
  void paintEvent(QPaintEvent*) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  struct Cell {
    int head = -1, query = -1, key = -1;
  };
  int columns() const;
  QRectF panel(int head, int width) const;  // the head's square of cells
  Cell cellAt(const QPointF& point) const;
  void paint(class QPainter& painter, int width) const;
  QStringList m_tokens;
  std::vector<Head> m_heads;
  int m_locked = -1;
};

class TokenText : public QWidget {
  Q_OBJECT
 public:
  explicit TokenText(QWidget* parent = nullptr);
  // values[i] belongs to token i + 1 (the token predicted at position i); `range`: the value drawn at full
  // colour (one range for views that compare); `what` names the values in hover text ("DLA").
  void show(const QStringList& tokens, const std::vector<double>& values, double range, const QString& what);
  int tokenCount() const { return static_cast<int>(m_tokens.size()); }
  QString tokenText(int token) const;  // what hovering the token says
  bool exportTo(const QString& path, QString* error, const QStringList& provenance = {}) const;  // as above
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;
  QSize sizeHint() const override { return {420, heightForWidth(420)}; }
  QSize minimumSizeHint() const override { return {120, 40}; }  // the text wraps

 protected:
  void paintEvent(QPaintEvent*) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  std::vector<QRectF> layout(int width) const;  // one box per token
  void paint(class QPainter& painter, int width) const;
  QStringList m_tokens;
  std::vector<double> m_values;
  double m_range = 1;
  QString m_what;
};

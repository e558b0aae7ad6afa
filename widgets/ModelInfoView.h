// Shows a model folder's shape and the normalization of every LN site (a layer × site grid).
#pragma once
#include <QWidget>

#include "model/model_folder.h"

class QLabel;
class QTableWidget;

class ModelInfoView : public QWidget {
  Q_OBJECT
 public:
  explicit ModelInfoView(QWidget* parent = nullptr);
  void setSummary(const nf::ModelSummary& summary);
  void clear();
  QTableWidget* siteTable() const { return m_sites; }
  const nf::ModelSummary& summary() const { return m_summary; }

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void retranslate();
  QLabel* m_title;
  QLabel* m_shape;
  QLabel* m_normState;
  QTableWidget* m_sites;
  nf::ModelSummary m_summary;
  bool m_hasSummary = false;
};

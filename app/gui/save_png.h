// Screenshots are written whole or not at all, like every file we write: a PNG cut short by a full disk or
// a killed window would otherwise sit under its name for docs/figures/screenshots.sh to publish.
#pragma once
#include <QPixmap>
#include <QSaveFile>
#include <QString>

inline bool savePng(const QPixmap& image, const QString& path) {
  QSaveFile file(path);
  return file.open(QIODevice::WriteOnly) && image.save(&file, "PNG") && file.commit();
}

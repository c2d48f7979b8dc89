// The window's files go through the core's one write path (core/io/atomic_file.h): plots
// and screenshots are rendered into memory first, then written atomically, so a full disk
// or a killed run never leaves a truncated PNG/PDF in place of the old file, and a device
// or a symbolic link stays what it is.
#pragma once

#include <QByteArray>
#include <QString>

#include <string>

class QCustomPlot;
class QTableWidget;
class QWidget;

namespace shardlab::ui {

// A QString path as the file system's bytes (QFile::encodeName), for the core's functions.
std::string localPath(const QString& path);

// Writes `bytes` to `path`; false with "FILE: reason" in *error (if given).
bool writeFileBytes(const QString& path, const QByteArray& bytes, QString* error = nullptr);

// The plot at width x height: PNG (at `pngScale`) or PDF by the extension, false with the
// reason for any other extension or a failed write. A non-empty `caption` (what the plot
// shows, the scenario, the plan, the date) is drawn as a header row of the exported file
// only; the plot on screen is left as it was.
bool savePlot(QCustomPlot* plot, const QString& path, int width, int height, double pngScale,
              QString* error = nullptr, const QString& caption = {});

// A table as a PNG or PDF page by the extension: `caption` on top, then the header and every
// row (none scrolled off), each cell as the table shows it (its text, alignment, font and
// colour), columns as wide as their widest text. False with the reason otherwise.
bool saveTable(const QTableWidget* table, const QString& path, const QString& caption, QString* error = nullptr);

// A PNG (or another image format Qt writes, by the extension) of the widget as shown.
bool saveScreenshot(QWidget* widget, const QString& path, QString* error = nullptr);

} // namespace shardlab::ui

// Save dialogs that ask about the files really written. Qt's static getSaveFileName asks
// about overwriting the name as typed ("plan"), after which a ".json" added by the caller
// would replace "plan.json" unasked; files written beside the chosen one (a plot's parts, a
// second CSV) are never asked about at all.
#pragma once

#include <QString>
#include <QStringList>

class QWidget;

namespace shardlab::ui {

// The save dialog with the selected filter's extension ("*.json" → "json") added to a name
// typed without one before the dialog asks about overwriting, so its question is about the
// file written. "" when cancelled.
QString askSaveFileName(QWidget* parent, const QString& title, const QString& suggested, const QString& filter);

// Asks once before existing files the dialog did not name would be replaced: true when
// none of `files` exists or the user agrees.
bool confirmReplacing(QWidget* parent, const QStringList& files);

} // namespace shardlab::ui

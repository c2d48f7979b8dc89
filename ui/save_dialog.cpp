#include "save_dialog.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QRegularExpression>

namespace shardlab::ui {

namespace {

// "PNG image (*.png)" → "png"; "" when the filter names no single extension.
QString filterSuffix(const QString& filter)
{
    const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("\\(\\*\\.([A-Za-z0-9]+)")).match(filter);
    return m.hasMatch() ? m.captured(1) : QString();
}

// The files of `files` that exist, which writing would replace.
QStringList existingFiles(const QStringList& files)
{
    QStringList out;
    for (const QString& f : files)
        if (QFileInfo::exists(f))
            out << f;
    return out;
}

} // namespace

QString askSaveFileName(QWidget* parent, const QString& title, const QString& suggested, const QString& filter)
{
    QFileDialog dialog(parent, title, QFileInfo(suggested).path(), filter);
    dialog.setAcceptMode(QFileDialog::AcceptSave);
    // Qt's own dialog: a platform one (GTK's) asks about the name as typed and never sees
    // the default suffix, so "plan" would ask about plan and write plan.json unasked.
    dialog.setOption(QFileDialog::DontUseNativeDialog);
    dialog.setFileMode(QFileDialog::AnyFile);
    dialog.selectFile(QFileInfo(suggested).fileName());
    dialog.setDefaultSuffix(filterSuffix(dialog.selectedNameFilter()));
    QObject::connect(&dialog, &QFileDialog::filterSelected, &dialog,
                     [&dialog](const QString& f) { dialog.setDefaultSuffix(filterSuffix(f)); });
    if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty())
        return {};
    return dialog.selectedFiles().front();
}

bool confirmReplacing(QWidget* parent, const QStringList& files)
{
    const QStringList existing = existingFiles(files);
    if (existing.isEmpty())
        return true;
    QStringList names;
    for (const QString& f : existing)
        names << QFileInfo(f).fileName();
    const auto answer = QMessageBox::question(
        parent, QObject::tr("Replace files?"),
        QObject::tr("Writing these beside the file you named would replace %n existing file(s): %1. Replace them?",
                    nullptr, int(existing.size()))
            .arg(names.join(QStringLiteral(", "))),
        QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
    return answer == QMessageBox::Yes;
}

} // namespace shardlab::ui

#include "file_export.h"

#include <QBuffer>
#include <QFile>
#include <QFileInfo>
#include <QImageWriter>
#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QWidget>

#include "io/atomic_file.h"
#include "qcp.h"

namespace shardlab::ui {

namespace {

bool failWith(QString* error, const QString& text)
{
    if (error)
        *error = text;
    return false;
}

QString shownPath(const QString& path) { return QString::fromStdString(displayText(localPath(path))); }

QByteArray imageBytes(const QImage& image, const QByteArray& format)
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, format.constData()))
        return {};
    return bytes;
}

// The plot as a one-page vector PDF that looks like its PNG export: the writer's
// resolution is the PNG's 96 dpi and the page is width x height of those pixels, so the
// painter's window maps one to one onto the page and a font of N points takes the same
// share of the page as in the PNG. (QPdfWriter's default 1200 dpi with a page of width
// points resolved fonts at 1200 dpi, then scaled the drawing: text ~16x too large.)
QByteArray pdfBytes(QCustomPlot* plot, int width, int height)
{
    constexpr int kDpi = 96;
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    {
        QPdfWriter writer(&buffer);
        writer.setCreator(QStringLiteral("ShardLab"));
        writer.setResolution(kDpi);
        writer.setPageLayout(QPageLayout(QPageSize(QSizeF(width * 72.0 / kDpi, height * 72.0 / kDpi),
                                                   QPageSize::Point, QString(), QPageSize::ExactMatch),
                                         QPageLayout::Portrait, QMarginsF(0, 0, 0, 0), QPageLayout::Point));
        QCPPainter painter;
        if (!painter.begin(&writer))
            return {};
        painter.setMode(QCPPainter::pmVectorized);
        painter.setMode(QCPPainter::pmNoCaching);
        painter.setWindow(QRect(0, 0, width, height));
        plot->toPainter(&painter, width, height);
        painter.end();
    }
    return bytes;
}

} // namespace

std::string localPath(const QString& path) { return QFile::encodeName(path).toStdString(); }

bool writeFileBytes(const QString& path, const QByteArray& bytes, QString* error)
{
    const Status st = writeFileAtomically(localPath(path), std::string_view(bytes.constData(), size_t(bytes.size())));
    if (!st.ok())
        return failWith(error, QString::fromStdString(st.error->toString()));
    return true;
}

bool savePlot(QCustomPlot* plot, const QString& path, int width, int height, double pngScale, QString* error,
              const QString& caption)
{
    const QString ext = QFileInfo(path).suffix().toLower();
    if (ext != QLatin1String("png") && ext != QLatin1String("pdf"))
        return failWith(error, shownPath(path) + QStringLiteral(": plots are saved as .png or .pdf"));
    // The header row exists only while the file is rendered.
    QCPTextElement* header = nullptr;
    if (!caption.isEmpty()) {
        plot->plotLayout()->insertRow(0);
        QFont f = plot->font();
        f.setPointSizeF(f.pointSizeF() * 0.9);
        header = new QCPTextElement(plot, caption, f);
        header->setTextColor(QColor(0x37, 0x47, 0x4f));
        header->setMargins(QMargins(8, 6, 8, 2));
        plot->plotLayout()->addElement(0, 0, header);
        plot->plotLayout()->setRowStretchFactor(0, 0.001);
    }
    struct RemoveHeader {
        QCustomPlot* plot;
        QCPTextElement* header;
        ~RemoveHeader()
        {
            if (!header)
                return;
            plot->plotLayout()->remove(header);
            plot->plotLayout()->simplify();
            plot->replot(QCustomPlot::rpQueuedReplot);
        }
    } removeHeader{plot, header};
    QByteArray bytes;
    if (ext == QLatin1String("png")) {
        QImage image = plot->toPixmap(width, height, pngScale).toImage();
        // 96 dpi, as QCustomPlot::savePng records it.
        const int dotsPerMeter = qRound(96 / 0.0254);
        image.setDotsPerMeterX(dotsPerMeter);
        image.setDotsPerMeterY(dotsPerMeter);
        bytes = imageBytes(image, "PNG");
    } else if (ext == QLatin1String("pdf")) {
        bytes = pdfBytes(plot, width, height);
    } else {
        return failWith(error, shownPath(path) + QStringLiteral(": plots are saved as .png or .pdf"));
    }
    if (bytes.isEmpty())
        return failWith(error, shownPath(path) + QStringLiteral(": could not render the plot"));
    return writeFileBytes(path, bytes, error);
}

bool saveScreenshot(QWidget* widget, const QString& path, QString* error)
{
    QByteArray format = QFileInfo(path).suffix().toLower().toLatin1();
    if (format.isEmpty() || !QImageWriter::supportedImageFormats().contains(format))
        format = "png"; // as QPixmap::save would guess for an unknown extension: PNG is safe
    const QByteArray bytes = imageBytes(widget->grab().toImage(), format);
    if (bytes.isEmpty())
        return failWith(error, shownPath(path) + QStringLiteral(": could not encode the screenshot"));
    return writeFileBytes(path, bytes, error);
}

} // namespace shardlab::ui

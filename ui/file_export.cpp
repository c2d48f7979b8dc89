#include "file_export.h"

#include <QBuffer>
#include <QFile>
#include <QFileInfo>
#include <QImageWriter>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QTableWidget>
#include <QWidget>

#include <algorithm>
#include <vector>

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

// A table's text laid out for a page: each column as wide as its widest text.
struct TableLayout {
    QStringList caption;
    std::vector<int> widths;
    int rowHeight = 0, headerHeight = 0, width = 0, height = 0;
    static constexpr int kPad = 6;
};

TableLayout layOut(const QTableWidget* t, const QString& caption, const QFont& font)
{
    TableLayout l;
    const QFontMetrics fm(font);
    QFont bold = font;
    bold.setBold(true);
    const QFontMetrics bm(bold);
    l.caption = caption.split(QLatin1Char('\n'));
    l.rowHeight = fm.height() + 2 * TableLayout::kPad;
    int captionWidth = 0;
    for (const QString& line : l.caption)
        captionWidth = std::max(captionWidth, fm.horizontalAdvance(line));
    int headerLines = 1;
    for (int c = 0; c < t->columnCount(); ++c) {
        const QTableWidgetItem* h = t->horizontalHeaderItem(c);
        int w = 0;
        const QStringList lines = h ? h->text().split(QLatin1Char('\n')) : QStringList();
        for (const QString& line : lines)
            w = std::max(w, bm.horizontalAdvance(line));
        headerLines = std::max(headerLines, int(lines.size()));
        for (int r = 0; r < t->rowCount(); ++r)
            if (const QTableWidgetItem* it = t->item(r, c))
                w = std::max(w, QFontMetrics(it->font()).horizontalAdvance(it->text()));
        l.widths.push_back(w + 2 * TableLayout::kPad);
    }
    int sum = 0;
    for (int w : l.widths)
        sum += w;
    l.width = std::max(sum, captionWidth) + 2 * TableLayout::kPad;
    l.headerHeight = headerLines * bm.height() + 2 * TableLayout::kPad;
    l.height = int(l.caption.size()) * fm.height() + TableLayout::kPad * 2 + l.headerHeight + t->rowCount() * l.rowHeight;
    return l;
}

void paintTable(QPainter& p, const QTableWidget* t, const TableLayout& l, const QFont& font)
{
    p.fillRect(QRect(0, 0, l.width, l.height), Qt::white);
    p.setFont(font);
    p.setPen(QColor(0x37, 0x47, 0x4f));
    const int lineH = QFontMetrics(font).height();
    int y = TableLayout::kPad;
    for (const QString& line : l.caption) {
        p.drawText(QRect(TableLayout::kPad, y, l.width, lineH), Qt::AlignLeft | Qt::AlignVCenter, line);
        y += lineH;
    }
    y += TableLayout::kPad;
    QFont bold = font;
    bold.setBold(true);
    for (int r = -1; r < t->rowCount(); ++r) {
        int x = TableLayout::kPad;
        for (int c = 0; c < t->columnCount(); ++c) {
            const QTableWidgetItem* it = r < 0 ? t->horizontalHeaderItem(c) : t->item(r, c);
            const QRect cell(x, y, l.widths[c], r < 0 ? l.headerHeight : l.rowHeight);
            p.setPen(QColor(0xd5, 0xdb, 0xe0));
            p.drawRect(cell);
            if (it) {
                p.setFont(r < 0 ? bold : it->font());
                const QVariant fg = it->data(Qt::ForegroundRole);
                p.setPen(r >= 0 && fg.isValid() ? fg.value<QBrush>().color() : QColor(Qt::black));
                const int align = r < 0 ? int(Qt::AlignCenter) : it->textAlignment();
                p.drawText(cell.adjusted(TableLayout::kPad, 0, -TableLayout::kPad, 0),
                           (align ? align : int(Qt::AlignLeft)) | Qt::AlignVCenter, it->text());
            }
            x += l.widths[c];
        }
        y += r < 0 ? l.headerHeight : l.rowHeight;
    }
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

bool saveTable(const QTableWidget* table, const QString& path, const QString& caption, QString* error)
{
    const QString ext = QFileInfo(path).suffix().toLower();
    if (ext != QLatin1String("png") && ext != QLatin1String("pdf"))
        return failWith(error, shownPath(path) + QStringLiteral(": tables are saved as .png or .pdf"));
    const QFont font = table->font();
    const TableLayout l = layOut(table, caption, font);
    QByteArray bytes;
    if (ext == QLatin1String("png")) {
        QImage image(l.width * 2, l.height * 2, QImage::Format_RGB32);
        image.setDevicePixelRatio(2);
        QPainter p(&image);
        paintTable(p, table, l, font);
        p.end();
        bytes = imageBytes(image, "PNG");
    } else {
        // As pdfBytes: 96 dpi and a page of the table's pixels, so text keeps its share.
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        QPdfWriter writer(&buffer);
        writer.setCreator(QStringLiteral("ShardLab"));
        writer.setResolution(96);
        writer.setPageLayout(QPageLayout(QPageSize(QSizeF(l.width * 0.75, l.height * 0.75), QPageSize::Point, QString(),
                                                   QPageSize::ExactMatch),
                                         QPageLayout::Portrait, QMarginsF(0, 0, 0, 0), QPageLayout::Point));
        QPainter p;
        if (p.begin(&writer)) {
            p.setWindow(QRect(0, 0, l.width, l.height));
            paintTable(p, table, l, font);
            p.end(); // writes the whole document into `bytes`
        }
    }
    if (bytes.isEmpty())
        return failWith(error, shownPath(path) + QStringLiteral(": could not render the table"));
    return writeFileBytes(path, bytes, error);
}

} // namespace shardlab::ui

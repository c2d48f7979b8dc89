// A plot exported as PDF reads like its PNG export: its text takes the same share of the
// page. Checked with poppler's pdftotext -bbox (scripts/install-deps.sh installs it) against
// the font metrics the PNG is drawn with.
#include <QtTest>

#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <algorithm>

#include "export_controller.h"
#include "file_export.h"
#include "io/presets.h"
#include "main_window.h"
#include "plan_tables.h"
#include "plan_view.h"
#include "qcp.h"
#include "window_fixtures.h"

using namespace shardlab::ui;
using namespace shardlab;

class TestPlotExport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void exportedPlotsIncludeMemoryAndComparison();
    void pdfTextMatchesThePng()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty())
            QSKIP("pdftotext (poppler-utils) is missing: scripts/install-deps.sh installs it");
        QCustomPlot plot;
        plot.resize(640, 400);
        auto* g = plot.addGraph();
        g->setData({0, 1, 2, 3, 4}, {100, 300, 250, 400, 380});
        plot.xAxis->setLabel(QStringLiteral("calls"));
        plot.yAxis->setLabel(QStringLiteral("throughput"));
        plot.rescaleAxes();
        plot.replot();
        const int width = 640, height = 400;
        QTemporaryDir dir;
        const QString pdf = dir.filePath(QStringLiteral("plot.pdf")), png = dir.filePath(QStringLiteral("plot.png"));
        QString error;
        QVERIFY2(savePlot(&plot, pdf, width, height, 1.0, &error), qPrintable(error));
        QVERIFY2(savePlot(&plot, png, width, height, 1.0, &error), qPrintable(error));
        QCOMPARE(QImage(png).size(), QSize(width, height));

        QProcess p;
        p.start(QStringLiteral("pdftotext"), {QStringLiteral("-bbox"), pdf, QStringLiteral("-")});
        QVERIFY(p.waitForFinished(30000) && p.exitCode() == 0);
        const QString html = QString::fromUtf8(p.readAllStandardOutput());
        const auto page = QRegularExpression(QStringLiteral("<page width=\"([0-9.]+)\" height=\"([0-9.]+)\"")).match(html);
        QVERIFY2(page.hasMatch(), qPrintable(html.left(400)));
        const double pageH = page.captured(2).toDouble();
        // Every tick label and axis label: its height as a share of the page.
        std::vector<double> shares;
        QRegularExpression word(QStringLiteral("<word xMin=\"([0-9.]+)\" yMin=\"([0-9.]+)\" xMax=\"([0-9.]+)\" yMax=\"([0-9.]+)\">"));
        for (auto it = word.globalMatch(html); it.hasNext();) {
            const auto m = it.next();
            shares.push_back((m.captured(4).toDouble() - m.captured(2).toDouble()) / pageH);
        }
        QVERIFY2(shares.size() >= 5, qPrintable(html.left(400)));
        std::nth_element(shares.begin(), shares.begin() + shares.size() / 2, shares.end());
        const double pdfShare = shares[shares.size() / 2];
        // In the PNG, a tick label is one line of the tick label font, drawn on the PNG's
        // own image (96 dpi).
        const QImage image(png);
        const double pngShare = QFontMetricsF(plot.xAxis->tickLabelFont(), &image).height() / height;
        const double ratio = pdfShare / pngShare;
        qInfo("text height / page: PDF %.4f, PNG %.4f, ratio %.3f", pdfShare, pngShare, ratio);
        QVERIFY2(ratio > 0.85 && ratio < 1.15,
                 qPrintable(QStringLiteral("text height / page: PDF %1, PNG font %2 (ratio %3)")
                                .arg(pdfShare).arg(pngShare).arg(ratio)));
    }
};

// File > Export plots writes every plot of the window: the throughput curve, the plan's
// breakdown, its memory chart and its comparison table with the recipe (every row of it,
// beyond what the tab shows), as PNG and as PDF.
void TestPlotExport::exportedPlotsIncludeMemoryAndComparison()
{
    startFreshSession();
    MainWindow w;
    w.setScenario(scenarioPreset("llama3-70b-8gpu").value);
    QVERIFY(runSearch(w, QStringLiteral("anneal"), 300));
    const auto* table = w.planView()->findChild<CompareTable*>();
    QVERIFY(table && table->rowCount() > 5);
    QTemporaryDir dir;
    for (const char* ext : {"png", "pdf"}) {
        QStringList written;
        QString error;
        const QString base = dir.filePath(QStringLiteral("shardlab.") + QLatin1String(ext));
        QVERIFY2(w.exports()->exportPlots(base, &written, &error), qPrintable(error));
        const QStringList parts{QStringLiteral("throughput"), QStringLiteral("plan"), QStringLiteral("memory"),
                                QStringLiteral("comparison")};
        QCOMPARE(written.size(), parts.size());
        for (int i = 0; i < parts.size(); ++i) {
            QCOMPARE(written[i], dir.filePath(QStringLiteral("shardlab-%1.%2").arg(parts[i], QLatin1String(ext))));
            QFile f(written[i]);
            QVERIFY2(f.open(QIODevice::ReadOnly) && f.size() > 1000, qPrintable(written[i]));
            QVERIFY(f.read(5).startsWith(QLatin1String(ext) == QLatin1String("png") ? "\x89PNG" : "%PDF"));
        }
    }
    // The comparison table's image holds the caption, the header and every row.
    const QImage image(dir.filePath(QStringLiteral("shardlab-comparison.png")));
    QVERIFY(!image.isNull());
    const int rowHeight = table->fontMetrics().height();
    QVERIFY2(image.height() / 2 > (table->rowCount() + 2) * rowHeight,
             qPrintable(QStringLiteral("%1 px for %2 rows").arg(image.height()).arg(table->rowCount())));
    QVERIFY(image.width() > 400);
    if (QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty())
        return;
    QProcess p;
    p.start(QStringLiteral("pdftotext"), {dir.filePath(QStringLiteral("shardlab-comparison.pdf")), QStringLiteral("-")});
    QVERIFY(p.waitForFinished(30000) && p.exitCode() == 0);
    // NFKC: the PDF's text may hold ligatures ("ﬀn_norm").
    const QString text = QString::fromUtf8(p.readAllStandardOutput()).normalized(QString::NormalizationForm_KC);
    QVERIFY2(text.contains(QStringLiteral("Megatron")), qPrintable(text.left(400)));
    for (int r = 0; r < table->rowCount(); ++r)
        if (const QTableWidgetItem* it = table->item(r, 0); it && !it->text().isEmpty())
            QVERIFY2(text.contains(it->text().section(QLatin1Char(' '), 0, 0)), qPrintable(it->text()));
}

QTEST_MAIN(TestPlotExport)
#include "tst_plot_export.moc"

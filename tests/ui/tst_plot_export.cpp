// A plot exported as PDF reads like its PNG export: its text takes the same share of the
// page. Checked with poppler's pdftotext -bbox (scripts/install-deps.sh installs it) against
// the font metrics the PNG is drawn with.
#include <QtTest>

#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <algorithm>

#include "file_export.h"
#include "qcp.h"

using namespace shardlab::ui;

class TestPlotExport : public QObject {
    Q_OBJECT
private Q_SLOTS:
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

QTEST_MAIN(TestPlotExport)
#include "tst_plot_export.moc"

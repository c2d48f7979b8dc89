// InferenceX's published concurrency sweeps in the calibration (sim/calibration_rows.cpp,
// ids X*): each row is rebuilt as InferenceX's launch scripts and client ran it (a closed
// loop of C requests, 10 C measured after 2 C warm-ups, lengths uniform in [0.8 L, L], the
// engine's collectives and token budget, a 16-bit KV cache beside FP8 weights), the split
// into fit and held-out rows follows the model, not the figures, and every row is predicted.
#include <QtTest>

#include <cmath>
#include <string>

#include "tst_calibration_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

class TestCalibrationInferenceX : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Every row predicted once (the whole calibration), for the checks below.
    void initTestCase()
    {
        m_rows = calibrationRowsOnH100();
        QVERIFY(!m_rows.empty());
    }
    void casesAsInferenceXRanThem();
    void rowsPredicted();

private:
    std::vector<CalibrationRow> m_rows;
};

namespace {
bool inferencexRow(const CalibrationCase& c)
{
    return c.id.size() > 1 && c.id[0] == 'X' && std::isdigit(static_cast<unsigned char>(c.id[1]));
}
} // namespace

void TestCalibrationInferenceX::casesAsInferenceXRanThem()
{
    int fit = 0, heldOut = 0;
    // Three gpt-oss-120b runs were entered after the floor's scale was chosen: held out.
    const auto enteredLate = [](const std::string& id) {
        return id.rfind("X36", 0) == 0 || id.rfind("X37", 0) == 0 || id.rfind("X38", 0) == 0;
    };
    for (const CalibrationCase& c : calibrationCases()) {
        if (!inferencexRow(c))
            continue;
        const QString id = QString::fromStdString(c.id);
        QCOMPARE(c.load.protocol, LoadProtocol::Concurrency);
        QVERIFY2(c.load.uniformLengths, qPrintable(id));
        // InferenceX's counts are the closed loop's defaults: 10 C measured, 2 C warm-ups.
        QCOMPARE(c.load.measuredRequests(), 10 * c.load.concurrency);
        QCOMPARE(c.load.warmup(), 2 * c.load.concurrency);
        QCOMPARE(c.kvCache16, c.fp8);
        QVERIFY2(!c.publishedSaturated, qPrintable(id));
        if (c.modelPreset == "gpt-oss-120b") {
            const bool late = enteredLate(c.id);
            fit += !late;
            heldOut += late;
            QCOMPARE(c.set, std::string(late ? "held_out_inferencex" : "fit"));
            QVERIFY(c.collectives == CollectiveEngine::Vllm);
            QCOMPARE(c.maxNumTokens, 8192);
            QCOMPARE(c.gpu, std::string("h100"));
        } else {
            ++heldOut;
            QCOMPARE(c.modelPreset, std::string("deepseek-v3"));
            QCOMPARE(c.set, std::string("held_out_inferencex"));
            QVERIFY(c.collectives == CollectiveEngine::Sglang);
            QCOMPARE(c.maxNumTokens, 32768); // --chunked-prefill-size 32768
            QCOMPARE(c.gpu, std::string("h200"));
        }
    }
    QCOMPARE(fit, 27);     // 18 runs: 18 TPOT and 9 throughput figures published
    QCOMPARE(heldOut, 54); // 17 runs with throughput, TTFT and TPOT; 3 with TPOT
}

void TestCalibrationInferenceX::rowsPredicted()
{
    int n = 0;
    for (const CalibrationRow& r : m_rows) {
        if (!inferencexRow(r.c))
            continue;
        ++n;
        const QString id = QString::fromStdString(r.c.id);
        QVERIFY2(r.error.empty(), qPrintable(id + ": " + QString::fromStdString(r.error)));
        QVERIFY2(std::isfinite(r.predicted) && r.predicted > 0, qPrintable(id));
        QCOMPARE(r.ratio, r.predicted / r.c.published);
        // A closed loop never offers more than the engine serves.
        QVERIFY2(!r.saturated, qPrintable(id));
    }
    QCOMPARE(n, 81);
    // A longer prompt waits longer for its first token, in the same engine at the same load.
    const auto ttft = [&](const char* id) { return calibrationRow(m_rows, id).predicted; };
    QVERIFY2(ttft("X13t") > 2 * ttft("X8t"), qPrintable(QString("%1 vs %2").arg(ttft("X13t")).arg(ttft("X8t"))));
}

QTEST_APPLESS_MAIN(TestCalibrationInferenceX)
#include "tst_calibration_inferencex.moc"

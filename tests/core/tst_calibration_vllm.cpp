// The published vLLM runs of the calibration (sim/calibration.h, set "held_out_vllm"): each
// row is built as `vllm serve` starts the engine (its batch capped at max_num_seqs 1024, the
// KV cache in 16 bits beside FP8 weights, collectives vLLM's), run under the benchmark's
// protocol through the request-level model, and a burst of requests sent at once is
// reported saturated.
#include <QtTest>

#include <cmath>

#include "tst_calibration_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

class TestCalibrationVllm : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void casesAsTheEngineRanThem();
    void rowsPredicted();
};

void TestCalibrationVllm::casesAsTheEngineRanThem()
{
    int n = 0;
    for (const CalibrationCase& c : calibrationCases()) {
        if (c.set != "held_out_vllm")
            continue;
        ++n;
        QVERIFY2(c.collectives == CollectiveEngine::Vllm, qPrintable(QString::fromStdString(c.id)));
        QCOMPARE(c.kvCache16, c.fp8); // kv-cache-dtype "auto": 16 bits whatever the weights
        QVERIFY(!c.load.steady());
        QCOMPARE(c.load.warmupRequests, 0);
        QCOMPARE(c.publishedSaturated, c.load.protocol == LoadProtocol::RequestRate);
    }
    QCOMPARE(n, 54); // eighteen runs, each with throughput, TTFT and TPOT
}

void TestCalibrationVllm::rowsPredicted()
{
    const auto rows = calibrationRowsOnH100();
    QVERIFY(!rows.empty());
    auto row = [&](const std::string& id) { return calibrationRow(rows, id); };
    for (const CalibrationRow& r : rows) {
        if (r.c.set != "held_out_vllm")
            continue;
        QVERIFY2(r.error.empty(), qPrintable(QString::fromStdString(r.c.id + ": " + r.error)));
        QVERIFY2(std::isfinite(r.predicted) && r.predicted > 0, qPrintable(QString::fromStdString(r.c.id)));
        QCOMPARE(r.ratio, r.predicted / r.c.published);
        // Every request at t = 0 offers more than any capacity: saturated, as the run was.
        QCOMPARE(r.saturated, r.c.load.protocol == LoadProtocol::RequestRate);
    }
    // Short requests fit more than max_num_seqs sequences: the engine's cap holds.
    QCOMPARE(row("V4x").batchUsed, 1024);
    // 4,200-token requests on DeepSeek-R1 fill the KV cache first: fewer than the cap, and
    // the 2,100-token ones of the same plan about twice as many.
    const int b1 = row("V1x").batchUsed, b2 = row("V2x").batchUsed;
    QVERIFY2(b1 > 0 && b1 < 1024, qPrintable(QString::number(b1)));
    QVERIFY2(b2 > 1.8 * b1 && b2 < 2.2 * b1, qPrintable(QString("%1 vs %2").arg(b2).arg(b1)));
}

QTEST_APPLESS_MAIN(TestCalibrationVllm)
#include "tst_calibration_vllm.moc"

// The published vLLM runs of the calibration (sim/calibration.h, set "held_out_vllm"): each
// row is built as `vllm serve` starts the engine (its batch capped at max_num_seqs 1024, the
// KV cache in 16 bits beside FP8 weights, collectives vLLM's), run under the benchmark's
// protocol through the request-level model, and a burst of requests sent at once is
// reported saturated.
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "tst_calibration_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

class TestCalibrationVllm : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Every row predicted once (the whole calibration, about a second), for the checks below.
    void initTestCase()
    {
        m_rows = calibrationRowsOnH100();
        QVERIFY(!m_rows.empty());
    }
    void casesAsTheEngineRanThem();
    void rowsPredicted();
    void kvCacheAsVllmSizesIt();

private:
    std::vector<CalibrationRow> m_rows;
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
    const auto& rows = m_rows;
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

// V8 (Qwen3-235B, FP8 weights, TP4 on H100, 4000/182): its batch is what vLLM's KV cache holds,
// written out here apart from the core: 0.9 of the GPU less the weights and the start-up
// sampler run (vLLM's default 1,024 dummy requests x the vocabulary x 14 bytes per logit,
// larger than this plan's activations), in 16-bit keys and values of the one KV head each
// GPU keeps, over the request's 4,182 tokens. An FP8 KV cache
// would hold twice as many; the memory model's own 6 GB reserve instead of vLLM's 10 % of
// the GPU, about 14 % more.
void TestCalibrationVllm::kvCacheAsVllmSizesIt()
{
    const auto model = modelPreset("qwen3-235b-a22b");
    const auto cluster = clusterPreset("h100-8");
    QVERIFY(model.ok() && cluster.ok());
    const ModelSpec& m = model.value;
    const double weightsGb = countParameters(m).total * 1.0 / 4 / 1e9; // FP8, split four ways
    const double samplerGb = 1024.0 * m.vocabSize * 14 / 1e9;
    const double roomGb = 0.9 * cluster.value.gpu.hbmGb - weightsGb - samplerGb;
    const double bytesPerToken = 2.0 * m.layers * std::max(1, m.kvHeads / 4) * m.headDim * 2;
    const double expected = roomGb * 1e9 / bytesPerToken / (4000 + 182);
    const auto& rows = m_rows;
    const int batch = calibrationRow(rows, "V8x").batchUsed;
    QVERIFY2(batch >= 0.93 * expected && batch <= 1.02 * expected,
             qPrintable(QString("batch %1, vLLM's KV cache holds %2").arg(batch).arg(expected)));
}

QTEST_APPLESS_MAIN(TestCalibrationVllm)
#include "tst_calibration_vllm.moc"

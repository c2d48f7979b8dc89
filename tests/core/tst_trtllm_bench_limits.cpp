// trtllm-bench's engine limits for a max-throughput run (sim/calibration.h): the request
// count its memory estimate gives, rounded as the tool rounds it, and the token budget,
// each checked against the tool's formula written out here apart from the core's, for
// KV-limited runs small and large, the 4096 cap and a TP group wider than the KV heads;
// the requests each run queued, and the calibration rows predicted as the runs went.
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "io/presets.h"
#include "sim/calibration.h"
#include "tst_calibration_fixtures.h"
#include "tst_launch_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {

// calc_engine_setting's request estimate: 0.95 of (device GiB x TP - weights GB) over the
// bytes of every token's keys and values, at least one KV head per TP rank.
double requests(const Scenario& s, double weightsGb, int tp)
{
    const ModelSpec& m = s.model;
    const double kvBytes = m.kvPrecision == Precision::FP8 ? 1 : 2;
    const double perToken = 2.0 * m.layers * std::max(tp, m.kvHeads) * m.headDim * kvBytes / std::pow(1024.0, 3);
    const double free = s.cluster.gpu.hbmGb * 1e9 / std::pow(1024.0, 3) * tp - weightsGb * tp;
    return 0.95 * free / perToken / (s.workload.promptTokens + s.workload.outputTokens);
}

Scenario llama70b(int isl, int osl, double hbmGb)
{
    Scenario s = launchPreset("llama3-70b-8gpu");
    s.model.kvPrecision = Precision::FP8;
    s.workload.promptTokens = isl;
    s.workload.outputTokens = osl;
    s.cluster.gpu.hbmGb = hbmGb;
    return s;
}

} // namespace

class TestTrtllmBenchLimits : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void fewRequestsRoundToThirtyTwo();
    void hundredsRoundToOneTwentyEight();
    void capAtFourThousand();
    void kvHeadsAtLeastOnePerRank();
    void requestsByLengths();
    void rowsAsTheBenchmarkRanThem();
    void attentionDpRowsRunTheEnginesMode();
};

void TestTrtllmBenchLimits::fewRequestsRoundToThirtyTwo()
{
    const Scenario s = llama70b(20000, 2000, 85.52);
    const double r = requests(s, 35.0, 2);
    QVERIFY2(r > 0 && r < 256, qPrintable(QString::number(r)));
    const TrtllmBenchLimits b = trtllmBenchLimits(s, 35.0, 2);
    QCOMPARE(b.maxBatch, std::max(64, 32 * int(std::ceil(r / 32))));
    // r x 11 tokens is below 4096: rounded to 256, at least 2048.
    QCOMPARE(b.maxNumTokens, std::max(2048, 256 * int(std::ceil(r * 11 / 256))));
}

void TestTrtllmBenchLimits::hundredsRoundToOneTwentyEight()
{
    const Scenario s = llama70b(2048, 128, 85.52);
    const double r = requests(s, 17.6, 4);
    QVERIFY2(r >= 256 && r < 1024, qPrintable(QString::number(r)));
    const TrtllmBenchLimits b = trtllmBenchLimits(s, 17.6, 4);
    QCOMPARE(b.maxBatch, 128 * int(std::ceil(r / 128)));
    const double tokens = std::min(r * 17, 32768.0);
    QVERIFY(tokens >= 8192);
    QCOMPARE(b.maxNumTokens, 1024 * int(std::ceil(tokens / 1024)));
}

void TestTrtllmBenchLimits::capAtFourThousand()
{
    const Scenario s = llama70b(128, 128, 1000.0);
    QVERIFY(requests(s, 9.0, 8) > 4096);
    const TrtllmBenchLimits b = trtllmBenchLimits(s, 9.0, 8);
    QCOMPARE(b.maxBatch, 4096);
    QCOMPARE(b.maxNumTokens, 8192); // 4096 x (1 + 128 / 128)
}

void TestTrtllmBenchLimits::kvHeadsAtLeastOnePerRank()
{
    // Llama-3-70B has 8 KV heads: on 16 ranks each still holds one, so the estimate counts 16.
    Scenario s = llama70b(1000, 1000, 85.52);
    QCOMPARE(s.model.kvHeads, 8);
    const TrtllmBenchLimits eight = trtllmBenchLimits(s, 4.4, 16);
    const double r = requests(s, 4.4, 16);
    QCOMPARE(eight.maxBatch, r < 1024 ? 128 * int(std::ceil(r / 128)) : 256 * int(std::ceil(std::min(r, 4096.0) / 256)));
    s.model.kvHeads = 16;
    QCOMPARE(trtllmBenchLimits(s, 4.4, 16).maxBatch, eight.maxBatch);
}

void TestTrtllmBenchLimits::requestsByLengths()
{
    QCOMPARE(trtllmBenchRequests(128, 128), 30000);
    QCOMPARE(trtllmBenchRequests(128, 2048), 3000);
    QCOMPARE(trtllmBenchRequests(2048, 2048), 1500);
    QCOMPARE(trtllmBenchRequests(20000, 2000), 1000);
    QCOMPARE(trtllmBenchRequests(2000, 20000), 0); // not in the table
}

// As run, a row whose engine batch exceeds its requests never has more than the requests in
// flight, so it serves less than the steady state at that batch; a row of many batches'
// worth of short requests reaches the steady state; a row not run by trtllm-bench has none.
void TestTrtllmBenchLimits::rowsAsTheBenchmarkRanThem()
{
    const auto rows = calibrationRowsOnH100();
    QVERIFY(!rows.empty());
    auto row = [&](const std::string& id) { return calibrationRow(rows, id); };
    const CalibrationRow a16 = row("A16"), h9 = row("H9"), q1 = row("Q1-16x");
    QVERIFY2(a16.batchUsed > 3000, qPrintable(QString::number(a16.batchUsed)));
    QCOMPARE(a16.benchRequests, 3000);
    QVERIFY2(a16.asRunPredicted > 0 && a16.asRunPredicted < 0.97 * a16.predicted,
             qPrintable(QString("%1 vs %2").arg(a16.asRunPredicted).arg(a16.predicted)));
    QCOMPARE(a16.asRunRatio, a16.asRunPredicted / a16.c.published);
    QCOMPARE(h9.benchRequests, 30000);
    QVERIFY2(std::fabs(h9.asRunPredicted / h9.predicted - 1) < 0.03,
             qPrintable(QString("%1 vs %2").arg(h9.asRunPredicted).arg(h9.predicted)));
    QCOMPARE(q1.benchRequests, 0);
    QCOMPARE(q1.asRunPredicted, 0.0);
}

// The rows that ran attention data parallelism are predicted in the engine's attention-DP
// mode (calibrationPlan asks the engine's layout for it), not refused and not run with
// attention by heads.
void TestTrtllmBenchLimits::attentionDpRowsRunTheEnginesMode()
{
    int rows = 0;
    for (const CalibrationRow& r : calibrationRowsOnH100()) {
        if (!r.c.attentionDp)
            continue;
        ++rows;
        QVERIFY2(r.error.empty(), qPrintable(QString::fromStdString(r.c.id + ": " + r.error)));
        QVERIFY2(r.predicted > 0, r.c.id.c_str());
    }
    QCOMPARE(rows, 7); // F6, F7, H23-H26, R1
}

QTEST_APPLESS_MAIN(TestTrtllmBenchLimits)
#include "tst_trtllm_bench_limits.moc"

// The KV cache pool an engine keeps (workload.kv_cache_memory_fraction): the scenario file
// reads, writes and refuses it with the field's path; a pool smaller than the free memory
// lowers the largest batch that fits, the memory breakdown names what is kept out of the
// pool, and at the new limit TensorRT-LLM's own KV room at that fraction holds the cache
// (the engine's rule, written out here apart from the core's).
#include <QtTest>

#include <cmath>
#include <string>

#include "io/scenario_json.h"
#include "model/engine_caps.h"
#include "sim/simulator.h"
#include "tst_launch_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {

std::string withFraction(const Scenario& s, const std::string& value)
{
    std::string text = scenarioToJson(s);
    const std::string key = "\"max_num_tokens\":";
    const size_t at = text.find(key);
    if (at == std::string::npos)
        qFatal("no max_num_tokens in the written scenario");
    text.insert(at, "\"kv_cache_memory_fraction\": " + value + ", ");
    return text;
}

} // namespace

class TestKvPool : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readsAndWritesTheFraction();
    void refusesAFractionOutOfRange_data();
    void refusesAFractionOutOfRange();
    void smallerPoolFitsFewerSequences();
};

void TestKvPool::readsAndWritesTheFraction()
{
    const Scenario s = launchPreset("llama3-70b-8gpu");
    QCOMPARE(s.workload.kvCacheMemoryFraction, 1.0);
    // The default is not written, so files of scenarios that never set it stay as they were.
    QVERIFY(scenarioToJson(s).find("kv_cache_memory_fraction") == std::string::npos);

    const auto parsed = parseScenario(withFraction(s, "0.9"), "pool.json");
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.firstError().c_str());
    QCOMPARE(parsed.value.workload.kvCacheMemoryFraction, 0.9);
    const auto again = parseScenario(scenarioToJson(parsed.value), "again.json");
    QVERIFY(again.ok());
    QCOMPARE(again.value.workload.kvCacheMemoryFraction, 0.9);
}

void TestKvPool::refusesAFractionOutOfRange_data()
{
    QTest::addColumn<QString>("value");
    QTest::newRow("zero") << "0";
    QTest::newRow("above one") << "1.5";
    QTest::newRow("negative") << "-0.2";
    QTest::newRow("a string") << "\"0.9\"";
}

void TestKvPool::refusesAFractionOutOfRange()
{
    QFETCH(QString, value);
    const auto parsed = parseScenario(withFraction(launchPreset("llama3-70b-8gpu"), value.toStdString()), "pool.json");
    QVERIFY(!parsed.ok());
    const std::string e = parsed.firstError();
    QVERIFY2(e.find("pool.json") != std::string::npos, e.c_str());
    QVERIFY2(e.find("workload.kv_cache_memory_fraction") != std::string::npos, e.c_str());
}

void TestKvPool::smallerPoolFitsFewerSequences()
{
    Scenario s = launchPreset("llama3-70b-8gpu");
    const Plan p = megatronLike(2, 1, 4, 1, 1);
    const int whole = atMemoryLimit(s, p).batch;
    s.workload.kvCacheMemoryFraction = kTrtLlmDefaultKvFraction;
    const int pool = atMemoryLimit(s, p).batch;
    QVERIFY2(pool < whole, qPrintable(QString("%1 vs %2").arg(pool).arg(whole)));
    // About 0.9 of the sequences: the cache is what grows with the batch.
    QVERIFY2(pool >= 0.85 * whole && pool <= 0.93 * whole, qPrintable(QString("%1 vs %2").arg(pool).arg(whole)));

    Plan atLimit = p;
    atLimit.batch = pool;
    const SimResult r = Simulator(s).evaluate(atLimit);
    const MemoryBreakdown& m = r.memory;
    QVERIFY(!r.violates(Violation::Memory));
    // TensorRT-LLM's room at its default fraction: 0.9 of what the model leaves.
    const double room = kTrtLlmDefaultKvFraction * (m.capacityGb - m.reserveGb - m.weightsGb - m.activationGb);
    QVERIFY2(m.kvCacheGb <= room + 1e-9, qPrintable(QString("%1 > %2").arg(m.kvCacheGb).arg(room)));
    QVERIFY(std::fabs(m.kvHeldBackGb - m.kvCacheGb * (1 / kTrtLlmDefaultKvFraction - 1)) < 1e-9);
    QVERIFY(std::fabs(m.totalGb - (m.weightsGb + m.kvCacheGb + m.kvHeldBackGb + m.activationGb + m.reserveGb)) < 1e-6);
    // The same plan with the whole free memory as its pool keeps nothing back.
    s.workload.kvCacheMemoryFraction = 1.0;
    QCOMPARE(Simulator(s).evaluate(atLimit).memory.kvHeldBackGb, 0.0);
}

QTEST_APPLESS_MAIN(TestKvPool)
#include "tst_kv_pool.moc"

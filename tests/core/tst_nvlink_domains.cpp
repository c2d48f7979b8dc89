// NVLink domains other than 8: the GB200 NVL72 preset puts 72 GPUs in one
// domain. The simulator, the Megatron recipe (TP up to the domain), the search space and
// every non-RL algorithm must treat it as one domain, and a wide expert-parallel group must
// stay on NVLink there.
#include <QtTest>

#include "io/presets.h"
#include "runner/run_search.h"
#include "search/search_space.h"
#include "sim/megatron.h"
#include "sim/simulator.h"

using namespace shardlab;

namespace {

Scenario nvl72Scenario(const char* model)
{
    auto m = modelPreset(model);
    auto c = clusterPreset("gb200-nvl72");
    if (!m.ok() || !c.ok())
        qFatal("presets: %s %s", m.firstError().c_str(), c.firstError().c_str());
    Scenario s;
    s.name = std::string(model) + "-gb200-nvl72";
    s.model = m.value;
    s.cluster = c.value;
    s.workload = {4096, 1024, 3000, 50}; // deepseek-v3-256gpu's workload
    return s;
}

} // namespace

class TestNvlinkDomains : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void presetIsOneDomainOf72();
    void everyAlgorithmFindsAValidPlan_data();
    void everyAlgorithmFindsAValidPlan();
    void megatronFillsTheDomain_data();
    void megatronFillsTheDomain();
    void wideExpertParallelStaysOnNvlink();
};

void TestNvlinkDomains::presetIsOneDomainOf72()
{
    const Scenario s = nvl72Scenario("deepseek-v3");
    QCOMPARE(s.cluster.gpusPerNode, 72);
    QCOMPARE(s.cluster.totalGpus(), 72LL);
    QVERIFY(validateScenario(s).empty());
    // The space offers every divisor of 72 for TP, up to the whole domain.
    const SearchSpace space(s);
    const std::vector<int> tp = space.slots()[space.tpSlot()].values;
    QCOMPARE(tp.back(), 72);
    QVERIFY(std::find(tp.begin(), tp.end(), 9) != tp.end());
    QVERIFY(std::find(tp.begin(), tp.end(), 36) != tp.end());
}

void TestNvlinkDomains::everyAlgorithmFindsAValidPlan_data()
{
    QTest::addColumn<QString>("algorithm");
    QTest::addColumn<QString>("model");
    for (const SearchAlgorithmInfo& a : searchAlgorithms()) {
        if (a.name == "ppo")
            continue; // LibTorch's plugin: tst_ppo
        for (const char* model : {"deepseek-v3", "qwen3-235b-a22b", "llama3-70b"})
            QTest::newRow((a.name + " " + model).c_str()) << QString::fromStdString(a.name) << model;
    }
}

void TestNvlinkDomains::everyAlgorithmFindsAValidPlan()
{
    QFETCH(QString, algorithm);
    QFETCH(QString, model);
    const Scenario s = nvl72Scenario(model.toUtf8().constData());
    SearchOptions o;
    o.algorithm = algorithm.toStdString();
    o.budget = 1500;
    o.seed = 7;
    const SearchOutcome r = runSearch(s, o);
    QVERIFY2(r.found, r.message.c_str());
    QVERIFY(r.bestResult.valid);
    QCOMPARE(r.best.gpus(), 72LL);
    QVERIFY(validatePlan(r.best, s).empty());
    QVERIFY(r.bestResult.tokensPerSPerGpu > 0);
    if (algorithm == "exact")
        QVERIFY2(r.provedOptimal, r.message.c_str());
}

void TestNvlinkDomains::megatronFillsTheDomain_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("gpusPerNode");
    QTest::addColumn<int>("nodes");
    QTest::addColumn<int>("tp");
    // 72 = 8 x 9 and the heads are powers of two: TP 8 is the widest that divides both.
    QTest::newRow("deepseek-v3 on NVL72") << "deepseek-v3" << 72 << 1 << 8;
    QTest::newRow("llama3-70b on NVL72") << "llama3-70b" << 72 << 1 << 8;
    // A 16-GPU domain: the recipe's TP follows the domain past 8.
    QTest::newRow("llama3-70b on 4 x 16") << "llama3-70b" << 16 << 4 << 16;
    QTest::newRow("deepseek-v3 on 2 x 32") << "deepseek-v3" << 32 << 2 << 32;
}

void TestNvlinkDomains::megatronFillsTheDomain()
{
    QFETCH(QString, model);
    QFETCH(int, gpusPerNode);
    QFETCH(int, nodes);
    QFETCH(int, tp);
    Scenario s = nvl72Scenario(model.toUtf8().constData());
    s.cluster.gpusPerNode = gpusPerNode;
    s.cluster.nodes = nodes;
    const Simulator sim(s);
    const RecipePlan rp = megatronPlan(sim);
    QCOMPARE(rp.plan.tensorParallel, tp);
    QVERIFY(rp.plan.tensorParallel <= gpusPerNode);
    QVERIFY2(rp.found, rp.explanation.c_str());
}

// DeepSeek-V3 as wide-EP deployments place it on NVL72: 256 routed experts in 288 slots
// (32 redundant), EP 72 with token-split attention. Its all-to-all spans the whole rack:
// on NVL72 it costs NVLink time only, so the inter-node link cannot matter; the same 72
// GPUs as nine 8-GPU nodes pay the inter-node link for 8/9 of the traffic.
void TestNvlinkDomains::wideExpertParallelStaysOnNvlink()
{
    Scenario s = nvl72Scenario("deepseek-v3");
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = 1;
    p.dataParallel = 72;
    p.expertParallel = 72;
    p.redundantExperts = 32;
    p.batch = 64;
    const FieldErrors structure = validatePlan(p, s);
    QVERIFY2(structure.empty(), structure.empty() ? "" : structure.front().toString().c_str());

    const SimResult nvl = Simulator(s).evaluate(p);
    Scenario slowFabric = s;
    slowFabric.cluster.interNodeGBps = 1; // 50x slower: unused inside one domain
    slowFabric.cluster.interNodeLatencyUs = 1000;
    const SimResult same = Simulator(slowFabric).evaluate(p);
    Scenario nineNodes = s;
    nineNodes.cluster.gpusPerNode = 8;
    nineNodes.cluster.nodes = 9;
    const SimResult split = Simulator(nineNodes).evaluate(p);

    const int dispatch = static_cast<int>(OpId::Dispatch);
    QVERIFY(nvl.decode[dispatch].commUs > 0);
    QCOMPARE(same.decode[dispatch].commUs, nvl.decode[dispatch].commUs);
    QCOMPARE(same.tpotMs, nvl.tpotMs);
    QVERIFY2(split.decode[dispatch].commUs > 2 * nvl.decode[dispatch].commUs,
             qPrintable(QString("dispatch %1 us on 9 x 8 vs %2 us on NVL72")
                            .arg(split.decode[dispatch].commUs)
                            .arg(nvl.decode[dispatch].commUs)));
    QVERIFY(split.tpotMs > nvl.tpotMs);
}

QTEST_APPLESS_MAIN(TestNvlinkDomains)
#include "tst_nvlink_domains.moc"

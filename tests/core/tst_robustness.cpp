// Absurd but well-formed inputs get a clear valid/invalid answer from every entry point
// (simulator, recipe, searches, JSON), never NaN or Inf.
#include <QtTest>

#include <nlohmann/json.hpp>

#include <random>

#include "io/presets.h"
#include "report/result_json.h"
#include "model/disaggregated_plan.h"
#include "runner/run_search.h"
#include "search/search_space.h"
#include "sim/deployment.h"
#include "sim/megatron.h"

#include "../fuzz/fuzz_common.h" // jsonNumbersFinite: the fuzzers' invariant on result JSON

using namespace shardlab;

namespace {
// Every figure finite, or flagged unbounded: then +infinity (never NaN), the plan invalid
// and nothing served.
bool finite(const SimResult& r)
{
    auto ok = [&](double v) { return std::isfinite(v) || (r.unbounded && std::isinf(v) && v > 0); };
    return ok(r.tpotMs) && ok(r.ttftMs) && ok(r.memory.totalGb) && std::isfinite(r.tokensPerSPerGpu)
        && r.tokensPerSPerGpu >= 0 && !(r.unbounded && (r.valid || r.tokensPerSPerGpu > 0));
}
} // namespace

class TestRobustness : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void absurdScenarios_data();
    void absurdScenarios();
    void aPoolsUnsetLimitIsNeverQuoted();
};

void TestRobustness::absurdScenarios_data()
{
    QTest::addColumn<QString>("what");
    QTest::addColumn<bool>("expectValidPlan");
    QTest::newRow("one GPU with the 1.6T model") << "one-gpu" << false;
    QTest::newRow("100,000 GPUs") << "100k-gpus" << true;
    QTest::newRow("1-token prompt") << "one-token" << true;
    QTest::newRow("1,000,000-token context") << "million-context" << false;
    QTest::newRow("bandwidth 1e-9 GB/s") << "slow-links" << false; // every sharded plan waits ~years
    QTest::newRow("bandwidth 1e-300 GB/s") << "absurd-links" << false; // the figures overflow: unbounded
    // Regressions: expert counts with more divisors up to the GPU count than the search
    // space's old fixed 64-entry mask buffer held (55,440 crashed every search; 20,160
    // silently corrupted the stack).
    QTest::newRow("55,440 experts (120 divisors)") << "experts-55440" << true;
    QTest::newRow("20,160 experts (84 divisors)") << "experts-20160" << true;
}

void TestRobustness::absurdScenarios()
{
    QFETCH(QString, what);
    QFETCH(bool, expectValidPlan);
    Scenario s = scenarioPreset("moe-1.6t-1024gpu").value;
    if (what == QLatin1String("one-gpu")) {
        s.cluster.nodes = 1;
        s.cluster.gpusPerNode = 1;
    } else if (what == QLatin1String("100k-gpus")) {
        s.cluster.nodes = 12500; // 8 x 12,500 = 100,000
    } else if (what == QLatin1String("one-token")) {
        s.workload.promptTokens = 1;
        s.workload.outputTokens = 1;
    } else if (what == QLatin1String("million-context")) {
        s.workload.promptTokens = 1'000'000;
    } else if (what.startsWith(QLatin1String("experts-"))) {
        s.model.moe.experts = what.mid(8).toInt();
        s.model.moe.expertFfnHidden = 16; // about the stand-in's total expert width
    } else if (what == QLatin1String("slow-links") || what == QLatin1String("absurd-links")) {
        s.cluster.nvlinkGBps = s.cluster.interNodeGBps = what == QLatin1String("slow-links") ? 1e-9 : 1e-300;
        s.workload.ttftSloMs = 1e9; // generous limits: still no plan, the model needs sharding
        s.workload.tpotSloMs = 1e9;
    }
    QVERIFY(validateScenario(s).empty());
    const Simulator sim(s);

    const RecipePlan rp = megatronPlan(sim);
    QVERIFY(finite(rp.result));
    QVERIFY(fuzzcheck::jsonNumbersFinite(nlohmann::json::parse(evaluationToJson(s, rp.plan, rp.result))));
    if (!rp.found)
        QVERIFY(!violationReasons(s, rp.plan, rp.result).empty());

    const SearchSpace space(s);
    QVERIFY(std::isfinite(space.log10Size()));
    std::mt19937_64 rng(3);
    int unbounded = 0;
    for (int i = 0; i < 300; ++i) {
        const Plan p = space.randomPlan(rng);
        const SimResult r = sim.evaluate(p);
        QVERIFY(finite(r));
        if (!r.valid)
            QVERIFY(!violationReasons(s, p, r).empty());
        if (r.unbounded) { // said in words, never printed as a number
            ++unbounded;
            std::string all;
            for (const std::string& reason : violationReasons(s, p, r))
                all += reason + "\n";
            QVERIFY2(all.find("unbounded") != std::string::npos && all.find("inf") == std::string::npos, all.c_str());
            const nlohmann::json j = nlohmann::json::parse(evaluationToJson(s, p, r));
            QVERIFY(fuzzcheck::jsonNumbersFinite(j));
            QVERIFY(j.dump().find("\"unbounded\":true") != std::string::npos);
        }
    }
    if (what == QLatin1String("absurd-links"))
        QVERIFY(unbounded > 0); // the overflowing plans were among those checked

    for (const char* algo : {"random", "anneal", "genetic", "exact"}) {
        SearchOptions o;
        o.algorithm = algo;
        o.budget = 600;
        o.seed = 1;
        const SearchOutcome out = runSearch(s, o);
        QVERIFY2(!out.found || finite(out.bestResult), algo);
        if (out.found)
            QVERIFY(out.bestResult.valid);
        else
            QVERIFY2(!out.message.empty(), algo);
        if (std::string(algo) == "exact")
            QCOMPARE(out.found, expectValidPlan);
    }
}

void TestRobustness::aPoolsUnsetLimitIsNeverQuoted()
{
    // A decode pool holds no TTFT limit of its own (the prefill pool's is the user's): its
    // scenario keeps the largest limit a workload may hold, and a TTFT beyond it is named as
    // that, never as "exceeds the limit of 1e+09 ms", which no one set. With links at 1e-9 GB/s
    // the sharded plans' figures run to years, shown (below the unbounded mark) or unbounded.
    Scenario s = scenarioPreset("llama3-70b-8gpu").value;
    s.cluster.nvlinkGBps = s.cluster.interNodeGBps = 1e-9;
    for (const PoolRole role : {PoolRole::Decode, PoolRole::Prefill}) {
        const Scenario pool = poolScenario(s, role, s.cluster.totalGpus());
        const Simulator sim(pool);
        const SearchSpace space(pool);
        std::mt19937_64 rng(5);
        const Violation unset = role == PoolRole::Decode ? Violation::TtftSlo : Violation::TpotSlo;
        int named = 0;
        for (int i = 0; i < 300; ++i) {
            const Plan p = space.randomPlan(rng);
            const SimResult r = sim.evaluate(p);
            if (role == PoolRole::Prefill) // a prefill pass has no TPOT to judge: never broken
                QVERIFY(!r.violates(Violation::TpotSlo));
            for (const std::string& reason : violationReasons(pool, p, r)) {
                QVERIFY2(reason.find("limit of 1e+09") == std::string::npos
                             && reason.find("limit is 1e+09") == std::string::npos,
                         reason.c_str());
                if (r.violates(unset) && reason.rfind(role == PoolRole::Decode ? "TTFT: " : "TPOT: ", 0) == 0)
                    ++named;
            }
        }
        if (role == PoolRole::Decode)
            QVERIFY(named > 0); // the decode pool's unset TTFT limit was broken and named
    }
}

QTEST_APPLESS_MAIN(TestRobustness)
#include "tst_robustness.moc"

// The engine gap (report/engine_gap.h): a result that names an engine carries the best plan
// the engine runs and the per-operator optimum, both from exact on the engine's
// collectives; the ratio, its bound, and the causes come from the same outcomes.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "io/presets.h"
#include "io/scenario_json.h"
#include "model/engine_caps.h"
#include "report/engine_gap.h"
#include "report/result_json.h"
#include "runner/run_search.h"

using namespace shardlab;

namespace {

Scenario preset(const char* name, CollectiveEngine engine, bool runnable = false)
{
    auto s = scenarioPreset(name);
    if (!s.ok())
        qFatal("%s", s.firstError().c_str());
    s.value.workload.engine = engine;
    s.value.workload.runnable = runnable;
    return s.value;
}

SearchOutcome exact(const Scenario& s)
{
    SearchOptions o;
    o.algorithm = "exact";
    return runSearch(s, o);
}

} // namespace

class TestEngineGap : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // NCCL alone names no engine: nothing is measured.
    void noEngineNoGap()
    {
        const EngineGap g = measureEngineGap(preset("llama3-70b-8gpu", CollectiveEngine::Nccl));
        QVERIFY(!g.applies);
        QVERIFY(engineGapLines(g).empty());
        QCOMPARE(QString::fromStdString(engineGapToJson(g)), QString("null"));
    }

    // Each side equals exact's own answer in its space; the per-operator optimum is never
    // below the runnable one, and the gain is their ratio.
    void sidesAreExactsAnswers()
    {
        for (CollectiveEngine ce : {CollectiveEngine::Vllm, CollectiveEngine::Sglang, CollectiveEngine::TrtLlm}) {
            const Scenario free = preset("mixtral-8x22b-64gpu", ce);
            Scenario run = free;
            run.workload.runnable = true;
            const SearchOutcome ef = exact(free), er = exact(run);
            QVERIFY(ef.provedOptimal && er.provedOptimal);
            const EngineGap g = measureEngineGap(free);
            QVERIFY(g.applies);
            QCOMPARE(g.bound, GapBound::Exact);
            QCOMPARE(g.perOperator.tokensPerSPerGpu(), ef.bestTokensPerSPerGpu());
            QCOMPARE(g.runnable.tokensPerSPerGpu(), er.bestTokensPerSPerGpu());
            QVERIFY(g.gain >= 1.0);
            QCOMPARE(g.gain, ef.bestTokensPerSPerGpu() / er.bestTokensPerSPerGpu());
            // The engine runs its side as planned.
            const Engine e = *engineOfCollectives(ce);
            QVERIFY(engineViolations(e, g.runnable.deployment.pools[0].plan, g.runnable.deployment.pools[0].scenario).empty());
            // A gain above 1 comes from rules the per-operator optimum breaks.
            QCOMPARE(!g.rulesBroken.empty(), g.gain > 1 + 1e-12);
        }
    }

    // A proved exact result is its own side, not searched again; a runnable result is the
    // runnable side.
    void provedResultIsReused()
    {
        const Scenario run = preset("deepseek-v3-256gpu", CollectiveEngine::TrtLlm, true);
        const SearchOutcome er = exact(run);
        QVERIFY(er.provedOptimal);
        const EngineGap g = measureEngineGap(run, &er);
        QVERIFY(g.scenarioRunnable);
        QVERIFY(g.runnable.fromResult);
        QVERIFY(!g.perOperator.fromResult);
        QCOMPARE(g.runnable.tokensPerSPerGpu(), er.bestTokensPerSPerGpu());
        QVERIFY(g.gain > 2.0); // TensorRT-LLM runs no two-batch overlap and splits attention over the whole stage
        QVERIFY(!g.causes.empty());
        QVERIFY(QString::fromStdString(g.headline).contains("both proved optimal by exact"));
        // A budgeted search's result is not a certificate: exact answers both sides.
        SearchOptions o;
        o.algorithm = "random";
        o.budget = 200;
        const SearchOutcome rr = runSearch(run, o);
        const EngineGap h = measureEngineGap(run, &rr);
        QVERIFY(!h.runnable.fromResult);
        QCOMPARE(h.runnable.tokensPerSPerGpu(), er.bestTokensPerSPerGpu());
    }

    // A line that starts with the engine's name keeps its spelling: "vLLM 0.11 runs ...",
    // never "VLLM"; other lines start with a capital.
    void engineNameKeepsItsCase()
    {
        EngineGap g;
        g.applies = true;
        g.engineName = "vLLM 0.11";
        g.headline = g.engineName + " runs a plan as good as the per-operator optimum here";
        QVERIFY(QString::fromStdString(engineGapLines(g).front()).startsWith(QStringLiteral("vLLM 0.11 runs")));
        g.headline = "the per-operator optimum is 1.2x the best plan vLLM 0.11 runs here";
        QVERIFY(QString::fromStdString(engineGapLines(g).front()).startsWith(QStringLiteral("The per-operator")));
    }

    // Without exact's proof a side is a lower bound, and the headline says so.
    void unprovedSidesAreBounds()
    {
        const Scenario s = preset("moe-1.6t-1024gpu", CollectiveEngine::Sglang);
        const EngineGap g = measureEngineGap(s, nullptr, nullptr, 200);
        QVERIFY(g.applies);
        QVERIFY(!g.perOperator.proved);
        QVERIFY(g.bound != GapBound::Exact);
        QVERIFY(!QString::fromStdString(g.headline).contains("both proved"));
        if (g.perOperator.found && g.runnable.found)
            QVERIFY(QString::fromStdString(g.headline).contains("not proved"));
    }

    // Two pools: both sides are deployments, the gain is of the whole deployment.
    void disaggregatedDeployments()
    {
        auto s = loadScenarioFile(std::string(SHARDLAB_RESOURCES)
                                  + "/examples/disaggregation/llama3-70b-64gpu-8000-1000-disaggregated.json");
        QVERIFY(s.ok());
        s.value.workload.engine = CollectiveEngine::Vllm;
        const EngineGap g = measureEngineGap(s.value);
        QCOMPARE(g.bound, GapBound::Exact);
        QCOMPARE(static_cast<int>(g.runnable.deployment.pools.size()), 2);
        QCOMPARE(g.gain, g.perOperator.deployment.tokensPerSPerGpu / g.runnable.deployment.tokensPerSPerGpu);
        const nlohmann::json j = nlohmann::json::parse(engineGapToJson(g));
        QVERIFY(j["runnable"]["plan"].contains("prefill") && j["runnable"]["plan"].contains("decode"));
        QCOMPARE(j["gain"].get<double>(), g.gain);
        QCOMPARE(QString::fromStdString(j["bound"].get<std::string>()), QString("exact"));
    }
};

QTEST_APPLESS_MAIN(TestEngineGap)
#include "tst_engine_gap.moc"

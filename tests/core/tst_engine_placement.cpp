// Where an engine's servers sit on the nodes (model/engine_caps.h, enginePlacementRefusal):
// the rule itself, the engine rules that list it, the runnable space that leaves its plans
// out, and the export that refuses them, so that a plan a runnable search returns is one
// a script starts as planned.
#include <QtTest>

#include <random>

#include "model/engine_caps.h"
#include "runner/run_search.h"
#include "search/search_space.h"
#include "sim/megatron.h"
#include "tst_launch_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {

// Llama-3-70B (BF16, H100) on `nodes` nodes of 8, a runnable scenario of engine `e`.
Scenario runnableOn(Engine e, int nodes)
{
    Scenario s = launchPreset("llama3-70b-8gpu");
    s.cluster.nodes = nodes;
    s.workload.engine = collectivesOf(e);
    s.workload.runnable = true;
    return s;
}

bool mentions(const FieldErrors& errors, const char* text)
{
    for (const FieldError& f : errors)
        if (f.reason.find(text) != std::string::npos)
            return true;
    return false;
}

} // namespace

class TestEnginePlacement : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void theRule();
    void engineRulesListIt();
    void runnableSpaceLeavesItOut();
    void runnableOptimumExports();
};

void TestEnginePlacement::theRule()
{
    const ModelSpec dense = launchPreset("llama3-70b-8gpu").model;
    const ModelSpec moe = launchPreset("mixtral-8x22b-64gpu").model;
    // A dense replica of TP 4 x PP 3 = 12 GPUs is a server over a node and a half.
    for (Engine e : {Engine::Sglang, Engine::TrtLlm}) {
        std::string field;
        const std::string why = enginePlacementRefusal(e, dense, megatronLike(4, 3, 2, 1, 8), 8, &field);
        QVERIFY2(why.find("not whole nodes") != std::string::npos, why.c_str());
        QCOMPARE(field, std::string("tensor_parallel"));
        QVERIFY(enginePlacementRefusal(e, dense, megatronLike(8, 2, 2, 1, 8), 8).empty()); // 2 whole nodes
        QVERIFY(enginePlacementRefusal(e, dense, megatronLike(4, 1, 6, 1, 8), 8).empty());
    }
    // vLLM's Ray cluster places its engines' GPUs itself.
    QVERIFY(enginePlacementRefusal(Engine::Vllm, dense, megatronLike(4, 3, 2, 1, 8), 8).empty());
    // SGLang's dense replicas of 3 GPUs: one server on one node holds 2 of them, not 8.
    QVERIFY(enginePlacementRefusal(Engine::Sglang, dense, megatronLike(1, 3, 8, 1, 8), 8).find("do not tile")
            != std::string::npos);
    QVERIFY(enginePlacementRefusal(Engine::Sglang, dense, megatronLike(1, 3, 2, 1, 8), 8).empty());
    QVERIFY(enginePlacementRefusal(Engine::TrtLlm, dense, megatronLike(1, 3, 8, 1, 8), 8).empty());
    // An MoE plan's server is its engine instance: 12 GPUs (TP 4 x DP 6 in 2 instances) is not
    // whole nodes of 8; 24 GPUs in one instance are.
    Plan twelve = megatronLike(4, 1, 6, 24, 8);
    twelve.instances = 2;
    std::string field;
    QVERIFY(!enginePlacementRefusal(Engine::Sglang, moe, twelve, 8, &field).empty());
    QCOMPARE(field, std::string("instances"));
    twelve.instances = 1;
    QVERIFY(enginePlacementRefusal(Engine::Sglang, moe, twelve, 8).empty());
}

void TestEnginePlacement::engineRulesListIt()
{
    const Scenario s = runnableOn(Engine::Sglang, 3);
    const Plan p = megatronLike(4, 3, 2, 1, 8);
    QVERIFY(mentions(engineViolations(Engine::Sglang, p, s), "not whole nodes"));
    QVERIFY(!mentions(engineViolations(Engine::Vllm, p, s), "not whole nodes"));
    // A pool is its own nodes: on one node of 8 split 3 + 5 nothing spans a node.
    Scenario one = s;
    one.cluster.nodes = 1;
    QVERIFY(engineViolations(Engine::Sglang, megatronLike(1, 1, 3, 1, 8), one).empty());
    // Export refuses it with the same rule, as not run as planned.
    LaunchOptions o;
    o.engine = Engine::Sglang;
    o.allowInvalidName = "--allow-invalid";
    auto c = exportLaunchConfig(s, p, o);
    QVERIFY(!c.ok());
    QVERIFY2(c.error().reason.find("does not run this plan as planned") != std::string::npos
                 && c.error().reason.find("not whole nodes") != std::string::npos,
             c.error().toString().c_str());
}

void TestEnginePlacement::runnableSpaceLeavesItOut()
{
    for (Engine e : {Engine::Sglang, Engine::TrtLlm}) {
        const Scenario s = runnableOn(e, 3);
        const SearchSpace space(s);
        std::mt19937_64 rng(11);
        for (int i = 0; i < 2000; ++i) {
            const Plan p = space.randomPlan(rng);
            QVERIFY2(enginePlacementRefusal(e, s.model, p, 8).empty(), engineInfo(e).name);
            QVERIFY(space.withinConstraints(p));
        }
        // The plan the masks leave out is named outside the space, by the engine's rule.
        QVERIFY(mentions(space.outsideConstraints(megatronLike(4, 3, 2, 1, 8)), "not whole nodes"));
        // Held to TP 4 x PP 3 by its constraints, the runnable space has no plan; the free one has.
        Scenario held = s;
        held.constraints.tensorParallel = {4};
        held.constraints.pipelineParallel = {3};
        SearchOptions exact;
        exact.algorithm = "exact";
        const SearchOutcome none = runSearch(held, exact);
        QVERIFY2(!none.found && none.message.find(std::string("is one ") + engineInfo(e).label) != std::string::npos,
                 none.message.c_str());
        held.workload.runnable = false;
        const SearchOutcome some = runSearch(held, exact);
        QVERIFY2(some.found, some.message.c_str());
        // The recipe under the engine never lands on such a server either.
        const RecipePlan r = megatronPlan(Simulator(s));
        QVERIFY(enginePlacementRefusal(e, s.model, r.plan, 8).empty());
    }
}

// On 3 nodes the runnable optimum of each engine exports as it is.
void TestEnginePlacement::runnableOptimumExports()
{
    for (Engine e : {Engine::Sglang, Engine::TrtLlm, Engine::Vllm}) {
        const Scenario s = runnableOn(e, 3);
        SearchOptions exact;
        exact.algorithm = "exact";
        const SearchOutcome best = runSearch(s, exact);
        QVERIFY2(best.found && best.provedOptimal, best.message.c_str());
        LaunchOptions o;
        o.engine = e;
        auto c = exportLaunchConfig(s, best.best, o);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
    }
}

QTEST_APPLESS_MAIN(TestEnginePlacement)
#include "tst_engine_placement.moc"

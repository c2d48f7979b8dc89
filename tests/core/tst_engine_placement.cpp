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

// A shipped scenario on `nodes` nodes of `perNode` GPUs, runnable for engine `e`.
Scenario runnableOn(Engine e, int nodes, int perNode = 8, const char* preset = "llama3-70b-8gpu")
{
    Scenario s = launchPreset(preset);
    s.cluster.nodes = nodes;
    s.cluster.gpusPerNode = perNode;
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
        QCOMPARE(field, std::string("pipeline_parallel"));
        QVERIFY(enginePlacementRefusal(e, dense, megatronLike(8, 2, 2, 1, 8), 8).empty()); // 2 whole nodes
        QVERIFY(enginePlacementRefusal(e, dense, megatronLike(4, 1, 6, 1, 8), 8).empty());
    }
    // vLLM's Ray cluster places its engines' GPUs itself.
    QVERIFY(enginePlacementRefusal(Engine::Vllm, dense, megatronLike(4, 3, 2, 1, 8), 8).empty());
    // SGLang's dense replicas of 3 GPUs: one server on one node holds 2 of them, not 8.
    QVERIFY(enginePlacementRefusal(Engine::Sglang, dense, megatronLike(1, 3, 8, 1, 8), 8).find("do not tile")
            != std::string::npos);
    QVERIFY(enginePlacementRefusal(Engine::Sglang, dense, megatronLike(1, 3, 2, 1, 8), 8).empty()); // one node
    // TensorRT-LLM's worlds of 3 GPUs likewise: over 3 nodes of 8 one straddles two nodes.
    QVERIFY(enginePlacementRefusal(Engine::TrtLlm, dense, megatronLike(1, 3, 8, 1, 8), 8).find("do not tile")
            != std::string::npos);
    // Worlds of 4 on 2 nodes of 6: the second sits 2 + 2 over both; worlds of 2 or 6 tile them.
    QVERIFY(!enginePlacementRefusal(Engine::TrtLlm, dense, megatronLike(4, 1, 3, 1, 8), 6).empty());
    QVERIFY(enginePlacementRefusal(Engine::TrtLlm, dense, megatronLike(2, 1, 6, 1, 8), 6).empty());
    QVERIFY(enginePlacementRefusal(Engine::TrtLlm, dense, megatronLike(2, 3, 2, 1, 8), 6).empty());
    // An MoE plan's server is its engine instance: 12 GPUs (TP 4 x DP 6 in 2 instances) is not
    // whole nodes of 8; 24 GPUs in one instance are.
    Plan twelve = megatronLike(4, 1, 6, 24, 8);
    twelve.instances = 2;
    std::string field;
    QVERIFY(!enginePlacementRefusal(Engine::Sglang, moe, twelve, 8, &field).empty());
    QCOMPARE(field, std::string("instances"));
    twelve.instances = 1;
    QVERIFY(enginePlacementRefusal(Engine::Sglang, moe, twelve, 8).empty());
    // Instances of 6 GPUs on 3 nodes of 8: the second straddles nodes 0 and 1.
    Plan six = megatronLike(2, 1, 12, 24, 8);
    six.instances = 4;
    QVERIFY(enginePlacementRefusal(Engine::TrtLlm, moe, six, 8).find("do not tile") != std::string::npos);
    six.instances = 6; // of 4 GPUs: two a node
    QVERIFY(enginePlacementRefusal(Engine::TrtLlm, moe, six, 8).empty());
}

void TestEnginePlacement::engineRulesListIt()
{
    const Scenario s = runnableOn(Engine::Sglang, 3);
    const Plan p = megatronLike(4, 3, 2, 1, 8);
    QVERIFY(mentions(engineViolations(Engine::Sglang, p, s), "not whole nodes"));
    QVERIFY(!mentions(engineViolations(Engine::Vllm, p, s), "not whole nodes"));
    // Its field is the degree that sets the server's size.
    bool named = false;
    for (const FieldError& f : engineViolations(Engine::TrtLlm, megatronLike(1, 3, 8, 1, 8), s))
        named = named || (f.where == "pipeline_parallel" && f.reason.find("do not tile") != std::string::npos);
    QVERIFY(named);
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
        for (const Scenario& any : {runnableOn(e, 3), runnableOn(e, 2, 6), runnableOn(e, 3, 8, "mixtral-8x22b-64gpu")}) {
            const SearchSpace space(any);
            std::mt19937_64 rng(11);
            int instances = 0;
            for (int i = 0; i < 2000; ++i) {
                const Plan p = space.randomPlan(rng);
                QVERIFY2(enginePlacementRefusal(e, any.model, p, any.cluster.gpusPerNode).empty(), engineInfo(e).name);
                QVERIFY(space.withinConstraints(p));
                instances += p.instances > 1;
            }
            QVERIFY(!any.model.isMoe() || instances > 0); // the MoE space's instances were drawn
            // The recipe under the engine never lands on such a server either (on 2 nodes of
            // 6 its TP 4 world would straddle them).
            const RecipePlan r = megatronPlan(Simulator(any));
            QVERIFY(r.found);
            QVERIFY2(enginePlacementRefusal(e, any.model, r.plan, any.cluster.gpusPerNode).empty(), r.explanation.c_str());
        }
        const Scenario s = runnableOn(e, 3);
        // The plan the masks leave out is named outside the space, by the engine's rule.
        QVERIFY(mentions(SearchSpace(s).outsideConstraints(megatronLike(4, 3, 2, 1, 8)), "not whole nodes"));
        // Held to TP 4 x PP 3 by its constraints, the runnable space has no plan; the free one has.
        Scenario held = s;
        held.constraints.tensorParallel = {4};
        held.constraints.pipelineParallel = {3};
        SearchOptions exact;
        exact.algorithm = "exact";
        const SearchOutcome none = runSearch(held, exact);
        QVERIFY2(!none.found && none.message.find(std::string("is one ") + engineInfo(e).label) != std::string::npos
                     && none.message.find("where its servers sit on 3 nodes of 8 GPUs") != std::string::npos,
                 none.message.c_str());
        held.workload.runnable = false;
        const SearchOutcome some = runSearch(held, exact);
        QVERIFY2(some.found, some.message.c_str());
    }
}

// On 3 nodes of 8 and 2 of 6 the runnable optimum of each engine exports as it is.
void TestEnginePlacement::runnableOptimumExports()
{
    for (Engine e : {Engine::Sglang, Engine::TrtLlm, Engine::Vllm})
        for (const Scenario& s : {runnableOn(e, 3), runnableOn(e, 2, 6)}) {
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

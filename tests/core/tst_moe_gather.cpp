// The all-gather MoE exchange (dispatch `all_gather`, combine `reduce_scatter`): its input is
// replicated over each tensor-parallel group, so it gathers only across the replicas of an
// instance. A TP MoE layer (the expert group is one TP group, as TensorRT-LLM and SGLang run
// MoE without expert parallelism) exchanges nothing before its experts.
#include <QtTest>

#include "io/presets.h"
#include "model/engine_caps.h"
#include "model/placement.h"
#include "model/plan_checks.h"
#include "sim/collectives.h"
#include "sim/megatron.h"
#include "sim/simulator.h"

using namespace shardlab;

namespace {

// Mixtral-8x22B on one node of 8: TP 8, EP 8 (expert TP 1), the all-gather exchange.
Scenario mixtralOneNode()
{
    Scenario s = scenarioPreset("mixtral-8x22b-64gpu").value;
    s.cluster.nodes = 1;
    s.workload.tpotSloMs = 1e6; // latency limits out of reach: only the exchange is under test
    s.workload.ttftSloMs = 1e6;
    return s;
}

Plan tensorParallelMoe(int tp, int dp)
{
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = tp;
    p.dataParallel = dp;
    p.instances = 1;
    p.pipelineParallel = 1;
    p.expertParallel = tp * dp;
    p.setOption(OpId::Dispatch, optionFromName(OpId::Dispatch, "all_gather"));
    p.setOption(OpId::Combine, optionFromName(OpId::Combine, "reduce_scatter"));
    p.setOption(OpId::ExpertUp, optionFromName(OpId::ExpertUp, "token"));
    p.setOption(OpId::ExpertDown, optionFromName(OpId::ExpertDown, "token"));
    p.batch = 64;
    p.microBatches = 1;
    return p;
}

double hiddenBytes(const Scenario& s) { return double(s.model.hiddenSize) * 2; } // BF16 activations

} // namespace

class TestMoeGather : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void aTensorParallelMoeLayerGathersNothing();
    void replicasGatherAcrossTheirGroupOnly();
    void aTokenSplitRouterPaysItsGatherOnTheWayIn();
    void aGatheredLayerPermutesEveryPairOfItsExperts();
    void theRecipeGathersAtExpertParallelOne();
    void anEngineKeepsAttentionDpWithItsGather();
};

void TestMoeGather::aTensorParallelMoeLayerGathersNothing()
{
    const Scenario s = mixtralOneNode();
    const Plan p = tensorParallelMoe(8, 1);
    QCOMPARE(planStructureViolations(p, s), 0u);
    const SimResult r = Simulator(s).evaluate(p);
    QVERIFY(r.valid);
    // The replicated router feeds the experts directly: no collective at dispatch.
    QCOMPARE(r.decode[int(OpId::Dispatch)].commUs, 0.0);
    QCOMPARE(r.decode[int(OpId::Dispatch)].commBytes, 0.0);
    // The combine still reduce-scatters the partial outputs (with the all-gather back to a
    // replicated residual, a TP layer's all-reduce).
    QVERIFY(r.decode[int(OpId::Combine)].commUs > 0);
    // The all-to-all exchange of the same plan does move tokens, so it costs more.
    Plan a2a = p;
    a2a.setOption(OpId::Dispatch, optionFromName(OpId::Dispatch, "all_to_all"));
    const SimResult ra = Simulator(s).evaluate(a2a);
    QVERIFY(ra.decode[int(OpId::Dispatch)].commUs > 0);
}

void TestMoeGather::replicasGatherAcrossTheirGroupOnly()
{
    // TP 2 x 4 replicas in one instance: each rank gathers the other three replicas' tokens
    // over the 4 ranks of its tensor index (2 GPUs apart), never its own TP group's.
    const Scenario s = mixtralOneNode();
    const Plan p = tensorParallelMoe(2, 4);
    QCOMPARE(planStructureViolations(p, s), 0u);
    const PlanPlacement placed = placePlan(p, s.cluster.gpusPerNode);
    QCOMPARE(placed.expertReplicas.size, 4);
    QCOMPARE(placed.expertReplicas.nodes, 1);
    const SimResult r = Simulator(s).evaluate(p);
    QVERIFY2(r.valid, qPrintable(QString("violations %1").arg(r.violations)));
    const OpBreakdown& d = r.decode[int(OpId::Dispatch)];
    // Per layer and rank: (n - 1)/n of the four replicas' tokens, n = 4; a replica's step
    // carries its decoding sequences and the steady state's prompt chunk (stepTokens).
    const double tokensPerReplica = r.stepTokens;
    const double perLayer = 3.0 / 4.0 * 4 * tokensPerReplica * hiddenBytes(s);
    const double layers = s.model.moeLayers();
    QVERIFY2(std::abs(d.commBytes - perLayer * layers) <= 1e-6 * perLayer * layers,
             qPrintable(QString("dispatch sends %1 B, expected %2 B").arg(d.commBytes).arg(perLayer * layers)));
    QCOMPARE(d.collective, Collective::AllGather);
}

void TestMoeGather::aTokenSplitRouterPaysItsGatherOnTheWayIn()
{
    // Attention data parallel (tokens split over TP) into the all-gather exchange: the
    // token-split router's output is gathered over the TP group first, so the tokens reach
    // every expert rank either way, and the plan is not cheaper than the replicated router.
    const Scenario s = mixtralOneNode();
    Plan rep = tensorParallelMoe(8, 1);
    Plan tok = rep;
    tok.setOption(OpId::Router, optionFromName(OpId::Router, "token"));
    const SimResult rr = Simulator(s).evaluate(rep);
    const SimResult rt = Simulator(s).evaluate(tok);
    QVERIFY(rr.valid && rt.valid);
    // The T -> R conversion into the all-gather dispatch is charged to dispatch: (7/8) of the
    // replica's step tokens over the TP group of 8, per MoE layer; 0 after a replicated router.
    const double perLayer = 7.0 / 8.0 * rt.stepTokens * hiddenBytes(s);
    const double sent = rt.decode[int(OpId::Dispatch)].commBytes, layers = s.model.moeLayers();
    QVERIFY2(std::abs(sent - perLayer * layers) <= 1e-6 * perLayer * layers,
             qPrintable(QString("dispatch sends %1 B, expected %2 B").arg(sent).arg(perLayer * layers)));
    QCOMPARE(rr.decode[int(OpId::Dispatch)].commBytes, 0.0);
    QVERIFY(rt.tpotMs >= rr.tpotMs);
}

void TestMoeGather::aGatheredLayerPermutesEveryPairOfItsExperts()
{
    // Expert TP 8 (EP 1): every rank holds a shard of every expert and every token of its TP
    // group, so its permutation copies every routed (token, expert) pair's hidden state, read
    // and written, at dispatch and again at combine: top-k pairs of each of the replica's
    // step tokens, not its 1/TP share of them (TensorRT-LLM's MoE table times it so:
    // scripts/fit_grouped_gemm.py).
    const Scenario s = mixtralOneNode();
    Plan p = tensorParallelMoe(8, 1);
    p.expertParallel = 1;
    p.setOption(OpId::ExpertUp, optionFromName(OpId::ExpertUp, "column"));
    p.setOption(OpId::ExpertDown, optionFromName(OpId::ExpertDown, "row"));
    QCOMPARE(planStructureViolations(p, s), 0u);
    const SimResult r = Simulator(s).evaluate(p);
    QVERIFY(r.valid);
    const double k = s.model.moe.expertsPerToken, layers = s.model.moeLayers();
    const double copied = layers * r.stepTokens * k * 2 * hiddenBytes(s);
    for (OpId id : {OpId::Dispatch, OpId::Combine}) {
        const double bytes = r.decode[int(id)].hbmBytes;
        QVERIFY2(std::abs(bytes - copied) <= 1e-6 * copied,
                 qPrintable(QString("%1 moves %2 B, expected %3 B").arg(opInfo(id).name).arg(bytes).arg(copied)));
    }
    // With EP 8 (expert TP 1) the busiest rank permutes the pairs routed to its own experts:
    // an eighth of them times the load imbalance. (Within 1 %: the breakdown mixes the steps
    // with a prompt chunk and those without, whose imbalances differ a little with their
    // tokens; the result reports the mean step's.)
    const SimResult ep = Simulator(s).evaluate(tensorParallelMoe(8, 1));
    QVERIFY(ep.valid && ep.expertLoadImbalance > 1);
    const double epBytes = ep.decode[int(OpId::Dispatch)].hbmBytes;
    const double busiest = layers * ep.stepTokens * k / 8 * ep.expertLoadImbalance * 2 * hiddenBytes(s);
    QVERIFY2(std::abs(epBytes - busiest) <= 0.01 * busiest,
             qPrintable(QString("EP 8 dispatch moves %1 B, expected %2 B").arg(epBytes).arg(busiest)));
}

void TestMoeGather::theRecipeGathersAtExpertParallelOne()
{
    // On one node the recipe's EP over DP 1 is 1: every rank holds a slice of every expert,
    // and Megatron-Core's all-to-all over a one-rank expert-parallel group moves nothing, so
    // the recipe gathers the tokens and reduce-scatters the partial outputs; on 8 nodes (DP
    // 8, EP 8) it keeps the all-to-all.
    const Scenario one = mixtralOneNode();
    const RecipePlan r1 = megatronPlan(Simulator(one));
    QVERIFY(r1.found);
    QCOMPARE(r1.plan.expertParallel, 1);
    QCOMPARE(r1.plan.option(OpId::Dispatch), optionFromName(OpId::Dispatch, "all_gather"));
    QCOMPARE(r1.plan.option(OpId::Combine), optionFromName(OpId::Combine, "reduce_scatter"));
    // The all-to-all form of the same plan has the slower step.
    Plan a2a = r1.plan;
    a2a.setOption(OpId::Dispatch, optionFromName(OpId::Dispatch, "all_to_all"));
    a2a.setOption(OpId::Combine, optionFromName(OpId::Combine, "all_to_all"));
    const SimResult ra = Simulator(one).evaluate(a2a);
    QVERIFY2(ra.tpotMs > r1.result.tpotMs, qPrintable(QString("%1 vs %2 ms").arg(ra.tpotMs).arg(r1.result.tpotMs)));

    Scenario eight = mixtralOneNode();
    eight.cluster.nodes = 8;
    const RecipePlan r8 = megatronPlan(Simulator(eight));
    QVERIFY(r8.found);
    QVERIFY(r8.plan.expertParallel > 1);
    QCOMPARE(r8.plan.option(OpId::Dispatch), optionFromName(OpId::Dispatch, "all_to_all"));
    QCOMPARE(r8.plan.option(OpId::Combine), optionFromName(OpId::Combine, "all_to_all"));

    // Dispatch and combine are one dispatcher: constraints that allow only the all-to-all
    // dispatch keep the all-to-all both ways at EP 1, and the recipe says why.
    Scenario only = one;
    only.constraints.operatorOptions.push_back({int(OpId::Dispatch), {optionFromName(OpId::Dispatch, "all_to_all")}});
    const RecipePlan rc = megatronPlan(Simulator(only));
    QVERIFY(rc.found);
    QCOMPARE(rc.plan.expertParallel, 1);
    QCOMPARE(rc.plan.option(OpId::Dispatch), optionFromName(OpId::Dispatch, "all_to_all"));
    QCOMPARE(rc.plan.option(OpId::Combine), optionFromName(OpId::Combine, "all_to_all"));
    QVERIFY2(rc.explanation.find("keep the constraints' options at EP 1") != std::string::npos, rc.explanation.c_str());
}


// A plan with attention split by sequences and the recipe's all-to-all dispatcher on an
// engine that has attention DP but no all-to-all backend (TensorRT-LLM): the engine's layout
// keeps the attention DP and moves the exchange to all-gather / reduce-scatter, with every
// other operator in that mode's options (router, head and embedding per rank), rather than
// dropping to attention by heads.
void TestMoeGather::anEngineKeepsAttentionDpWithItsGather()
{
    const ModelSpec m = modelPreset("qwen3-235b-a22b").value;
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = 8;
    p.expertParallel = 8;
    p.setOption(OpId::Attention, optionFromName(OpId::Attention, "token"));
    QCOMPARE(planEngineMode(m, p), 3); // attention DP, all-to-all
    QCOMPARE(engineDegreesRefusal(Engine::TrtLlm, m, p, 3), EngineRefusal::AllToAllBackend);
    applyEngineLayout(Engine::TrtLlm, m, p);
    QCOMPARE(planEngineMode(m, p), 2); // attention DP, all-gather / reduce-scatter
    Scenario s;
    s.model = m;
    s.cluster.gpusPerNode = 8;
    QVERIFY(engineViolations(Engine::TrtLlm, p, s).empty());
    QCOMPARE(p.option(OpId::Dispatch), optionFromName(OpId::Dispatch, "all_gather"));
    QCOMPARE(p.option(OpId::Combine), optionFromName(OpId::Combine, "reduce_scatter"));
    QCOMPARE(p.option(OpId::Router), optionFromName(OpId::Router, "token"));
    QCOMPARE(p.option(OpId::LmHead), optionFromName(OpId::LmHead, "token"));
    QCOMPARE(p.option(OpId::Embedding), optionFromName(OpId::Embedding, "replicated"));
    QCOMPARE(p.option(OpId::QkvProj), optionFromName(OpId::QkvProj, "token"));
}

QTEST_APPLESS_MAIN(TestMoeGather)
#include "tst_moe_gather.moc"

// Placement-aware pricing: groups are placed by the one rank layout (model/placement.h),
// and a group whose ranks span nodes pays the inter-node fabric for its collectives, paced
// by the node that holds the fewest of its ranks.
#include <QtTest>

#include "io/presets.h"
#include "model/disaggregated_plan.h"
#include "model/placement.h"
#include "sim/disaggregated.h"
#include "sim/simulator.h"

using namespace shardlab;

namespace {

// DeepSeek-V3 on 16 H100 nodes, disaggregated.
Scenario deepSeekOn16Nodes()
{
    Scenario s = scenarioPreset("deepseek-v3-256gpu").value;
    s.cluster.nodes = 16;
    s.workload.serving = ServingMode::Disaggregated;
    return s;
}

// A prefill pool of 7 nodes whose stages of 7 GPUs straddle node boundaries.
Plan straddlingPrefillPlan()
{
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = 1;
    p.expertParallel = 7;
    p.pipelineParallel = 8;
    p.dataParallel = 7;
    p.redundantExperts = 3; // 259 slots over 7 EP ranks
    p.batch = 2;
    p.microBatches = 1;
    return p;
}

} // namespace

class TestPlacement : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void consecutiveGroupsSpanTheNodesTheirRanksSitIn();
    void theWorstGroupPacesTheStep();
    void rankCoordinatesFollowTheLayout();
    void alignedGroupsKeepTheHierarchicalPrice();
    void unevenGroupsArePacedByTheirFewestRankNode();
    void stagesStraddlingNodesPayTheInterNodeFabric();
    void aStageSmallerThanANodeHandsOffAcrossNodes();
    void eachOperatorsTrafficNamesTheGroupItRanIn();
};

void TestPlacement::consecutiveGroupsSpanTheNodesTheirRanksSitIn()
{
    // 7 ranks from GPU 7 with 8 per node: GPU 7 in node 0, GPUs 8-13 in node 1.
    const Group g = placeConsecutive(7, 7, 8);
    QCOMPARE(g.nodes, 2);
    QCOMPARE(g.ranksPerNode, 6);
    QCOMPARE(g.fewestPerNode, 1);
    // From a node's start and within it: one node.
    QCOMPARE(placeConsecutive(7, 0, 8).nodes, 1);
    QCOMPARE(placeConsecutive(8, 16, 8).nodes, 1);
    // 20 ranks from GPU 6: 2 + 8 + 8 + 2.
    const Group w = placeConsecutive(20, 6, 8);
    QCOMPARE(w.nodes, 4);
    QCOMPARE(w.ranksPerNode, 8);
    QCOMPARE(w.fewestPerNode, 2);
    // nccl-tests placements: 8 ranks 4 apart are 2 per node over 4 nodes.
    const Group s = placeGroup(8, 4, 8);
    QCOMPARE(s.nodes, 4);
    QCOMPARE(s.ranksPerNode, 2);
    QCOMPARE(s.fewestPerNode, 2);
}

void TestPlacement::theWorstGroupPacesTheStep()
{
    // Groups of 7 end to end: the second (GPUs 7-13) has one rank in node 0; the worst of
    // the eight spans 2 nodes with a single rank in one of them.
    const Group w = worstConsecutiveGroup(7, 8, 8);
    QCOMPARE(w.nodes, 2);
    QCOMPARE(w.fewestPerNode, 1);
    // Groups that divide a node never span one.
    QCOMPARE(worstConsecutiveGroup(4, 64, 8).nodes, 1);
    // Groups of 3 in nodes of 4: GPUs 3-5 span two nodes (1 + 2).
    const Group t = worstConsecutiveGroup(3, 4, 4);
    QCOMPARE(t.nodes, 2);
    QCOMPARE(t.fewestPerNode, 1);
}

void TestPlacement::rankCoordinatesFollowTheLayout()
{
    Plan p;
    p.tensorParallel = 2;
    p.dataParallel = 4;
    p.pipelineParallel = 3;
    p.expertParallel = 4;
    for (long long g = 0; g < 24; ++g) {
        const RankCoordinates c = rankCoordinates(p, g);
        QCOMPARE(c.tensor, int(g % 2));
        QCOMPARE(c.data, int((g / 2) % 4));
        QCOMPARE(c.stage, int(g / 8));
        QCOMPARE(c.expertShard, int((g % 8) / 2)); // expert-TP 8 / 4 = 2 consecutive ranks
        // The GPU is where the layout puts its coordinates back.
        QCOMPARE(c.stage * 8LL + c.data * 2LL + c.tensor, g);
        QCOMPARE(c.instance, 0);
    }
    // Two engine instances: each stage's 8 ranks are two instances of 4, each with its own
    // EP 4 x expert-TP 1 shards.
    p.instances = 2;
    for (long long g = 0; g < 24; ++g) {
        const RankCoordinates c = rankCoordinates(p, g);
        QCOMPARE(c.instance, int((g % 8) / 4));
        QCOMPARE(c.expertShard, int(g % 4));
    }
}

void TestPlacement::alignedGroupsKeepTheHierarchicalPrice()
{
    // 16 ranks as 2 full nodes: the inter-node leg carries 2 (b-1)/b of each node's 1/8
    // share, and the bytes per rank add up to a flat ring's 2 (n-1)/n S.
    const Scenario s = scenarioPreset("deepseek-v3-256gpu").value;
    const LinkModel link = linkModel(s.cluster);
    const double S = 64e6;
    const CollectiveCost c = collectiveCost(Collective::AllReduce, S, placeGroup(16, 1, 8), link);
    QVERIFY(qFuzzyCompare(c.interBytesPerRank, 2.0 * 0.5 * S / 8));
    QVERIFY(qFuzzyCompare(c.bytesPerRank, 2.0 * 15 / 16 * S));
    const CollectiveCost inside = collectiveCost(Collective::AllReduce, S, placeGroup(8, 1, 8), link);
    QCOMPARE(inside.interBytesPerRank, 0.0);
}

void TestPlacement::unevenGroupsArePacedByTheirFewestRankNode()
{
    const Scenario s = scenarioPreset("deepseek-v3-256gpu").value;
    const LinkModel link = linkModel(s.cluster);
    const double S = 64e6;
    // 7 ranks as 1 + 6: the lone rank carries its node's whole share across.
    const CollectiveCost uneven = collectiveCost(Collective::AllReduce, S, placeConsecutive(7, 7, 8), link);
    QVERIFY(qFuzzyCompare(uneven.interBytesPerRank, 2.0 * 0.5 * S));
    // The same 7 ranks inside one node pay NVLink only, and less.
    const CollectiveCost inside = collectiveCost(Collective::AllReduce, S, placeConsecutive(7, 0, 8), link);
    QCOMPARE(inside.interBytesPerRank, 0.0);
    QVERIFY(uneven.seconds > inside.seconds);
    // All-to-all: the lone rank's 6 peers are all remote.
    const CollectiveCost a2a = collectiveCost(Collective::AllToAll, S, placeConsecutive(7, 7, 8), link);
    QVERIFY(qFuzzyCompare(a2a.interBytesPerRank, 6 * S / 49));
}

void TestPlacement::stagesStraddlingNodesPayTheInterNodeFabric()
{
    // DeepSeek-V3 on 16 nodes, disaggregated: a prefill pool of 56 GPUs at EP 7 / PP 8 has
    // stages of 7 GPUs, six of which straddle two nodes. They used to be priced as NVLink
    // with 0 B over the inter-node fabric.
    const Scenario s = deepSeekOn16Nodes();
    const Scenario pool = poolScenario(s, PoolRole::Prefill, 56);
    const Plan p = straddlingPrefillPlan();
    QCOMPARE(planStructureViolations(p, pool), 0u);
    const PlanPlacement placed = placePlan(p, pool.cluster.gpusPerNode);
    QCOMPARE(placed.expertExchange.nodes, 2);
    QCOMPARE(placed.expertExchange.fewestPerNode, 1);
    QVERIFY(placed.stageHandoffCrossesNodes);

    const SimResult r = Simulator(pool).evaluate(p);
    QVERIFY(r.prefill[int(OpId::Dispatch)].commInterBytes > 0 || r.decode[int(OpId::Dispatch)].commInterBytes > 0);
    QVERIFY(r.p2pCrossesNodes);
    // The inter-node links are on the step's path: faster ones make the pass faster.
    Scenario faster = pool;
    faster.cluster.interNodeGBps *= 4;
    const SimResult f = Simulator(faster).evaluate(p);
    QVERIFY2(f.passMs < r.passMs * 0.99, qPrintable(QString("pass %1 ms, with 4x inter-node %2 ms").arg(r.passMs).arg(f.passMs)));
    // The same plan on 7 GPUs per stage that fit in their nodes (nodes of 7) pays none.
    Scenario aligned = pool;
    aligned.cluster.gpusPerNode = 7;
    aligned.cluster.nodes = 8;
    const SimResult a = Simulator(aligned).evaluate(p);
    QCOMPARE(a.decode[int(OpId::Dispatch)].commInterBytes, 0.0);
    QVERIFY(a.passMs < r.passMs);
}

void TestPlacement::aStageSmallerThanANodeHandsOffAcrossNodes()
{
    // 16 GPUs, TP 2 x PP 8: stage 3 (GPUs 6-7) hands its hidden states to stage 4 (GPUs 8-9)
    // in the other node. The old rule (a stage of at least a node crosses) called it NVLink.
    Plan p;
    p.tensorParallel = 2;
    p.dataParallel = 1;
    p.pipelineParallel = 8;
    QVERIFY(placePlan(p, 8).stageHandoffCrossesNodes);
    // On one node nothing crosses.
    p.pipelineParallel = 4;
    QVERIFY(!placePlan(p, 8).stageHandoffCrossesNodes);
}

void TestPlacement::eachOperatorsTrafficNamesTheGroupItRanIn()
{
    // DeepSeek-V3's decode pool of 8 nodes at TP 4 x DP 16, EP 64: the TP groups sit inside
    // a node, the token exchange spans all 8. Each operator's breakdown splits its traffic
    // by the group each collective was priced in: bytes over the inter-node fabric come only
    // from a group that spans nodes, and the groups add up to the operator's totals.
    const Scenario pool = poolScenario(deepSeekOn16Nodes(), PoolRole::Decode, 64);
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = 4;
    p.dataParallel = 16;
    p.expertParallel = 64;
    p.pipelineParallel = 1;
    p.batch = 256;
    p.microBatches = 1;
    QCOMPARE(planStructureViolations(p, pool), 0u);
    const PlanPlacement placed = placePlan(p, pool.cluster.gpusPerNode);
    QVERIFY(!placed.tensor.spansNodes());
    QVERIFY(placed.expertExchange.spansNodes());

    const auto groupBytes = [](const OpBreakdown& o, GroupRole g) { return o.byGroup[int(g)].bytes; };
    SimResult r;
    const auto check = [&](const Plan& plan, GroupRole dispatchGroup) {
        r = Simulator(pool).evaluate(plan);
        const PlanPlacement where = placePlan(plan, pool.cluster.gpusPerNode);
        for (int i = 0; i < kOpCount; ++i) {
            const OpBreakdown& o = r.decode[i];
            double bytes = 0, inter = 0;
            for (int g = 0; g < kGroupRoleCount; ++g) {
                const OpBreakdown::GroupComm& c = o.byGroup[g];
                bytes += c.bytes;
                inter += c.interBytes;
                if (!placedGroup(where, GroupRole(g)).spansNodes())
                    QVERIFY2(c.interBytes == 0, qPrintable(QString("%1 in group %2").arg(opName(OpId(i))).arg(g)));
            }
            QVERIFY(std::fabs(bytes - o.commBytes) <= 1e-9 * std::max(1.0, o.commBytes));
            QVERIFY(std::fabs(inter - o.commInterBytes) <= 1e-9 * std::max(1.0, o.commInterBytes));
        }
        QVERIFY(groupBytes(r.decode[int(OpId::AttnNorm)], GroupRole::Tensor) > 0); // the attention block's all-reduce
        QVERIFY(groupBytes(r.decode[int(OpId::Dispatch)], dispatchGroup) > 0);
        QVERIFY(r.decode[int(OpId::Dispatch)].byGroup[int(dispatchGroup)].interBytes > 0);
    };
    check(p, GroupRole::ExpertExchange);
    // An all-gather dispatch gathers across the replicas only: one rank of each TP group.
    Plan gathered = p;
    gathered.setOption(OpId::Dispatch, optionFromName(OpId::Dispatch, "all_gather"));
    check(gathered, GroupRole::ExpertReplicas);

    // Experts split over an expert-TP group of 4: combine's own all-to-all runs in the
    // exchange group, the reduce-scatter of the experts' partial sums before it in the
    // expert-TP group; each is counted in its own group.
    Plan split = p;
    split.expertParallel = 16;
    QCOMPARE(planStructureViolations(split, pool), 0u);
    QVERIFY(expertTensorParallel(split) > 1);
    check(split, GroupRole::ExpertExchange);
    const OpBreakdown& combine = r.decode[int(OpId::Combine)];
    QVERIFY(groupBytes(combine, GroupRole::ExpertExchange) > 0);
    QVERIFY(groupBytes(combine, GroupRole::ExpertTensor) > 0);
}

QTEST_APPLESS_MAIN(TestPlacement)
#include "tst_placement.moc"

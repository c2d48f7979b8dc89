// The busiest owner of sequences (docs/simulator.md §4, "Busiest owner of sequences"): a
// step of a lock-step group (a MoE instance's replicas; with the `token` split each of their
// TP ranks) waits for the owner with the largest prompt chunk and the longest caches. The
// chunk figure is checked against its definition, against its bounds (no fewer tokens than
// the mean owner's, no more than its budget), and for the properties exact's batch argument
// rests on (non-decreasing, and per token non-increasing, in the step's prompt tokens); the cost
// model prices the busiest owner where it is one, and a dense model's replicas never wait.
#include <QtTest>

#include <cmath>

#include "io/presets.h"
#include "sim/cost_model.h"
#include "sim/megatron.h"
#include "sim/serving_load.h"
#include "sim/simulator.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using shardlab::testing::presetScenario;
using shardlab::testing::qwen3Fp8OnH100x8;

namespace {

double poissonPmf(int k, double mean) { return std::exp(-mean + k * std::log(mean) - std::lgamma(k + 1.0)); }

// An aggregated step of `p` with its prompt chunk.
PhaseContext decodeStep(const CostModel& cm, const Plan& p)
{
    PhaseContext ph;
    cm.phase(p, false, ph);
    return ph;
}

} // namespace

class TestBusiestOwner : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void poissonMaximumByItsDefinition();
    void chunkWithinItsBounds();
    void chunkConcaveThroughZero();
    void tokenSplitRanksPayTheBusiestChunk();
    void tokenSplitRanksPrefillWholePrompts();
    void lockStepReplicasWaitDenseReplicasDoNot();
};

void TestBusiestOwner::poissonMaximumByItsDefinition()
{
    // Two owners: E[max(X, Y)] summed over the joint distribution.
    for (double mean : {0.0625, 1.0, 4.0, 16.0}) { // grid points (64 (i/512)^2): exact there
        double direct = 0;
        for (int i = 0; i < 80; ++i)
            for (int j = 0; j < 80; ++j)
                direct += std::max(i, j) * poissonPmf(i, mean) * poissonPmf(j, mean);
        QVERIFY2(std::abs(expectedMaxPoisson(2, mean) - direct) < 1e-6, qPrintable(QString::number(mean)));
    }
    QCOMPARE(expectedMaxPoisson(1, 2.5), 2.5);
    // Between grid points, and above the grid, within 1% of the sum for two owners.
    for (double mean : {0.7, 5.03, 80.0}) {
        double direct = 0;
        for (int i = 0; i < 200; ++i)
            for (int j = 0; j < 200; ++j)
                direct += std::max(i, j) * poissonPmf(i, mean) * poissonPmf(j, mean);
        QVERIFY2(std::abs(expectedMaxPoisson(2, mean) / direct - 1) < 0.01, qPrintable(QString::number(mean)));
    }
    QVERIFY(expectedMaxPoisson(8, 0.7) > expectedMaxPoisson(4, 0.7));
}

void TestBusiestOwner::chunkWithinItsBounds()
{
    const double budget = 1024, prompt = 5000;
    for (double chunk : {1.0, 100.0, 1000.0, 5000.0, 8000.0}) {
        const double mean = chunk / 8, b = busiestRankChunk(chunk, 8, budget, prompt);
        QVERIFY(b >= mean - 1e-9);
        QVERIFY(b <= std::max(mean, budget) + 1e-9);
    }
    // Less than one piece in the whole step lands on one owner, nearly all of it.
    QVERIFY(busiestRankChunk(10, 8, budget, prompt) > 0.95 * 10);
    // One owner holds the mean.
    QCOMPARE(busiestRankChunk(700, 1, budget, prompt), 700.0);
}

void TestBusiestOwner::chunkConcaveThroughZero()
{
    // f(0) = 0, non-decreasing, and f(c) / c never rises with c: what exact's batch argument
    // needs (cost per sequence non-increasing). Within the token budget (no owner's mean
    // above its budget, as every valid plan's) it is concave too.
    for (int owners : {2, 8, 64}) {
        const double budget = 1024;
        double prev = 0, prevSlope = 1e300, prevRatio = 1e300;
        for (double c = 16; c <= 2 * owners * budget; c += 16) {
            const double f = busiestRankChunk(c, owners, budget, 3000);
            const double slope = (f - prev) / 16;
            const QString at = QString("owners %1 chunk %2").arg(owners).arg(c);
            QVERIFY2(f >= prev - 1e-9, qPrintable(at));
            QVERIFY2(f / c <= prevRatio + 1e-12, qPrintable(at));
            if (c <= owners * budget)
                QVERIFY2(slope <= prevSlope + 1e-6, qPrintable(at));
            prev = f, prevSlope = slope, prevRatio = f / c;
        }
    }
}

void TestBusiestOwner::tokenSplitRanksPayTheBusiestChunk()
{
    Scenario s = presetScenario("mixtral-8x22b-64gpu");
    s.workload.promptTokens = 4000;
    s.workload.outputTokens = 500;
    const CostModel cm(s, SimConstants{});
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = 8, p.expertParallel = 8, p.pipelineParallel = 8, p.dataParallel = 1, p.batch = 64;
    const PhaseContext ph = decodeStep(cm, p);
    QVERIFY(ph.chunkTokens > 0);
    QVERIFY(ph.chunkBusiestRank > 1.5 * ph.chunkTokens / 8); // well above the mean rank's
    QVERIFY(ph.tokensBusiestRank > ph.tokensPerRank);
    QCOMPARE(ph.chunkReplica, ph.chunkTokens); // one replica per instance: no other to wait for
    // The attention op split by sequences costs more than at the mean rank's chunk.
    const int tokenSplit = [] {
        for (int o = 0; o < opInfo(OpId::Attention).optionCount; ++o)
            if (opOption(OpId::Attention, o).split == Split::Tokens)
                return o;
        return -1;
    }();
    QVERIFY(tokenSplit >= 0);
    PhaseContext mean = ph;
    mean.chunkBusiestRank = ph.chunkTokens / 8;
    mean.tokensBusiestRank = ph.tokensPerRank;
    QVERIFY(cm.op(OpId::Attention, tokenSplit, ph).timeS > cm.op(OpId::Attention, tokenSplit, mean).timeS);
}

void TestBusiestOwner::tokenSplitRanksPrefillWholePrompts()
{
    // Qwen3-235B in FP8 on 8 H100, one 4096-token prompt at a time: attention data
    // parallelism (the token split, TP 8) against head-split attention, the same degrees.
    const Scenario s = qwen3Fp8OnH100x8({4096, 256, 1e6, 1e6});
    Plan head;
    applyMegatronSharding(head);
    head.tensorParallel = 8, head.expertParallel = 8, head.pipelineParallel = 1, head.dataParallel = 1;
    head.batch = 16;
    Plan token = head;
    int tokenSplit = -1;
    for (int o = 0; o < opInfo(OpId::Attention).optionCount; ++o)
        if (opOption(OpId::Attention, o).split == Split::Tokens)
            tokenSplit = o;
    QVERIFY(tokenSplit >= 0);
    token.setOption(OpId::Attention, tokenSplit);
    const Simulator sim(s);
    const SimResult rh = sim.evaluate(head), rt = sim.evaluate(token);
    QVERIFY(rh.valid && rt.valid);
    // The rank that owns the prompt prefills its attention alone: as one GPU does, not an
    // eighth of it.
    Plan one = token;
    one.tensorParallel = 1, one.dataParallel = 8;
    const SimResult r1 = sim.evaluate(one);
    const double owner = rt.prefill[static_cast<int>(OpId::Attention)].computeUs,
                 alone = r1.prefill[static_cast<int>(OpId::Attention)].computeUs;
    QVERIFY2(std::abs(owner - alone) < 0.01 * alone, qPrintable(QStringLiteral("%1 vs %2 us").arg(owner).arg(alone)));
    // Its pieces are at most its 1/8 of the 8192-token budget: at least four steps before
    // the first token, where the head-split group takes the prompt in one.
    QVERIFY2(rt.ttftMs > 1.5 * rh.ttftMs, qPrintable(QStringLiteral("%1 vs %2 ms").arg(rt.ttftMs).arg(rh.ttftMs)));
    // A run of lone requests takes as many steps per prompt.
    LoadSpec lone;
    lone.protocol = LoadProtocol::Concurrency;
    lone.concurrency = 1;
    lone.requests = 3;
    lone.warmupRequests = 0;
    const LoadRun run = simulateLoad(sim, token, rt, lone);
    QVERIFY2(run.ok(), run.error.c_str());
    QVERIFY2(run.figures.steps >= 3 * (4 + 255), qPrintable(QString::number(run.figures.steps)));
    QVERIFY(run.figures.ttftMeanMs > 3.5 * rt.cycleMs);
}

void TestBusiestOwner::lockStepReplicasWaitDenseReplicasDoNot()
{
    Scenario moe = presetScenario("mixtral-8x22b-64gpu");
    moe.workload.promptTokens = 4000;
    moe.workload.outputTokens = 500;
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = 1, p.expertParallel = 8, p.pipelineParallel = 8, p.dataParallel = 8, p.batch = 16;
    p.instances = 1; // the 8 replicas exchange tokens every MoE layer
    const PhaseContext locked = decodeStep(CostModel(moe, SimConstants{}), p);
    QVERIFY(locked.chunkReplica > 1.5 * locked.chunkTokens);
    QVERIFY(locked.ctxReplica > locked.ctx);
    QVERIFY(locked.tokensReplica > locked.tokens);

    Scenario dense = presetScenario("llama3-70b-8gpu");
    dense.workload.promptTokens = 4000;
    dense.workload.outputTokens = 500;
    Plan d;
    applyMegatronSharding(d);
    d.tensorParallel = 1, d.pipelineParallel = 1, d.dataParallel = 8, d.batch = 16;
    const PhaseContext alone = decodeStep(CostModel(dense, SimConstants{}), d);
    QCOMPARE(alone.chunkReplica, alone.chunkTokens);
    QCOMPARE(alone.ctxReplica, alone.ctx);
    QCOMPARE(alone.tokensReplica, alone.tokens);
}

QTEST_GUILESS_MAIN(TestBusiestOwner)
#include "tst_busiest_owner.moc"

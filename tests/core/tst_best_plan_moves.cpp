// The moves that finish a search's best plan (search/best_plan_moves.h), on plans one move
// away from exact's optimum.
#include <QtTest>

#include "runner/disaggregated_search.h"
#include "search/best_plan_moves.h"
#include "search/budgeted_evaluator.h"
#include "sim/disaggregated.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

class TestBestPlanMoves : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void microBatchMoveFillsThePipeline();
};

// Llama-3-405B served disaggregated on 256 H200s: exact's prefill pool is a full pipeline
// of one prompt per micro-batch (TP 4 x PP 2, 2 prompts in 2 micro-batches). The same pool
// with one prompt fewer in one micro-batch fewer leaves a stage idle; one more prompt on
// those micro-batches breaks the TTFT limit, so the batch raise alone cannot reach the
// optimum. The micro-batch move tries the optimum's count first (the count nearest the
// plan's, the larger of two as near) and ends at the optimum's pool.
void TestBestPlanMoves::microBatchMoveFillsThePipeline()
{
    const Scenario s =
        resourceScenario("benchmarks/disaggregated-held-out/llama3-405b-h200-256gpu-8000-1000-disaggregated.json");
    const SearchOutcome best = runSearch(s, budgeted("exact", 4000, 0));
    QVERIFY2(best.provedOptimal, best.message.c_str());
    const Plan optimum = best.deployment.pools.at(0).plan;
    QVERIFY2(optimum.pipelineParallel >= 2 && optimum.microBatches == optimum.pipelineParallel
                 && optimum.batch == optimum.microBatches,
             "exact's prefill pool is no longer a full pipeline of one prompt per micro-batch");

    const DisaggregatedSimulator dsim(s);
    const Simulator& sim = dsim.pool(PoolRole::Prefill, static_cast<int>(optimum.gpus()));
    const SearchSpace space(sim.scenario(), SearchSpaceOptions{});
    Plan shallow = optimum;
    shallow.batch = shallow.microBatches = optimum.microBatches - 1;
    Plan deeper = shallow;
    ++deeper.batch;
    QVERIFY(sim.evaluate(shallow).valid);
    QVERIFY2(!sim.evaluate(deeper).valid, "one more prompt on the same micro-batches now fits: the case shows nothing");

    BudgetedEvaluator ev(sim, 100, StopToken(), nullptr);
    ev.recordExternal(shallow, sim.evaluate(shallow), 0);
    QVERIFY(moveMicroBatches(ev, space));
    QCOMPARE(ev.best().microBatches, optimum.microBatches);
    QCOMPARE(ev.best().batch, optimum.batch);
    QVERIFY(ev.bestValue() >= sim.evaluate(optimum).tokensPerSPerGpu * (1 - 1e-12));
    QVERIFY(ev.calls() <= optimum.pipelineParallel + 8); // the counts, then the batch raise
}

QTEST_GUILESS_MAIN(TestBestPlanMoves)
#include "tst_best_plan_moves.moc"

// Disaggregated pools under a load protocol (sim/serving_load_disaggregated.h): a lone
// request's TTFT is exactly its parts, the prefill queue answers the load and an overloaded
// open loop is saturated, KV caches of one pass wait for the links, a closed loop stays
// within the capacity, runs are deterministic, and the deployment outcome carries it all.
#include <QtTest>

#include <cmath>

#include "sim/deployment.h"
#include "sim/serving_load_disaggregated.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {
struct Setup {
    Scenario s;
    DisaggregatedPlan plan;
    DisaggregatedResult steady;
};
// Llama-3-70B with long prompts on 8 GPUs, served by the recipe's best split.
Setup pools()
{
    Setup x;
    x.s = presetScenario("llama3-70b-8gpu");
    x.s.workload.serving = ServingMode::Disaggregated;
    x.s.workload.promptTokens = 4000;
    x.s.workload.outputTokens = 200;
    x.s.workload.ttftSloMs = 1e9;
    const DisaggregatedSimulator sim(x.s);
    const DisaggregatedRecipe m = megatronDisaggregated(sim);
    x.plan = m.plan;
    x.steady = m.result;
    return x;
}
} // namespace

class TestServingLoadDisaggregated : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void loneRequestSeesItsParts();
    void queueAnswersTheLoadAndSaturates();
    void cachesOfOnePassWaitForTheLinks();
    void closedLoopIsDeterministicAndWithinCapacity();
    void outcomeCarriesTheRun();
};

// Far apart requests: TTFT = one prompt's pass + its KV transfer + one decode step of one
// sequence (no waiting anywhere); TPOT = that decode step.
void TestServingLoadDisaggregated::loneRequestSeesItsParts()
{
    const Setup x = pools();
    QVERIFY(x.steady.valid);
    const DisaggregatedSimulator sim(x.s);
    const LoadRun run = simulateDisaggregatedLoad(sim, x.plan, x.steady, openLoop(1e-3, 5));
    QVERIFY2(run.ok(), run.error.c_str());
    const LoadFigures& f = run.figures;
    QVERIFY(f.pools);
    const Simulator& ps = sim.pool(PoolRole::Prefill, static_cast<int>(x.plan.prefill.gpus()));
    const Simulator& ds = sim.pool(PoolRole::Decode, static_cast<int>(x.plan.decode.gpus()));
    Plan one = x.plan.prefill;
    one.batch = std::max(1, one.microBatches);
    const double passMs = ps.evaluate(one).cycleMs;
    SimResult r;
    const StepLoad single{1, 0};
    ds.evaluate(x.plan.decode, r, false, &single);
    const double stepMs = r.tpotMs * r.tokensPerStep;
    const double expected = passMs + x.steady.prefill.kvTransferMs + stepMs;
    QVERIFY2(std::fabs(f.ttftMeanMs - expected) < 1e-6 * expected,
             qPrintable(QStringLiteral("TTFT %1 vs %2").arg(f.ttftMeanMs).arg(expected)));
    QVERIFY(std::fabs(f.tpotMeanMs - r.tpotMs) < 1e-6 * r.tpotMs);
    QCOMPARE(f.prefillWaitMeanMs, 0.0);
    QVERIFY(std::fabs(f.kvTransferMeanMs - x.steady.prefill.kvTransferMs) < 1e-6);
    QCOMPARE(f.decodeWaitMeanMs, 0.0);
    QVERIFY(!f.saturated);
}

// TTFT rises with the offered rate, mostly as waiting for a prefill pass; past the capacity
// the open loop is saturated, below it not.
void TestServingLoadDisaggregated::queueAnswersTheLoadAndSaturates()
{
    const Setup x = pools();
    const DisaggregatedSimulator sim(x.s);
    const double capacity = x.steady.outputTokensPerS / x.s.workload.outputTokens;
    QVERIFY(capacity > 0);
    double last = 0, lastWait = -1;
    for (double share : {0.2, 0.7, 0.95, 2.0}) {
        const LoadRun run = simulateDisaggregatedLoad(sim, x.plan, x.steady, openLoop(share * capacity, 400));
        QVERIFY2(run.ok(), run.error.c_str());
        QVERIFY(run.figures.ttftMeanMs > last);
        QVERIFY(run.figures.prefillWaitMeanMs >= lastWait);
        QCOMPARE(run.figures.saturated, share > 1);
        QVERIFY(std::fabs(run.figures.capacityRequestsPerS - capacity) < 1e-9 * capacity);
        last = run.figures.ttftMeanMs;
        lastWait = run.figures.prefillWaitMeanMs;
    }
}

// Every request at once: passes carry several prompts, and each prompt's cache waits for
// the one before it on the replica's links, so the mean transfer exceeds one transfer.
void TestServingLoadDisaggregated::cachesOfOnePassWaitForTheLinks()
{
    const Setup x = pools();
    QVERIFY(x.plan.prefill.batch > 1);
    const DisaggregatedSimulator sim(x.s);
    const LoadRun run = simulateDisaggregatedLoad(sim, x.plan, x.steady,
                                                  openLoop(std::numeric_limits<double>::infinity(), 64));
    QVERIFY2(run.ok(), run.error.c_str());
    QVERIFY(run.figures.kvTransferMeanMs > 1.01 * x.steady.prefill.kvTransferMs);
    QVERIFY(run.figures.saturated);
}

// A closed loop: the same seed gives the same figures; the throughput stays within the
// steady state's (its capacity at the plans' batches), up to the run's edges.
void TestServingLoadDisaggregated::closedLoopIsDeterministicAndWithinCapacity()
{
    const Setup x = pools();
    const DisaggregatedSimulator sim(x.s);
    LoadSpec l;
    l.protocol = LoadProtocol::Concurrency;
    l.concurrency = 32;
    l.uniformLengths = true;
    const LoadRun a = simulateDisaggregatedLoad(sim, x.plan, x.steady, l);
    const LoadRun b = simulateDisaggregatedLoad(sim, x.plan, x.steady, l);
    QVERIFY2(a.ok(), a.error.c_str());
    QCOMPARE(a.figures.ttftMeanMs, b.figures.ttftMeanMs);
    QCOMPARE(a.figures.tpotP99Ms, b.figures.tpotP99Ms);
    QCOMPARE(a.figures.outputTokensPerS, b.figures.outputTokensPerS);
    QCOMPARE(a.figures.requests, 320);
    QVERIFY(a.figures.outputTokensPerS > 0);
    QVERIFY(a.figures.outputTokensPerS <= 1.05 * x.steady.outputTokensPerS);
    l.seed = 2;
    const LoadRun c = simulateDisaggregatedLoad(sim, x.plan, x.steady, l);
    QVERIFY(c.figures.ttftMeanMs != a.figures.ttftMeanMs);
}

// The deployment outcome runs the scenario's protocol on both pools; a plan whose split
// does not fit says so instead of printing figures.
void TestServingLoadDisaggregated::outcomeCarriesTheRun()
{
    Setup x = pools();
    x.s.workload.load = openLoop(1.0, 50);
    const DeploymentOutcome o = deploymentOutcome(x.s, x.plan, DisaggregatedSimulator(x.s).evaluate(x.plan));
    QVERIFY(o.underLoad);
    QVERIFY2(o.loadError.empty(), o.loadError.c_str());
    QVERIFY(o.load.pools);
    QVERIFY(o.load.ttftMeanMs > 0 && std::isfinite(o.load.ttftMeanMs));

    DisaggregatedPlan wrong = x.plan;
    wrong.decode.dataParallel *= 4; // more GPUs than the cluster has
    const DisaggregatedResult bad = DisaggregatedSimulator(x.s).evaluate(wrong);
    const LoadRun run = simulateDisaggregatedLoad(DisaggregatedSimulator(x.s), wrong, bad, x.s.workload.load);
    QVERIFY(!run.ok());
    QVERIFY2(run.error.find("does not fit") != std::string::npos, run.error.c_str());
}

QTEST_APPLESS_MAIN(TestServingLoadDisaggregated)
#include "tst_serving_load_disaggregated.moc"

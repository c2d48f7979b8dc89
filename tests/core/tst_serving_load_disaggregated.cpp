// Disaggregated pools under a load protocol (sim/serving_load_disaggregated.h): a lone
// request's TTFT is exactly its parts, the prefill queue answers the load and an overloaded
// open loop is saturated, KV caches of one pass wait for the links, a closed loop stays
// within the capacity, runs are deterministic, and the deployment outcome carries it all.
#include <QtTest>

#include "model/engine_caps.h"

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
    void sglangStreamsThePrefillsToken();
    void queueAnswersTheLoadAndSaturates();
    void cachesOfOnePassWaitForTheLinks();
    void closedLoopIsDeterministicAndWithinCapacity();
    void outcomeCarriesTheRun();
    void moeDecodeReplicasStepTogether();
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

// SGLang's decode instance streams the token the prefill computed as it takes the request
// in: a lone request's TTFT is its pass and its cache's transfer, no decode step, and its
// later tokens come one a step.
void TestServingLoadDisaggregated::sglangStreamsThePrefillsToken()
{
    Setup x = pools();
    x.s.workload.engine = CollectiveEngine::Sglang;
    const DisaggregatedSimulator sim(x.s);
    const DisaggregatedRecipe m = megatronDisaggregated(sim);
    x.plan = m.plan;
    x.steady = m.result;
    QVERIFY(x.steady.valid);
    const LoadRun run = simulateDisaggregatedLoad(sim, x.plan, x.steady, openLoop(1e-3, 5));
    QVERIFY2(run.ok(), run.error.c_str());
    const Simulator& ps = sim.pool(PoolRole::Prefill, static_cast<int>(x.plan.prefill.gpus()));
    const Simulator& ds = sim.pool(PoolRole::Decode, static_cast<int>(x.plan.decode.gpus()));
    Plan one = x.plan.prefill;
    one.batch = std::max(1, one.microBatches);
    const double expected = ps.evaluate(one).cycleMs + x.steady.prefill.kvTransferMs;
    QVERIFY2(std::fabs(run.figures.ttftMeanMs - expected) < 1e-6 * expected,
             qPrintable(QStringLiteral("TTFT %1 vs %2").arg(run.figures.ttftMeanMs).arg(expected)));
    SimResult r;
    const StepLoad single{1, 0};
    ds.evaluate(x.plan.decode, r, false, &single);
    QVERIFY(std::fabs(run.figures.tpotMeanMs - r.tpotMs) < 1e-6 * r.tpotMs);
    QVERIFY(streamsPrefillFirstToken(CollectiveEngine::Sglang));
    QVERIFY(!streamsPrefillFirstToken(CollectiveEngine::Vllm));
    QVERIFY(!streamsPrefillFirstToken(CollectiveEngine::TrtLlm));

    // A one-token answer is done when the decode engine takes it in: no decode step at all,
    // end-to-end = TTFT, no TPOT.
    Setup y = pools();
    y.s.workload.engine = CollectiveEngine::Sglang;
    y.s.workload.outputTokens = 1;
    const DisaggregatedSimulator simY(y.s);
    const DisaggregatedRecipe mY = megatronDisaggregated(simY);
    QVERIFY(mY.result.valid);
    const LoadRun oneToken = simulateDisaggregatedLoad(simY, mY.plan, mY.result, openLoop(1e-3, 5));
    QVERIFY2(oneToken.ok(), oneToken.error.c_str());
    QCOMPARE(oneToken.figures.requests, 5);
    QVERIFY(std::fabs(oneToken.figures.e2eMeanMs - oneToken.figures.ttftMeanMs) < 1e-9 * oneToken.figures.ttftMeanMs);
    QCOMPARE(oneToken.figures.tpotMeanMs, 0.0);
    QCOMPARE(oneToken.figures.steps, 0LL);
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
// steady state's (its capacity at the plans' batches), up to the run's edges; the warm-up
// count (2 C by default here) changes nothing.
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
    // The warm-up is a phase of its own before the measured run: its count changes nothing.
    l.seed = 1;
    l.warmupRequests = 0;
    const LoadRun cold = simulateDisaggregatedLoad(sim, x.plan, x.steady, l);
    QCOMPARE(cold.figures.ttftMeanMs, a.figures.ttftMeanMs);
    QCOMPARE(cold.figures.prefillWaitMeanMs, a.figures.prefillWaitMeanMs);
    QCOMPARE(cold.figures.outputTokensPerS, a.figures.outputTokensPerS);
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

// An MoE decode pool's replicas of one engine instance step together. With short outputs
// and a rate at which each replica's previous request has long finished when its next one
// arrives (requests go to the replicas in turn), a replica stepping alone would start every
// request at once: no decode wait. In lock step the group is nearly always mid-step, so a
// request waits for that step's end, about half a step on average.
void TestServingLoadDisaggregated::moeDecodeReplicasStepTogether()
{
    Scenario s = presetScenario("deepseek-v3-256gpu");
    s.workload.serving = ServingMode::Disaggregated;
    s.workload.outputTokens = 8;
    s.workload.ttftSloMs = 1e9;
    s.workload.tpotSloMs = 1e9;
    const DisaggregatedSimulator sim(s);
    DisaggregatedRecipe m = megatronDisaggregated(sim);
    // Many replicas in one instance: the decode pool as 32 attention replicas over EP 32.
    m.plan.decode.tensorParallel = 1;
    m.plan.decode.expertParallel = 32;
    m.plan.decode.pipelineParallel = 1;
    m.plan.decode.dataParallel = 32;
    m.plan.decode.microBatches = 1;
    m.plan.decode.batch = 16;
    m.plan.prefill.tensorParallel = 8;
    m.plan.prefill.expertParallel = 16;
    m.plan.prefill.pipelineParallel = 1;
    m.plan.prefill.microBatches = 1;
    m.plan.prefill.dataParallel = static_cast<int>(s.cluster.totalGpus() - 32) / 8;
    m.plan.prefill.instances = m.plan.prefill.dataParallel / 2; // engines of TP 8 x DP 2, EP 16
    m.plan.prefill.batch = 2;
    m.result = sim.evaluate(m.plan);
    QVERIFY2(m.result.valid, qPrintable(QStringLiteral("%1 / prefill %2 %3 GB / decode %4 %5 GB")
                                            .arg(m.result.structure.empty() ? "" : m.result.structure.front().reason.c_str())
                                            .arg(m.result.prefill.violations).arg(m.result.prefill.memory.totalGb)
                                            .arg(m.result.decode.violations).arg(m.result.decode.memory.totalGb)));
    const Simulator& ds = sim.pool(PoolRole::Decode, static_cast<int>(m.plan.decode.gpus()));
    const int group = ds.costs().lockStepReplicas(m.plan.decode);
    const int replicas = m.plan.decode.dataParallel;
    QVERIFY2(group > 1 && replicas % group == 0, qPrintable(QStringLiteral("%1 of %2").arg(group).arg(replicas)));
    SimResult r;
    const StepLoad single{1, 0};
    ds.evaluate(m.plan.decode, r, false, &single);
    const double stepMs = r.tpotMs * r.tokensPerStep;
    // Requests in flight on the decode pool: rate x (8 steps); per replica, the time between
    // its requests (replicas / rate) is over ten times a request's 8 steps.
    const double rate = std::min(0.5 * m.result.outputTokensPerS / s.workload.outputTokens,
                                 replicas / (10 * 8 * stepMs * 1e-3));
    QVERIFY2(rate * 8 * stepMs * 1e-3 > 2, qPrintable(QStringLiteral("rate %1, step %2 ms, %3 of %4, capacity %5").arg(rate).arg(stepMs).arg(group).arg(replicas).arg(m.result.outputTokensPerS / s.workload.outputTokens))); // the group is rarely idle
    const LoadRun run = simulateDisaggregatedLoad(sim, m.plan, m.result, openLoop(rate, 400));
    QVERIFY2(run.ok(), run.error.c_str());
    QVERIFY2(run.figures.decodeWaitMeanMs > 0.2 * stepMs,
             qPrintable(QStringLiteral("decode wait %1 ms, step %2 ms").arg(run.figures.decodeWaitMeanMs).arg(stepMs)));
    QVERIFY(run.figures.decodeWaitMeanMs < 1.5 * stepMs);
    QVERIFY(run.figures.tpotMeanMs >= 0.999 * r.tpotMs);
}

QTEST_APPLESS_MAIN(TestServingLoadDisaggregated)
#include "tst_serving_load_disaggregated.moc"

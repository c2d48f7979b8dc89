// The step timeline (report/step_timeline.h): built from the cost account, its step lane
// adds up to the busiest stage's step and its cycle lane to the cycle the headline's
// throughput implies, on one-pool plans with and without pipelines and two-batch overlap,
// and on both pools of a disaggregated deployment.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "io/presets.h"
#include "io/scenario_json.h"
#include "report/result_json.h"
#include "report/step_timeline.h"
#include "runner/run_search.h"
#include "sim/megatron.h"
#include "tst_search_fixtures.h"

using namespace shardlab;

namespace {

Scenario preset(const char* name) { return testing::presetScenario(name); }

DeploymentOutcome exactBest(const Scenario& s)
{
    SearchOptions o;
    o.algorithm = "exact";
    const SearchOutcome r = runSearch(s, o);
    if (!r.found)
        qFatal("exact found no plan");
    return r.deployment;
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max({1.0, std::fabs(a), std::fabs(b)}); }

// The lanes' arithmetic: contiguous bars, the step's parts less the hidden time equal the
// stage step, the cycle equals micro-batches x (step + the account's bubble share).
void checkLanes(const PoolOutcome& pool)
{
    const StepTimeline t = stepTimeline(pool);
    QVERIFY(t.ok);
    QVERIFY(!t.step.empty() && !t.cycle.empty());
    double end = 0, hidden = 0;
    for (const TimelineBar& b : t.step) {
        QVERIFY(b.durationUs > 0);
        if (b.kind == BarKind::Overlap) {
            hidden += b.durationUs;
            continue;
        }
        QVERIFY2(near(b.startUs, end), b.label.c_str());
        end = b.startUs + b.durationUs;
        if (b.kind == BarKind::Comm) {
            const OpBreakdown& o = pool.result.decode[static_cast<int>(b.id)];
            QCOMPARE(b.link == "inter-node fabric", o.commInterBytes > 0);
        }
    }
    QCOMPARE(hidden > 0, pool.plan.twoBatchOverlap && pool.result.overlapHiddenUs > 0);
    QVERIFY2(near(end - hidden, pool.result.stageStepUs), qPrintable(QString::number(end - hidden)));
    QVERIFY(near(t.stepUs, pool.result.stageStepUs));
    double c = 0;
    int steps = 0;
    for (const TimelineBar& b : t.cycle) {
        QVERIFY(near(b.startUs, c));
        c += b.durationUs;
        steps += b.kind == BarKind::Step;
    }
    QCOMPARE(steps, std::max(1, pool.plan.microBatches));
    QVERIFY(near(c, t.cycleUs));
    // The cycle the headline implies: batch x DP sequences per cycle.
    const CostAccount a = costAccount(pool);
    QVERIFY(near(t.cycleUs * a.perStepUs / std::max(1, pool.plan.microBatches), a.gpuUsPerToken));
}

} // namespace

class TestStepTimeline : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void lanesAddUpOnShippedPlans()
    {
        for (const char* name : {"llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu"}) {
            const Scenario s = preset(name);
            checkLanes(exactBest(s).pools.front());
            const RecipePlan rp = megatronPlan(Simulator(s));
            QVERIFY(rp.found);
            checkLanes(poolOutcome(s, rp.plan, rp.result));
        }
    }

    // DeepSeek-V3's optimum overlaps two half-batches: the hidden time is drawn over the
    // step's end, and the aggregated cycle is the TPOT.
    void overlapAndCycle()
    {
        const Scenario s = preset("deepseek-v3-256gpu");
        const PoolOutcome pool = exactBest(s).pools.front();
        QVERIFY(pool.plan.twoBatchOverlap);
        const StepTimeline t = stepTimeline(pool);
        QCOMPARE(t.step.back().kind, BarKind::Overlap);
        QVERIFY(near(t.step.back().durationUs, pool.result.overlapHiddenUs));
        QVERIFY(near(t.cycleUs / 1000, pool.result.tpotMs));
        const auto text = timelineText(t);
        QVERIFY(text.size() == t.step.size() + t.cycle.size() + 4);
        const nlohmann::json j = nlohmann::json::parse(timelineToJson(t, "plan"));
        QCOMPARE(j["step"].size(), t.step.size());
        QCOMPARE(j["cycle_us"].get<double>(), t.cycleUs);
    }

    // An operator's comm bar names every collective its time holds: Llama-3-70B's
    // vocabulary-split head at TP 8 takes the last layer's all-reduce on its way in and
    // gathers its logits for sampling, where the bar named only the larger of the two.
    void commBarsNameEveryCollective()
    {
        const Scenario s = preset("llama3-70b-8gpu");
        const RecipePlan rp = megatronPlan(Simulator(s));
        QVERIFY(rp.found);
        QCOMPARE(rp.plan.tensorParallel, 8);
        const StepTimeline t = stepTimeline(poolOutcome(s, rp.plan, rp.result));
        const auto head = std::find_if(t.step.begin(), t.step.end(), [](const TimelineBar& b) {
            return b.kind == BarKind::Comm && b.id == OpId::LmHead;
        });
        QVERIFY(head != t.step.end());
        QCOMPARE(head->label, std::string("lm_head (all-reduce; all-gather)"));
    }

    // DeepSeek-V3's first three layers are dense. Over four stages the busiest is the last,
    // MoE layers only: attn_norm's bar there names the all-gather its input takes after
    // combine, not the all-reduce it takes after the dense layers' down projection, which
    // only the first stage runs.
    void commBarsNameTheStagesOwnCollectives()
    {
        const Scenario s = preset("deepseek-v3-256gpu");
        Plan p = megatronPlan(Simulator(s)).plan;
        QCOMPARE(p.tensorParallel, 8);
        p.pipelineParallel = 4;
        p.dataParallel /= 4;
        p.microBatches = 4;
        const SimResult r = Simulator(s).evaluate(p);
        QVERIFY(r.structureChecks == 0);
        QVERIFY(r.decode[static_cast<int>(OpId::LmHead)].present);  // the last stage
        QVERIFY(!r.decode[static_cast<int>(OpId::GateUp)].present); // no dense layer in it
        const std::vector<OpConversion> whole = opConversions(s.model, p, OpId::AttnNorm);
        QCOMPARE(whole.size(), size_t(2));
        QVERIFY(whole[0].denseLayers && !whole[0].moeLayers && whole[0].kind == Collective::AllReduce);
        QVERIFY(!whole[1].denseLayers && whole[1].moeLayers && whole[1].kind == Collective::AllGather);
        const StepTimeline t = stepTimeline(poolOutcome(s, p, r));
        const auto norm = std::find_if(t.step.begin(), t.step.end(), [](const TimelineBar& b) {
            return b.kind == BarKind::Comm && b.id == OpId::AttnNorm;
        });
        QVERIFY(norm != t.step.end());
        QCOMPARE(norm->label, std::string("attn_norm (all-gather)"));
    }

    // A pipeline hands each micro-batch to the next stage and waits for the others.
    void pipelineTransfersAndWait()
    {
        Scenario s = preset("llama3-70b-8gpu");
        Plan p = megatronPlan(Simulator(s)).plan;
        p.tensorParallel = 4;
        p.pipelineParallel = 2;
        p.dataParallel = 1;
        p.microBatches = 2;
        const SimResult r = Simulator(s).evaluate(p);
        QVERIFY(r.structureChecks == 0);
        const PoolOutcome pool = poolOutcome(s, p, r);
        checkLanes(pool);
        const StepTimeline t = stepTimeline(pool);
        int transfers = 0;
        for (const TimelineBar& b : t.cycle)
            transfers += b.kind == BarKind::Transfer;
        QCOMPARE(transfers, 2);
    }

    // Speculative decoding: a step emits the accepted drafts too, and the MTP module's
    // drafting passes are a part of the account and a bar of the step; both still add up
    // to the headline.
    void speculativeDrafting()
    {
        Scenario s = preset("deepseek-v3-256gpu");
        s.workload.speculative.method = SpeculativeMethod::Mtp;
        s.workload.speculative.draftTokens = 2;
        const RecipePlan rp = megatronPlan(Simulator(s));
        QVERIFY(rp.found);
        QVERIFY(rp.result.draftUs > 0 && rp.result.tokensPerStep > 1);
        const PoolOutcome pool = poolOutcome(s, rp.plan, rp.result);
        checkLanes(pool);
        const CostAccount a = costAccount(pool);
        double sum = 0, drafting = 0;
        for (const CostPart& part : a.parts) {
            sum += part.gpuUsPerToken;
            if (part.kind == CostPartKind::Drafting)
                drafting += part.stepUs;
            QVERIFY2(part.kind != CostPartKind::PipelineBubble || part.stepUs > -1e-6, "no negative bubble");
        }
        QVERIFY(near(sum, a.gpuUsPerToken));
        QVERIFY(near(a.gpuUsPerToken, 1e6 / rp.result.tokensPerSPerGpu));
        QVERIFY(near(drafting, rp.result.draftUs));
        QVERIFY(a.draftShare > 0);
        int bars = 0;
        for (const TimelineBar& b : stepTimeline(pool).step)
            bars += b.kind == BarKind::Draft && near(b.durationUs, rp.result.draftUs);
        QCOMPARE(bars, 1);
    }

    // Both pools of a disaggregated deployment, the prefill pool per prompt token.
    void disaggregatedPools()
    {
        auto s = loadScenarioFile(std::string(SHARDLAB_RESOURCES)
                                  + "/examples/disaggregation/llama3-70b-64gpu-8000-1000-disaggregated.json");
        QVERIFY(s.ok());
        const DeploymentOutcome o = exactBest(s.value);
        QCOMPARE(int(o.pools.size()), 2);
        for (const PoolOutcome& pool : o.pools)
            checkLanes(pool);
        QCOMPARE(QString::fromStdString(stepTimeline(o.pools.front()).unit), QString("prompt token"));
    }
};

QTEST_APPLESS_MAIN(TestStepTimeline)
#include "tst_step_timeline.moc"

// Independent engine instances: the most common MoE deployment, several engines behind a
// router each running e.g. TP 8 x EP 8, is a plan (instances), its expert groups are an
// instance's ranks, the rules and the space agree on it, plan files carry it, exact covers
// it and the export says how to start it.
#include <QtTest>

#include "io/presets.h"
#include "io/scenario_json.h"
#include "model/placement.h"
#include "model/plan_checks.h"
#include "report/launch_config.h"
#include "runner/run_search.h"
#include "search/search_space.h"
#include "sim/batch.h"
#include "sim/simulator.h"

using namespace shardlab;

namespace {

Scenario preset(const char* name) { return scenarioPreset(name).value; }

// DeepSeek-V3 on 256 GPUs as 16 engines of two nodes each: TP 8 x DP 2, EP 16 (its FP8
// weights do not fit one node of 80 GB GPUs).
Plan sixteenInstances()
{
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = 8;
    p.expertParallel = 16;
    p.pipelineParallel = 1;
    p.dataParallel = 32;
    p.instances = 16;
    p.batch = 16;
    return p;
}

// The plan's value at its largest valid batch (validity is monotone in the batch).
double atLargestBatch(const Simulator& sim, Plan p)
{
    SimResult r;
    const int b = largestValidBatch(1, kMaxBatch, [&](int batch) {
        p.batch = batch;
        sim.evaluate(p, r, false);
        return r.valid ? 1 : 0;
    });
    if (b < 1)
        return 0;
    p.batch = b;
    sim.evaluate(p, r, false);
    return r.tokensPerSPerGpu;
}

} // namespace

class TestInstances : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void tp8Ep8InstancesAreAPlan();
    void instancesMustDivideTheReplicas();
    void theSpaceOffersTheRulesInstances();
    void planFilesCarryInstances();
    void exactCoversInstances();
    void exportStartsOneInstanceOfEach();
    void aConstraintPinsTheInstances();
};

void TestInstances::tp8Ep8InstancesAreAPlan()
{
    const Scenario s = preset("deepseek-v3-256gpu");
    const Plan p = sixteenInstances();
    const FieldErrors errors = validatePlan(p, s);
    QVERIFY2(errors.empty(), errors.empty() ? "" : errors.front().reason.c_str());
    // Each instance's 16 ranks hold the experts as EP 16 x expert-TP 1; as one engine the
    // same degrees would make all 256 ranks one expert group of expert-TP 16.
    QCOMPARE(expertGroupRanks(p), 16);
    QCOMPARE(expertTensorParallel(p), 1);
    Plan one = p;
    one.instances = 1;
    QCOMPARE(expertTensorParallel(one), 16);
    // The token exchange spans an instance's 2 nodes; as one engine it spans all 32.
    QCOMPARE(placePlan(p, 8).expertExchange.nodes, 2);
    QCOMPARE(placePlan(one, 8).expertExchange.nodes, 32);
    const Simulator sim(s);
    const SimResult r = sim.evaluate(p);
    QCOMPARE(r.structureChecks, 0u);
    QCOMPARE(r.expertTensorParallel, 1);
    QVERIFY(atLargestBatch(sim, p) > 0);
}

void TestInstances::instancesMustDivideTheReplicas()
{
    const Scenario s = preset("deepseek-v3-256gpu");
    Plan p = sixteenInstances();
    p.instances = 3; // does not divide DP 32
    const FieldErrors e = validatePlan(p, s);
    QVERIFY(!e.empty());
    QCOMPARE(QString::fromStdString(e.front().where), QStringLiteral("instances"));
    // EP must divide an instance's ranks, not the stage's.
    p.instances = 16;
    p.expertParallel = 32; // above an instance's 16 ranks
    const FieldErrors ep = validatePlan(p, s);
    QVERIFY(!ep.empty());
    QCOMPARE(QString::fromStdString(ep.front().where), QStringLiteral("expert_parallel"));
    QVERIFY2(QString::fromStdString(ep.front().reason).contains("instance"), ep.front().reason.c_str());
    // A dense model's replicas are independent already.
    const Scenario dense = preset("llama3-70b-8gpu");
    Plan d;
    applyMegatronSharding(d);
    d.tensorParallel = 2;
    d.dataParallel = 4;
    d.instances = 2;
    const FieldErrors de = validatePlan(d, dense);
    QVERIFY(!de.empty());
    QCOMPARE(QString::fromStdString(de.front().where), QStringLiteral("instances"));
}

void TestInstances::theSpaceOffersTheRulesInstances()
{
    // Every plan the space's masks accept passes the plan checks, and every instance count
    // the checks accept for fixed degrees is offered.
    const Scenario s = preset("mixtral-8x22b-64gpu");
    const SearchSpace space(s);
    QVERIFY(space.instancesSlot() >= 0);
    std::vector<int> choice(SearchSpace::kMaxSlots, 0);
    Plan want;
    applyMegatronSharding(want);
    want.tensorParallel = 4;
    want.pipelineParallel = 2;
    want.dataParallel = 8;
    want.expertParallel = 8;
    want.batch = 64;
    want.microBatches = 2;
    for (int inst : {1, 2, 4, 8}) {
        want.instances = inst;
        const bool rule = planStructureViolations(want, s) == 0;
        const bool space_ = space.encode(want, choice.data()) && space.isValid(choice.data());
        QCOMPARE(space_, rule);
    }
    std::mt19937_64 rng(7);
    int several = 0;
    for (int i = 0; i < 2000; ++i) {
        const Plan p = space.randomPlan(rng);
        QCOMPARE(planStructureViolations(p, s), 0u);
        several += p.instances > 1;
    }
    QVERIFY(several > 0);
}

void TestInstances::planFilesCarryInstances()
{
    const Scenario s = preset("deepseek-v3-256gpu");
    const Plan p = sixteenInstances();
    const std::string text = planToJson(p, &s);
    QVERIFY(QString::fromStdString(text).contains("\"instances\": 16"));
    auto back = parsePlanDocument(text, "mem");
    QVERIFY2(back.ok(), back.ok() ? "" : back.firstError().c_str());
    QVERIFY(back.value.plan == p);
    for (const char* bad : {R"("instances": 0})", R"("instances": "4"})", R"("instances": 1.5})"}) {
        const std::string doc = std::string(R"({"format": "shardlab-plan", "version": 1, "tensor_parallel": 8,
            "pipeline_parallel": 1, "data_parallel": 32, "expert_parallel": 8, "batch": 8, )") + bad;
        auto r = parsePlan(doc, "bad.json");
        QVERIFY2(!r.ok(), bad);
        QCOMPARE(QString::fromStdString(r.errors.front().where), QStringLiteral("instances"));
    }
}

void TestInstances::exactCoversInstances()
{
    // No plan with instances beats exact on the shipped DeepSeek-V3 scenario: every
    // instance count at exact's other degrees, each at its largest valid batch.
    const Scenario s = preset("deepseek-v3-256gpu");
    SearchOptions o;
    o.algorithm = "exact";
    const SearchOutcome e = runSearch(s, o);
    QVERIFY(e.provedOptimal);
    QVERIFY2(QString::fromStdString(e.message).contains("engine instances"), e.message.c_str());
    const Simulator sim(s);
    for (int inst = 1; inst <= e.best.dataParallel; ++inst) {
        if (e.best.dataParallel % inst != 0)
            continue;
        Plan p = e.best;
        p.instances = inst;
        QVERIFY(atLargestBatch(sim, p) <= e.bestResult.tokensPerSPerGpu * (1 + 1e-9));
    }
    QVERIFY(atLargestBatch(sim, sixteenInstances()) <= e.bestResult.tokensPerSPerGpu * (1 + 1e-9));
}

void TestInstances::exportStartsOneInstanceOfEach()
{
    const Scenario s = preset("deepseek-v3-256gpu");
    // vLLM runs it as planned: TP 8 x DP 2 per instance, EP 16 over all of its ranks.
    const Plan p = sixteenInstances();
    LaunchOptions lo;
    lo.engine = Engine::Vllm;
    const auto out = exportLaunchConfig(s, p, lo);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().toString().c_str());
    bool said = false;
    for (const std::string& w : out.value().warnings)
        said = said || QString::fromStdString(w).contains("start 16 of them");
    QVERIFY(said);
    // One instance is two nodes: 16 ranks, attention TP 8 x DP 2, EP 16.
    const std::string& cmd = out.value().command;
    QVERIFY2(QString::fromStdString(cmd).contains("--tensor-parallel-size 8"), cmd.c_str());
    QVERIFY2(QString::fromStdString(cmd).contains("--data-parallel-size 2"), cmd.c_str());
    QVERIFY2(QString::fromStdString(cmd).contains("--enable-expert-parallel"), cmd.c_str());
    QCOMPARE(out.value().pools.front().gpus, 16LL);
}

void TestInstances::aConstraintPinsTheInstances()
{
    // A team running one engine pins instances to 1: every search, exact and the recipe stay
    // inside, and exact certifies within it.
    Scenario s = preset("mixtral-8x22b-64gpu");
    SearchOptions o;
    o.algorithm = "exact";
    const SearchOutcome free = runSearch(s, o);
    QVERIFY(free.provedOptimal && free.best.instances > 1);
    s.constraints.instances = {1};
    QVERIFY(checkConstraints(s).empty());
    const SearchOutcome one = runSearch(s, o);
    QVERIFY(one.provedOptimal);
    QCOMPARE(one.best.instances, 1);
    QVERIFY(one.bestResult.tokensPerSPerGpu < free.bestResult.tokensPerSPerGpu);
    for (const char* a : {"random", "anneal", "genetic", "megatron"}) {
        SearchOptions b;
        b.algorithm = a;
        b.budget = 1500;
        const SearchOutcome r = runSearch(s, b);
        QVERIFY2(!r.found || r.best.instances == 1, a);
    }
    // Only several engines: the recipe takes the fewest that split DP.
    s.constraints.instances = {4};
    SearchOptions m;
    m.algorithm = "megatron";
    const SearchOutcome recipe = runSearch(s, m);
    QVERIFY2(!recipe.found || recipe.best.instances == 4, recipe.message.c_str());
    // The constraint round-trips, and a dense model's is an error naming it.
    const std::string text = scenarioToJson(s);
    auto back = parseScenario(text, "mem");
    QVERIFY(back.ok());
    QCOMPARE(back.value.constraints.instances, std::vector<int>{4});
    Scenario dense = preset("llama3-70b-8gpu");
    dense.constraints.instances = {2};
    const FieldErrors e = checkConstraints(dense);
    QVERIFY(!e.empty());
    QCOMPARE(QString::fromStdString(e.front().where), QStringLiteral("constraints.instances"));
}

QTEST_APPLESS_MAIN(TestInstances)
#include "tst_instances.moc"

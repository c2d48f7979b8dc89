// The one deployment outcome and what is explained from it: every cost account sums to
// the headline's inverse (two-batch overlap and the pipeline bubble included), a
// comparison's per-token ratio is its throughput ratio, a two-pool deployment's cost
// splits over its pools, and the JSON writes each figure from the same outcome.
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <random>

#include "model/printf_text.h"
#include "report/result_json.h"
#include "report/text_format.h"
#include "runner/run_search.h"
#include "sim/megatron.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {

bool close(double a, double b, double rel = 1e-9) { return std::fabs(a - b) <= rel * std::max({1.0, std::fabs(a), std::fabs(b)}); }

double partsSum(const CostAccount& a)
{
    double sum = 0;
    for (const CostPart& p : a.parts)
        sum += p.gpuUsPerToken;
    return sum;
}

Plan searched(const Scenario& s, const char* algo, int budget)
{
    SearchOptions o;
    o.algorithm = algo;
    o.budget = budget;
    o.seed = 1;
    const SearchOutcome out = runSearch(s, o);
    return out.found ? out.best : megatronPlan(Simulator(s)).plan;
}

} // namespace

class TestExplain : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void accountSumsToTheHeadline_data();
    void accountSumsToTheHeadline();
    void launchIsTheKernelsFixedCosts();
    void noCauseThatDidNotChange();
    void conversionsNameTheirCause();
    void normSentenceNamesItsOwnCollectives();
    void comparisonRatioIsTheThroughputRatio();
    void comparisonUnderLoadRunsBoth();
    void twoPoolDeploymentSplitsOverItsPools();
    void jsonFiguresComeFromTheOutcome();
    void shapeMismatchIsInvalidWithAReason();
    void numbersInWords();
};

void TestExplain::accountSumsToTheHeadline_data()
{
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<QString>("plan");
    for (const char* s : {"llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu", "moe-1.6t-1024gpu"})
        for (const char* p : {"megatron", "anneal", "overlap", "pipeline"})
            QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(QLatin1String(s), QLatin1String(p))))
                << QString::fromLatin1(s) << QString::fromLatin1(p);
}

void TestExplain::accountSumsToTheHeadline()
{
    QFETCH(QString, scenario);
    QFETCH(QString, plan);
    const Scenario s = presetScenario(scenario.toLatin1().constData());
    const Simulator sim(s);
    Plan p = plan == QLatin1String("anneal") ? searched(s, "anneal", 400) : megatronPlan(sim).plan;
    if (plan == QLatin1String("overlap")) { // two-batch overlap on the recipe's plan (MoE only)
        if (!s.model.isMoe())
            QSKIP("two-batch overlap is an MoE slot");
        p.twoBatchOverlap = true;
    }
    if (plan == QLatin1String("pipeline")) { // a bubble: PP 2 with one micro-batch
        p.pipelineParallel *= 2;
        p.dataParallel = std::max(1, p.dataParallel / 2);
        if (p.gpus() != s.cluster.totalGpus()) {
            p.pipelineParallel /= 2;
            p.tensorParallel = std::max(1, p.tensorParallel / 2);
            p.pipelineParallel *= 2;
        }
    }
    const DeploymentOutcome o = evaluateDeployment(s, Deployment::onePool(p));
    QVERIFY2(o.costed, qPrintable(QString::fromStdString(o.reasons.empty() ? "" : o.reasons.front())));
    QVERIFY(o.tokensPerSPerGpu > 0);
    const CostAccount a = costAccount(o.pools.front());
    QVERIFY(a.costed);
    QCOMPARE(a.unit, std::string("output token"));
    // The account is the headline's inverse, and its parts add up to it.
    QVERIFY2(close(a.gpuUsPerToken, 1e6 / o.tokensPerSPerGpu), qPrintable(QString::number(a.gpuUsPerToken)));
    QVERIFY(close(o.gpuUsPerToken(), a.gpuUsPerToken));
    QVERIFY2(close(partsSum(a), a.gpuUsPerToken), qPrintable(QString::number(partsSum(a) - a.gpuUsPerToken)));
    // The overlap part is exactly what the simulator says two-batch overlap hides; nothing
    // without it. The bubble is never negative.
    const SimResult& r = o.pools.front().result;
    const CostPart* overlap = nullptr;
    const CostPart* bubble = nullptr;
    for (const CostPart& x : a.parts) {
        if (x.kind == CostPartKind::Overlap)
            overlap = &x;
        if (x.kind == CostPartKind::PipelineBubble)
            bubble = &x;
    }
    QVERIFY(bubble);
    QCOMPARE(overlap != nullptr, p.twoBatchOverlap);
    if (overlap) {
        QVERIFY2(close(overlap->stepUs, -r.overlapHiddenUs, 1e-6),
                 qPrintable(QStringLiteral("%1 vs %2").arg(overlap->stepUs).arg(r.overlapHiddenUs)));
        QVERIFY(r.overlapHiddenUs > 0);
        QVERIFY(close(a.overlapShare * a.gpuUsPerToken, overlap->gpuUsPerToken));
    } else {
        QCOMPARE(r.overlapHiddenUs, 0.0);
        QCOMPARE(a.overlapShare, 0.0);
    }
    QVERIFY(bubble->stepUs >= -1e-6 * r.stageStepUs);
    if (p.pipelineParallel > 1 && p.microBatches == 1)
        QVERIFY(bubble->gpuUsPerToken > 0);
    QVERIFY(close(a.bubbleShare * a.gpuUsPerToken, bubble->gpuUsPerToken));
}

// An operator's launch share is its kernels' fixed costs, one per kernel per step: the same
// in aggregated serving (steps with and without a prompt piece) as in decode serving, never
// the work that max(compute, memory) of the steps' means leaves out.
void TestExplain::launchIsTheKernelsFixedCosts()
{
    Scenario aggregated = presetScenario("llama3-70b-8gpu");
    aggregated.workload.serving = ServingMode::Aggregated;
    Scenario decode = aggregated;
    decode.workload.serving = ServingMode::Decode;
    const Plan p = megatronPlan(Simulator(aggregated)).plan;
    const CostAccount a = costAccount(evaluateDeployment(aggregated, Deployment::onePool(p)).pools.front());
    const CostAccount d = costAccount(evaluateDeployment(decode, Deployment::onePool(p)).pools.front());
    QVERIFY(a.costed && d.costed);
    QCOMPARE(a.parts.size(), d.parts.size());
    int gemms = 0;
    for (size_t i = 0; i < a.parts.size(); ++i) {
        if (a.parts[i].kind != CostPartKind::Operator)
            continue;
        QVERIFY2(close(a.parts[i].launchUs, d.parts[i].launchUs, 1e-9),
                 qPrintable(QStringLiteral("%1: %2 vs %3").arg(QString::fromStdString(a.parts[i].name))
                                .arg(a.parts[i].launchUs).arg(d.parts[i].launchUs)));
        QVERIFY(a.parts[i].launchUs <= a.parts[i].stepUs - a.parts[i].commUs + 1e-9);
        gemms += a.parts[i].id == OpId::GateUp || a.parts[i].id == OpId::Down;
    }
    QCOMPARE(gemms, 2);
}

// A comparison names a cause that moved: never "goes from X to X". The recipe's TP 8 and
// the same operators at TP 4 x DP 2 do the same FLOPs per token at another rate.
void TestExplain::noCauseThatDidNotChange()
{
    const Scenario s = presetScenario("llama3-70b-8gpu");
    const Plan tp8 = megatronPlan(Simulator(s)).plan;
    Plan tp4 = tp8;
    tp4.tensorParallel = 4;
    tp4.dataParallel = 2;
    tp4.batch = std::max(1, tp8.batch / 2);
    const PlanComparison c = comparePools(evaluateDeployment(s, Deployment::onePool(tp4)).pools.front(),
                                          evaluateDeployment(s, Deployment::onePool(tp8)).pools.front(), "A", "B");
    QVERIFY(c.comparable);
    const QRegularExpression same(QStringLiteral("go from ([0-9.,]+ [A-Za-z]+) to \\1\\b"));
    bool rate = false;
    for (const ExplainLine& l : c.lines) {
        const QString text = QString::fromStdString(l.plain());
        QVERIFY2(!same.match(text).hasMatch(), qPrintable(text));
        rate = rate || text.contains(QStringLiteral("at another rate"));
    }
    QVERIFY(rate);
}

// An operator sharded alike in both plans whose conversions differ says why: the degrees
// when only they differ (a norm's all-reduce is gone at TP 1), a neighbour by name when its
// sharding changed.
void TestExplain::conversionsNameTheirCause()
{
    const Scenario s = presetScenario("llama3-70b-8gpu");
    const Plan tp8 = megatronPlan(Simulator(s)).plan;
    Plan tp1 = tp8;
    tp1.tensorParallel = 1;
    tp1.dataParallel = 8;
    tp1.batch = std::max(1, tp8.batch / 8);
    auto because = [&](const Plan& a) {
        QStringList out;
        const PlanComparison c = comparePools(evaluateDeployment(s, Deployment::onePool(a)).pools.front(),
                                              evaluateDeployment(s, Deployment::onePool(tp8)).pools.front(), "A", "B");
        for (const ExplainLine& l : c.lines) {
            const QString text = QString::fromStdString(l.plain());
            if (text.contains(QStringLiteral("its layout conversions become")))
                out << text;
        }
        return out;
    };
    const QStringList degrees = because(tp1);
    QVERIFY(!degrees.isEmpty());
    for (const QString& t : degrees) {
        QVERIFY2(t.contains(QStringLiteral("because the degrees differ (TP 8 → 1")), qPrintable(t));
        QVERIFY2(!t.contains(QStringLiteral("neighbouring")), qPrintable(t));
    }
    // The same degrees, the output projection split otherwise: the norm after it
    // converts differently, and says which neighbour changed.
    int named = 0;
    for (int o = 0; o < opInfo(OpId::OutProj).optionCount; ++o) {
        Plan other = tp8;
        other.setOption(OpId::OutProj, o);
        if (o == tp8.option(OpId::OutProj)) // (a what-if: compared whether or not it holds the limits)
            continue;
        for (const QString& t : because(other))
            if (!t.contains(QStringLiteral("out_proj:"))) {
                QVERIFY2(t.contains(QStringLiteral("a neighbouring operator's sharding changed (out_proj")), qPrintable(t));
                ++named;
            }
    }
    QVERIFY(named > 0);
}

// The sentence on a norm's sharding names the collectives this plan's norm takes: a
// reduce-scatter and all-gather only where its input is converted, none where it arrives
// split by tokens already. Random plans of an MoE model against the recipe.
void TestExplain::normSentenceNamesItsOwnCollectives()
{
    const Scenario s = presetScenario("mixtral-8x22b-64gpu");
    const Simulator sim(s);
    const PoolOutcome recipe = evaluateDeployment(s, Deployment::onePool(megatronPlan(sim).plan)).pools.front();
    const SearchSpace space(s);
    std::mt19937_64 rng(5);
    int converted = 0, arrived = 0;
    for (int i = 0; i < 300; ++i) {
        const Plan p = space.randomPlan(rng);
        const PoolOutcome pool = evaluateDeployment(s, Deployment::onePool(p)).pools.front();
        const PlanComparison c = comparePools(pool, recipe, "A", "B");
        if (!c.comparable)
            continue;
        for (const ExplainLine& l : c.lines)
            for (OpId id : {OpId::AttnNorm, OpId::FfnNorm}) {
                const std::string text = l.plain();
                if (text.rfind(std::string(opName(id)) + ":", 0) != 0)
                    continue;
                const double comm = pool.result.decode[static_cast<int>(id)].commUs;
                if (text.find("replaces the all-reduce before it") != std::string::npos) {
                    QVERIFY2(comm > 0, text.c_str());
                    ++converted;
                }
                if (text.find("so it takes no collective") != std::string::npos) {
                    QVERIFY2(comm == 0, text.c_str());
                    ++arrived;
                }
            }
    }
    QVERIFY2(arrived > 0, qPrintable(QStringLiteral("%1 converted, %2 arrived split").arg(converted).arg(arrived)));
}

void TestExplain::comparisonRatioIsTheThroughputRatio()
{
    const Scenario s = presetScenario("deepseek-v3-256gpu");
    const Simulator sim(s);
    Plan p = searched(s, "anneal", 400);
    p.twoBatchOverlap = true; // the case the per-token figures used to leave out
    const DeploymentOutcome a = evaluateDeployment(s, Deployment::onePool(p));
    const DeploymentOutcome b = evaluateDeployment(s, Deployment::onePool(megatronPlan(sim).plan));
    QVERIFY(a.costed && b.costed);
    const DeploymentComparison d = compareDeployments(a, b, "A", "B");
    QVERIFY(close(d.ratio, a.tokensPerSPerGpu / b.tokensPerSPerGpu));
    QVERIFY(close(d.refPerToken / d.thisPerToken, d.ratio));
    QCOMPARE(d.pools.size(), size_t(1));
    const PlanComparison& c = d.pools.front();
    QVERIFY(c.comparable);
    QVERIFY(close(c.refPerToken / c.thisPerToken, c.ratio));
    double sumA = 0, sumB = 0;
    for (const ComparedPart& x : c.parts) {
        sumA += x.thisPerToken;
        sumB += x.refPerToken;
    }
    QVERIFY(close(sumA, c.thisPerToken));
    QVERIFY(close(sumB, c.refPerToken));
    // The sentence states the ratio its own figures give.
    QVERIFY(c.lines.size() >= 2);
    QVERIFY2(c.lines.front().text.find(groupedNumber(c.ratio, 3) + "x") != std::string::npos,
             c.lines.front().text.c_str());
    QVERIFY(c.lines.front().text.find(perTokenText(c.thisPerToken) + " GPU") != std::string::npos);
}

// Under a closed loop both plans run request by request: the ratio is their runs', and a
// steady-state scenario adds nothing.
void TestExplain::comparisonUnderLoadRunsBoth()
{
    Scenario s = presetScenario("llama3-70b-8gpu");
    const Scenario steadyState = s;
    s.workload.load.protocol = LoadProtocol::Concurrency;
    s.workload.load.concurrency = 16;
    s.workload.load.requests = 64;
    const Plan a = megatronPlan(Simulator(s)).plan;
    Plan b = a;
    b.tensorParallel = 2;
    b.dataParallel = a.dataParallel * a.tensorParallel / 2;
    b.batch = 64;
    // TP 2 holds half the weights per GPU: the largest batch (halving) whose run fits memory.
    while (b.batch > 1 && !evaluateDeployment(s, Deployment::onePool(b)).loadError.empty())
        b.batch /= 2;
    const DeploymentOutcome oa = evaluateDeployment(s, Deployment::onePool(a));
    const DeploymentOutcome ob = evaluateDeployment(s, Deployment::onePool(b));
    QVERIFY(oa.underLoad && ob.underLoad && oa.loadError.empty() && ob.loadError.empty());
    const DeploymentComparison d = compareDeployments(oa, ob, "A", "B");
    QVERIFY(close(d.underLoad.ratio, oa.load.tokensPerSPerGpu / ob.load.tokensPerSPerGpu));
    // A closed loop of 16 fills neither plan's batch: each run serves less than its steady
    // state, so the ratio compares the runs, not the steady states.
    QVERIFY2(oa.load.tokensPerSPerGpu < 0.9 * oa.tokensPerSPerGpu && ob.load.tokensPerSPerGpu < 0.9 * ob.tokensPerSPerGpu,
             printfText("%.1f of %.1f, %.1f of %.1f", oa.load.tokensPerSPerGpu, oa.tokensPerSPerGpu,
                        ob.load.tokensPerSPerGpu, ob.tokensPerSPerGpu).c_str());
    QCOMPARE(d.underLoad.lines.size(), size_t(4));
    QVERIFY(d.underLoad.lines[0].find("concurrency 16") != std::string::npos);
    QVERIFY2(d.underLoad.lines[3].find(printfText("%.3fx", d.underLoad.ratio)) != std::string::npos,
             d.underLoad.lines[3].c_str());

    // The steady state adds nothing.
    const DeploymentComparison steady =
        compareDeployments(evaluateDeployment(steadyState, Deployment::onePool(a)),
                           evaluateDeployment(steadyState, Deployment::onePool(b)), "A", "B");
    QVERIFY(steady.underLoad.lines.empty());
    QCOMPARE(steady.underLoad.ratio, 0.0);
}

void TestExplain::twoPoolDeploymentSplitsOverItsPools()
{
    Scenario s = presetScenario("deepseek-v3-256gpu");
    s.workload.serving = ServingMode::Disaggregated;
    const DisaggregatedSimulator sim(s);
    const DisaggregatedRecipe rp = megatronDisaggregated(sim);
    QVERIFY(rp.found);
    const DeploymentOutcome o = evaluateDeployment(s, Deployment::twoPools(rp.plan));
    QVERIFY(o.valid && o.twoPools());
    QVERIFY(close(o.tokensPerSPerGpu, rp.result.tokensPerSPerGpu));
    const DeploymentAccount d = deploymentAccount(o);
    QCOMPARE(d.pools.size(), size_t(2));
    QVERIFY(close(d.pools[0].gpuUsPerToken + d.pools[1].gpuUsPerToken, o.gpuUsPerToken()));
    // The limiting pool works all the time; the other idles for part of it.
    const int limiting = o.limitedBy == DisaggLimit::Prefill ? 0 : 1;
    if (o.limitedBy != DisaggLimit::KvLink)
        QVERIFY(close(d.pools[limiting].busyShare, 1.0));
    QVERIFY(d.pools[1 - limiting].busyShare <= 1.0);
    // A prefill pool's token is a prompt token: its account is GPUs over prompt tokens/s.
    const PoolOutcome& pre = o.pools[0];
    const CostAccount a = costAccount(pre);
    QVERIFY(a.costed);
    QCOMPARE(a.unit, std::string("prompt token"));
    QVERIFY(close(a.gpuUsPerToken, 1e6 * double(pre.gpus) / (pre.requestsPerS * s.workload.promptTokens), 1e-9));
    QVERIFY(close(partsSum(a), a.gpuUsPerToken));
    const CostAccount dec = costAccount(o.pools[1]);
    QVERIFY(close(dec.gpuUsPerToken, 1e6 / o.pools[1].result.tokensPerSPerGpu));
}

void TestExplain::jsonFiguresComeFromTheOutcome()
{
    Scenario s = presetScenario("mixtral-8x22b-64gpu");
    const Simulator sim(s);
    const Plan p = megatronPlan(sim).plan;
    const DeploymentOutcome one = evaluateDeployment(s, Deployment::onePool(p));
    const auto j = nlohmann::json::parse(deploymentToJson(one));
    // The names scripts read: a contract.
    for (const char* key : {"scenario", "profile", "plan", "valid", "violations", "reasons", "serving",
                            "output_tokens_per_s", "output_tokens_per_s_per_gpu", "tpot_ms", "ttft_ms", "e2e_ms",
                            "tokens_per_s_per_user", "gpu_us_per_token", "step_tokens", "decode_tokens_per_s",
                            "tokens_per_s_per_gpu", "memory_gb", "decode_operators", "prefill_operators"})
        QVERIFY2(j.contains(key), key);
    QCOMPARE(j["output_tokens_per_s_per_gpu"].get<double>(), one.tokensPerSPerGpu);
    QVERIFY(close(j["gpu_us_per_token"].get<double>(), one.gpuUsPerToken()));
    QCOMPARE(j["valid"].get<bool>(), one.valid);

    s.workload.serving = ServingMode::Disaggregated;
    const DisaggregatedSimulator dsim(s);
    const DisaggregatedRecipe rp = megatronDisaggregated(dsim);
    const DeploymentOutcome two = evaluateDeployment(s, Deployment::twoPools(rp.plan));
    const auto k = nlohmann::json::parse(deploymentToJson(two));
    QCOMPARE(k["output_tokens_per_s_per_gpu"].get<double>(), two.tokensPerSPerGpu);
    QCOMPARE(k["tpot_ms"].get<double>(), two.tpotMs);
    QCOMPARE(k["gpus"].get<long long>(), two.gpus);
    for (const char* pool : {"prefill", "decode"}) {
        QVERIFY2(k.contains(pool), pool);
        QVERIFY(k[pool].contains("gpu_us_per_token"));
        QVERIFY(k[pool].contains("requests_per_s"));
    }
    QCOMPARE(k["decode"]["tpot_ms"].get<double>(), two.pools[1].result.tpotMs);
    // explain's JSON carries the same evaluation and an account per pool.
    const DeploymentExplanation ex = explainDeployment(s, Deployment::twoPools(rp.plan));
    const auto e = nlohmann::json::parse(explanationToJson(ex));
    QVERIFY(e["evaluation"] == k);
    QCOMPARE(e["cost"]["pools"].size(), size_t(2));
    QCOMPARE(e["cost"]["pools"][0]["unit"].get<std::string>(), std::string("prompt token"));
    // Each pool against the recipe on that pool; the recipe's own pools compare equal.
    QCOMPARE(e["versus_recipe"].size(), size_t(2));
    QVERIFY(close(e["recipe"]["ratio"].get<double>(), 1.0));
}

void TestExplain::shapeMismatchIsInvalidWithAReason()
{
    const Scenario s = presetScenario("llama3-70b-8gpu");
    const Simulator sim(s);
    const Plan p = megatronPlan(sim).plan;
    QVERIFY(deploymentShapeError(s, Deployment::onePool(p)).empty());
    const DeploymentOutcome o = evaluateDeployment(s, Deployment::twoPools({p, p}));
    QVERIFY(!o.valid);
    QVERIFY(!o.reasons.empty());
    QVERIFY(o.reasons.front().find("disaggregated") != std::string::npos);
}

void TestExplain::numbersInWords()
{
    QCOMPARE(groupedNumber(3376.4, 0), std::string("3,376"));
    QCOMPARE(groupedNumber(-1234567.891, 2), std::string("-1,234,567.89"));
    QCOMPARE(groupedNumber(999.96, 1), std::string("1,000.0"));
    QCOMPARE(groupedNumber(-0.001, 1), std::string("0.0"));
    QCOMPARE(signedText(-0.25, 2), std::string("\xE2\x88\x92" "0.25"));
    QCOMPARE(signedText(0.0001, 1), std::string("0.0"));
    QCOMPARE(msText(0.042), std::string("0.042"));
    QCOMPARE(msText(1204.4), std::string("1,204"));
    QCOMPARE(bytesText(1.25e6), std::string("1.25 MB"));
    QCOMPARE(groupedNumber(std::nan(""), 1), std::string("\xE2\x80\x94"));
}

QTEST_GUILESS_MAIN(TestExplain)
#include "tst_explain.moc"

// What each engine's launch configuration gives the plan's batch (core/report/launch_config.h):
// over random plans each engine runs on the shipped scenarios, the engine's degrees account
// for every GPU, its sequence limit holds the sequences the plan runs per engine replica, and
// its token budget per step is at least that many; a --max-num-tokens below the sequences is
// refused for each engine, read from its own flags; the memory fraction it writes leaves the
// KV cache room for the plan's batch by the memory model, and only a plan over memory is
// refused for want of one; attention DP whose sequences do not divide over its ranks is
// warned of the engine's whole number per rank.
#include <QtTest>

#include <algorithm>
#include <random>
#include <string>

#include "report/launch_config.h"
#include "model/plan_checks.h"
#include "model/plan_text.h"
#include "runner/run_search.h"
#include "search/search_space.h"
#include "sim/simulator.h"
#include "tst_launch_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

Q_DECLARE_METATYPE(shardlab::Plan)

namespace {

// The sequences one engine replica of the plan holds, from the plan alone: one instance's
// batch x DP over its attention replicas (TP x DP / attention TP; attention TP is 1 when
// attention is split by sequences).
long long planSequencesPerReplica(const Scenario& s, const Plan& p)
{
    const int instances = s.model.isMoe() ? std::max(1, p.instances) : 1;
    const long long dp = p.dataParallel / instances;
    const bool headSplit = std::string(opOption(OpId::Attention, p.option(OpId::Attention)).name) == "head";
    const long long attnDp = p.tensorParallel * dp / (headSplit ? p.tensorParallel : 1);
    return (p.batch * dp + attnDp - 1) / attnDp;
}

// The KV cache engine e allocates per GPU at fraction f, as each engine documents it
// (docs/launch.md, "Memory settings"), written out here apart from the core's copy.
double engineKvRoomGb(Engine e, const MemoryBreakdown& m, double f)
{
    switch (e) {
    case Engine::Vllm: return f * m.capacityGb - m.weightsGb - m.activationGb; // share of the GPU: all but KV first
    case Engine::Sglang: return f * m.capacityGb - m.weightsGb;                 // static share: weights and KV pool
    case Engine::TrtLlm: // share of what is free after weights, activations and the runtime's own memory
        return f * (m.capacityGb - m.reserveGb - m.weightsGb - m.activationGb);
    }
    return 0;
}

// What one rank of the engine schedules, read from the command as the engine reads it:
// SGLang divides --max-running-requests and --chunked-prefill-size by --dp-size under
// --enable-dp-attention (server_args); vLLM's and TensorRT-LLM's flags are per rank.
struct PerRank {
    long long sequences = 0, tokens = 0;
};

PerRank perRank(Engine e, const std::string& cmd)
{
    switch (e) {
    case Engine::Vllm: return {flagValue(cmd, "--max-num-seqs", -1), flagValue(cmd, "--max-num-batched-tokens", -1)};
    case Engine::Sglang: {
        const long long ranks =
            cmd.find("--enable-dp-attention") != std::string::npos ? flagValue(cmd, "--dp-size", 1) : 1;
        return {flagValue(cmd, "--max-running-requests", -1) / ranks, flagValue(cmd, "--chunked-prefill-size", -1) / ranks};
    }
    case Engine::TrtLlm: return {flagValue(cmd, "--max_batch_size", -1), flagValue(cmd, "--max_num_tokens", -1)};
    }
    return {};
}

// The GPUs one command's sizes cover, times the instances its warnings ask for: vLLM TP x PP
// x DP; SGLang --tp-size x --pp-size (x --dp-size for dense replicas, x the nodes a warning
// repeats it on); TensorRT-LLM tp_size x pp_size x independent instances.
long long gpusOf(Engine e, const LaunchConfig& c)
{
    const std::string& cmd = c.command;
    long long gpus = 0;
    const auto countAfter = [](const std::string& w, const std::string& key) {
        return std::atoll(w.c_str() + w.find(key) + key.size());
    };
    switch (e) {
    case Engine::Vllm:
        gpus = flagValue(cmd, "--tensor-parallel-size", 1) * flagValue(cmd, "--pipeline-parallel-size", 1)
            * flagValue(cmd, "--data-parallel-size", 1);
        break;
    case Engine::Sglang: {
        const bool dpAttention = cmd.find("--enable-dp-attention") != std::string::npos;
        gpus = flagValue(cmd, "--tp-size", 1) * flagValue(cmd, "--pp-size", 1)
            * (dpAttention ? 1 : flagValue(cmd, "--dp-size", 1));
        for (const std::string& w : c.warnings) {
            if (w.find("run this on each of ") != std::string::npos)
                gpus *= countAfter(w, "run this on each of ");
            if (w.find("start this once per replica") != std::string::npos)
                gpus *= countAfter(w, "placement: ");
        }
        break;
    }
    case Engine::TrtLlm:
        gpus = flagValue(cmd, "--tp_size", 1) * flagValue(cmd, "--pp_size", 1);
        for (const std::string& w : c.warnings)
            if (w.find("independent trtllm-serve instances") != std::string::npos)
                gpus *= countAfter(w, "placement: ");
        break;
    }
    // Several engine instances: the command is one instance's, started n times.
    for (const std::string& w : c.warnings)
        if (w.rfind("instances ", 0) == 0 && w.find("start ") != std::string::npos)
            gpus *= countAfter(w, "start ");
    return gpus;
}

} // namespace

class TestLaunchLimits : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyEngineHoldsThePlan_data();
    void everyEngineHoldsThePlan();
    void tokenBudgetBelowSequences_data();
    void tokenBudgetBelowSequences();
    void unevenAttentionDpRanksAreWarned();
    void unevenRanksRoundDownWhereUpBreaksALimit();
};

void TestLaunchLimits::everyEngineHoldsThePlan_data()
{
    QTest::addColumn<QString>("scenario");
    for (const char* s : {"llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu", "moe-1.6t-1024gpu"})
        QTest::newRow(s) << s;
}

// Random plans each engine runs (its runnable space: export refuses the others).
void TestLaunchLimits::everyEngineHoldsThePlan()
{
    QFETCH(QString, scenario);
    int exported = 0, overMemory = 0;
    for (const EngineInfo& e : launchEngines()) {
        Scenario s = launchPreset(scenario.toUtf8().constData());
        s.workload.engine = collectivesOf(e.engine);
        s.workload.runnable = true;
        const SearchSpace space(s);
        std::mt19937_64 rng(11);
        for (int i = 0; i < 200; ++i) {
            const Plan p = space.randomPlan(rng);
            LaunchOptions o;
            o.engine = e.engine;
            auto c = exportLaunchConfig(s, p, o);
            const QString what = QString("%1: TP %2 PP %3 DP %4 EP %5 batch %6")
                                     .arg(e.name)
                                     .arg(p.tensorParallel)
                                     .arg(p.pipelineParallel)
                                     .arg(p.dataParallel)
                                     .arg(p.expertParallel)
                                     .arg(p.batch);
            const MemoryBreakdown m = Simulator(s).evaluate(p).memory;
            if (!c.ok() && c.error().where == memoryFractionFlag(e.engine)) {
                // Refused because no fraction holds the batch: only a plan over memory is.
                QVERIFY2(m.totalGb > m.capacityGb, qPrintable(what + ": " + QString::fromStdString(c.error().toString())));
                ++overMemory;
                continue;
            }
            QVERIFY2(c.ok(), qPrintable(what + ": " + QString::fromStdString(c.ok() ? "" : c.error().toString())));
            const std::string& cmd = c.value().command;
            ++exported;
            const QString detail = what + ":\n" + QString::fromStdString(cmd);
            QVERIFY2(gpusOf(e.engine, c.value()) == s.cluster.totalGpus(), qPrintable(detail));
            const PerRank rank = perRank(e.engine, cmd);
            // The plan's sequences per rank rounded up, or down where one more each would
            // break a limit (said in a warning).
            const auto& warned = c.value().warnings;
            const bool roundedDown = std::any_of(warned.begin(), warned.end(), [](const std::string& x) {
                return x.find("would break a limit") != std::string::npos;
            });
            QVERIFY2(rank.sequences >= planSequencesPerReplica(s, p) - (roundedDown ? 1 : 0), qPrintable(detail));
            QVERIFY2(rank.tokens >= rank.sequences, qPrintable(detail));
            const double written = flagNumber(cmd, memoryFractionFlag(e.engine));
            QVERIFY2(engineKvRoomGb(e.engine, m, written) >= m.kvCacheGb - 1e-6, qPrintable(detail));
        }
    }
    // Both kinds occur among the random plans: the check above is not vacuous.
    QVERIFY2(exported > 0 && overMemory > 0, qPrintable(QString("%1 exported, %2 over memory").arg(exported).arg(overMemory)));
}

void TestLaunchLimits::tokenBudgetBelowSequences_data()
{
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<Plan>("plan");
    QTest::addColumn<int>("engine");
    QTest::addColumn<int>("sequences"); // what one rank runs
    QTest::addColumn<int>("budget");    // the least replica budget accepted: sequences x token-split ranks
    QTest::addColumn<QString>("flags"); // the engine's flags the refusal names
    const Plan tp8 = megatronLike(8, 1, 1, 1, 64);
    QTest::newRow("vllm") << "llama3-70b-8gpu" << tp8 << int(Engine::Vllm) << 64 << 64
                          << "vLLM's --max-num-seqs 64 against --max-num-batched-tokens 63";
    QTest::newRow("sglang") << "llama3-70b-8gpu" << tp8 << int(Engine::Sglang) << 64 << 64
                            << "SGLang's --max-running-requests 64 against --chunked-prefill-size 63";
    // DP attention over TP 2: each of a replica's two token-split ranks schedules its 64
    // sequences on half the replica's budget; SGLang divides both totals by its 256 ranks.
    QTest::newRow("sglang dp attention") << "deepseek-v3-256gpu" << deepseekWideEp() << int(Engine::Sglang) << 64 << 128
        << "SGLang's --max-running-requests 16384 against --chunked-prefill-size 16128, both over 256 DP-attention ranks";
    // TensorRT-LLM: attention DP over an instance's whole tensor-parallel stage (TP 8, one
    // replica per instance), tokens exchanged by all-gather.
    Plan mixtral = withAttentionDp(megatronLike(8, 1, 8, 8, 256), launchPreset("mixtral-8x22b-64gpu").model);
    mixtral.instances = 8;
    mixtral.setOption(OpId::Dispatch, optionFromName(OpId::Dispatch, "all_gather"));
    mixtral.setOption(OpId::Combine, optionFromName(OpId::Combine, "reduce_scatter"));
    QTest::newRow("trtllm attention dp tp8") << "mixtral-8x22b-64gpu" << mixtral << int(Engine::TrtLlm) << 32 << 256
        << "TensorRT-LLM's --max_batch_size 32 against --max_num_tokens 31";
    QTest::newRow("trtllm") << "llama3-70b-8gpu" << tp8 << int(Engine::TrtLlm) << 64 << 64
                            << "TensorRT-LLM's --max_batch_size 64 against --max_num_tokens 63";
    QTest::newRow("trtllm attention dp") << "deepseek-v3-256gpu" << deepseekWideEpTp1(false) << int(Engine::TrtLlm)
                                         << 64 << 64 << "TensorRT-LLM's --max_batch_size 64 against --max_num_tokens 63";
}

// --max-num-tokens one below the least replica budget is refused, naming the engine's flags;
// exactly that budget is written so that each rank gets its sequences' worth. The refused
// budget and the written one are the replica's, the flags per rank what the simulator
// prices: 1/TP of it on a token-split rank (docs/simulator.md, "Prompt chunks").
void TestLaunchLimits::tokenBudgetBelowSequences()
{
    QFETCH(QString, scenario);
    QFETCH(Plan, plan);
    QFETCH(int, engine);
    QFETCH(int, sequences);
    QFETCH(int, budget);
    QFETCH(QString, flags);
    const Scenario s = launchPreset(scenario.toUtf8().constData());
    LaunchOptions o;
    o.engine = static_cast<Engine>(engine);
    o.maxNumTokens = budget - 1;
    auto refused = exportLaunchConfig(s, plan, o);
    QVERIFY(!refused.ok());
    QVERIFY2(refused.error().where == "--max-num-tokens", refused.error().toString().c_str());
    const QString reason = QString::fromStdString(refused.error().reason);
    QVERIFY2(reason.startsWith(QString("is %1").arg(budget - 1)), qPrintable(reason));
    QVERIFY2(reason.contains(QString(", below the %1 sequences one engine replica runs at once (").arg(sequences)),
             qPrintable(reason));
    QVERIFY2(reason.contains(flags), qPrintable(reason));
    o.maxNumTokens = budget;
    auto ok = exportLaunchConfig(s, plan, o);
    QVERIFY2(ok.ok(), ok.ok() ? "" : ok.error().toString().c_str());
    PerRank rank = perRank(o.engine, ok.value().command);
    QCOMPARE(rank.sequences, static_cast<long long>(sequences));
    QCOMPARE(rank.tokens, static_cast<long long>(sequences));
    // The scenario's budget reaches each rank as the simulator prices it.
    o.maxNumTokens = 0;
    auto scenarioBudget = exportLaunchConfig(s, plan, o);
    QVERIFY2(scenarioBudget.ok(), scenarioBudget.ok() ? "" : scenarioBudget.error().toString().c_str());
    rank = perRank(o.engine, scenarioBudget.value().command);
    QCOMPARE(rank.tokens, static_cast<long long>(s.workload.maxNumTokens / (budget / sequences)));
}

// Attention DP whose sequences do not divide over its ranks: the engine's whole number per
// rank admits more than the plan priced, and the warning prices that.
void TestLaunchLimits::unevenAttentionDpRanksAreWarned()
{
    Scenario ds = launchPreset("deepseek-v3-256gpu");
    ds.workload.engine = CollectiveEngine::Sglang;
    ds.workload.runnable = true; // the recipe among the plans SGLang runs: attention DP
    Plan p = megatronPlan(Simulator(ds)).plan;
    if (p.batch % p.tensorParallel == 0) // one sequence fewer than the recipe's: uneven ranks
        --p.batch;
    QVERIFY(p.batch > 0 && (p.batch * p.dataParallel) % (p.tensorParallel * p.dataParallel) != 0);
    LaunchOptions sg;
    sg.engine = Engine::Sglang;
    auto c = exportLaunchConfig(ds, Deployment::onePool(p), sg);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
    const auto& w = c.value().warnings;
    QVERIFY2(std::any_of(w.begin(), w.end(),
                         [](const std::string& x) {
                             return x.find("batch: the engine's limit of 1 sequences on each of its ") != std::string::npos;
                         }),
             "no warning of the engine's per-rank limit");
}

// Where rounding each rank's limit up would let a fully loaded engine past a limit, the
// limit is rounded down: no load then takes the deployment past the scenario's limits. The
// TPOT limit is set between the plan's TPOT and the rounded-up batch's.
void TestLaunchLimits::unevenRanksRoundDownWhereUpBreaksALimit()
{
    // Each engine that schedules per attention rank (SGLang: a total over its ranks;
    // TensorRT-LLM: per rank) on its own certified runnable optimum, made uneven.
    for (const Engine e : {Engine::Sglang, Engine::TrtLlm}) {
        Scenario ds = launchPreset("deepseek-v3-256gpu");
        ds.workload.engine = collectivesOf(e);
        ds.workload.runnable = true;
        SearchOptions exact;
        exact.algorithm = "exact";
        Plan p = runSearch(ds, exact).best;
        const QString what = QString::fromStdString(std::string(engineInfo(e).name) + ": " + planDegreesText(ds, p));
        const long long dp = p.dataParallel / std::max(1, p.instances);
        const long long ranks = p.tensorParallel * dp;
        QVERIFY2(attentionDataParallel(p) && p.batch * dp >= 2 * ranks, qPrintable(what));
        while ((p.batch * dp) % ranks == 0)
            --p.batch;
        const long long down = p.batch * dp / ranks;
        Plan up = p;
        up.batch = static_cast<int>(((down + 1) * ranks + dp - 1) / dp);
        const double planned = Simulator(ds).evaluate(p).tpotMs, full = Simulator(ds).evaluate(up).tpotMs;
        QVERIFY2(full > planned, qPrintable(what));
        ds.workload.tpotSloMs = 0.5 * (planned + full);
        QVERIFY(Simulator(ds).evaluate(p).valid && !Simulator(ds).evaluate(up).valid);
        QVERIFY2(engineViolations(e, p, ds).empty(), qPrintable(what));
        LaunchOptions lo;
        lo.engine = e;
        auto c = exportLaunchConfig(ds, Deployment::onePool(p), lo);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
        QCOMPARE(perRank(e, c.value().command).sequences, down);
        const auto& w = c.value().warnings;
        QVERIFY2(std::any_of(w.begin(), w.end(),
                             [&](const std::string& x) {
                                 return x.find("batch: " + std::to_string(down) + " sequences on each of the engine's "
                                               + std::to_string(ranks) + " attention ranks admit")
                                     != std::string::npos
                                     && x.find("would break a limit") != std::string::npos;
                             }),
                 qPrintable(what + ": no warning of the rounded-down limit"));
        // With a limit the rounded-up batch keeps, rounded up, as before.
        Scenario loose = ds;
        loose.workload.tpotSloMs = full + 1;
        auto u = exportLaunchConfig(loose, Deployment::onePool(p), lo);
        QVERIFY2(u.ok(), u.ok() ? "" : u.error().toString().c_str());
        QCOMPARE(perRank(e, u.value().command).sequences, down + 1);
    }
}

QTEST_APPLESS_MAIN(TestLaunchLimits)
#include "tst_launch_limits.moc"

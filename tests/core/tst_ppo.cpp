// The ppo search (issue 5): the policy learns a bandit, masks hold under sampling, a seed
// replays, the budget and a stop request end the search, options parse with named errors.
#include <QtTest>

#include <atomic>
#include <cmath>
#include <map>
#include <set>

#include "io/presets.h"
#include "model/plan.h"
#include "plugin/rl_plugin.h"
#include "rl/ppo_agent.h"
#include "rl/ppo_options.h"
#include "rl/ppo_search.h"
#include "search/search.h"

using namespace shardlab;

namespace {

Scenario preset(const char* name)
{
    auto s = scenarioPreset(name);
    if (!s.ok())
        qFatal("%s", s.firstError().c_str());
    return s.value;
}

double probabilityOf(const rl::GreedyView& g, int slot, int index) { return g.probabilities[slot][index]; }

// Counts simulator calls and asks for a stop after `stopAfter` of them (0: never).
class CountingObserver : public SearchObserver {
public:
    explicit CountingObserver(int stopAfter = 0) : m_stopAfter(stopAfter) {}
    void progress(const SearchProgress& p) override
    {
        ++reports;
        last = p;
    }
    void evaluated(int call, const Plan&, const SimResult&) override
    {
        maxCall = std::max(maxCall, call);
        if (m_stopAfter > 0 && call >= m_stopAfter)
            stop.store(true);
    }
    std::atomic<bool> stop{false};
    int maxCall = 0;
    int reports = 0;
    SearchProgress last;

private:
    int m_stopAfter;
};

SearchOptions ppoOptions(int budget, std::uint64_t seed)
{
    SearchOptions o;
    o.algorithm = "ppo";
    o.budget = budget;
    o.seed = seed;
    return o;
}

} // namespace

class TestPpo : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // ppo is the registry's plugin entry (core/plugin/rl_plugin.h): nothing loads LibTorch's
    // plugin until the first ppo search is created, and that search then works.
    void pluginLoadsOnFirstUse()
    {
        QVERIFY(!rlPluginLoaded());
        SearchAlgorithmInfo info;
        QVERIFY(findSearchAlgorithm("ppo", info));
        QVERIFY(info.budgeted && info.stochastic);
        QVERIFY(!rlPluginLoaded());
        const SearchOutcome r = runSearch(preset("llama3-70b-8gpu"), ppoOptions(300, 1));
        QVERIFY2(r.found, r.message.c_str());
        QVERIFY(rlPluginLoaded());
        QVERIFY2(r.message.find("ppo:") != std::string::npos, r.message.c_str());
    }

    void banditShiftsProbability_data()
    {
        QTest::addColumn<double>("topFraction");
        QTest::newRow("plain PPO, value-head baseline") << 1.0;
        QTest::newRow("risk-seeking, quantile baseline") << 0.25;
    }
    // A one-slot bandit: value index 1 of the batch slot pays 1, the others 0. The policy
    // (no elite history) must move its probability toward index 1 within a few updates.
    void banditShiftsProbability()
    {
        QFETCH(double, topFraction);
        const Scenario s = preset("llama3-70b-8gpu");
        SearchSpaceOptions so;
        so.batchValues = {8, 16, 32};
        const SearchSpace space(s, so);
        rl::PpoOptions o;
        o.elite = 0;
        o.samplesPerUpdate = 32;
        o.entropyCoef = 0;
        o.topFraction = topFraction;
        rl::PpoAgent agent(space, rl::scenarioFeatures(s), o, 3);
        const int slot = space.batchSlot();
        const double before = probabilityOf(agent.greedy(), slot, 1);
        for (int u = 0; u < 15; ++u) {
            const auto& batch = agent.sample(o.samplesPerUpdate);
            std::vector<double> rewards;
            for (const auto& c : batch)
                rewards.push_back(c[slot] == 1 ? 1.0 : 0.0);
            const rl::PpoUpdateMetrics m = agent.update(rewards);
            QVERIFY(m.samples > 0 && m.samples <= o.samplesPerUpdate);
            if (topFraction == 1)
                QCOMPARE(m.samples, o.samplesPerUpdate);
            QCOMPARE(m.minibatches, o.epochs);
            QVERIFY(std::isfinite(m.policyLoss) && std::isfinite(m.approxKl) && m.entropy >= 0);
        }
        const double after = probabilityOf(agent.greedy(), slot, 1);
        QVERIFY2(before < 0.6, qPrintable(QString::number(before)));
        QVERIFY2(after > 0.9, qPrintable(QString::number(after)));
    }

    void masksHoldUnderSampling_data()
    {
        QTest::addColumn<QString>("scenario");
        for (const char* n : {"llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu", "moe-1.6t-1024gpu"})
            QTest::newRow(n) << QString::fromLatin1(n);
    }
    // Untrained, with an elite history, and after updates that reward odd choices: every
    // sampled plan passes the masks and the structural checks.
    void masksHoldUnderSampling()
    {
        QFETCH(QString, scenario);
        const Scenario s = preset(scenario.toLatin1().constData());
        const SearchSpace space(s);
        rl::PpoOptions o;
        rl::PpoAgent agent(space, rl::scenarioFeatures(s), o, 11);
        std::mt19937_64 rng(5);
        std::vector<rl::EliteEntry> elites;
        for (int i = 0; i < 3; ++i) {
            std::vector<int> c(space.slotCount());
            space.randomPlan(rng, c.data());
            elites.push_back({c, 1.0 - 0.1 * i});
        }
        for (int round = 0; round < 4; ++round) {
            if (round == 1)
                agent.setElites(elites);
            const auto& batch = agent.sample(128);
            std::vector<double> rewards;
            for (const auto& c : batch) {
                QVERIFY(space.isValid(c.data()));
                const FieldErrors e = validatePlan(space.decode(c.data()), s);
                QVERIFY2(e.empty(), e.empty() ? "" : e.front().toString().c_str());
                rewards.push_back(static_cast<double>(c[space.tpSlot()] % 2));
            }
            agent.update(rewards);
        }
    }

    void sameSeedSameResult()
    {
        const Scenario s = preset("mixtral-8x22b-64gpu");
        const SearchOutcome a = runSearch(s, ppoOptions(1200, 42));
        const SearchOutcome b = runSearch(s, ppoOptions(1200, 42));
        QVERIFY2(a.found, a.message.c_str());
        QCOMPARE(a.calls, b.calls);
        QVERIFY(a.best == b.best);
        QCOMPARE(a.bestResult.tokensPerSPerGpu, b.bestResult.tokensPerSPerGpu);
        QCOMPARE(a.bestCurve, b.bestCurve);
        QCOMPARE(a.message, b.message);
    }

    void stopsAtBudget_data()
    {
        QTest::addColumn<int>("budget");
        QTest::newRow("tiny") << 7;
        QTest::newRow("below the recipe") << 333;
        QTest::newRow("with the recipe") << 1500;
    }
    void stopsAtBudget()
    {
        QFETCH(int, budget);
        const Scenario s = preset("deepseek-v3-256gpu");
        SearchOptions o = ppoOptions(budget, 1);
        o.extra["ppo.tau"] = 1; // no early exit: the budget alone ends the run
        CountingObserver obs;
        const SearchOutcome r = runSearch(s, o, &obs);
        QVERIFY2(r.calls <= budget, qPrintable(QString::number(r.calls)));
        QVERIFY(obs.maxCall <= budget);
        QVERIFY2(r.calls == budget || r.message.find("converged") != std::string::npos, r.message.c_str());
        QVERIFY(obs.last.finished);
    }

    void stopsOnRequest()
    {
        const Scenario s = preset("moe-1.6t-1024gpu");
        CountingObserver obs(300);
        const SearchOutcome r = runSearch(s, ppoOptions(4000, 2), &obs, &obs.stop);
        QVERIFY(r.stopped);
        QVERIFY2(r.calls >= 300 && r.calls <= 301, qPrintable(QString::number(r.calls)));
    }

    void earlyExitOnConfidence()
    {
        const Scenario s = preset("llama3-70b-8gpu");
        SearchOptions o = ppoOptions(4000, 3);
        o.extra["ppo.tau"] = 0.01; // any trained policy is more confident than that
        const SearchOutcome r = runSearch(s, o);
        QVERIFY2(r.message.find("early exit") != std::string::npos, r.message.c_str());
        QVERIFY(r.calls < 4000);
    }

    // The GUI's live views: confidence and entropy, per-slot probabilities as metrics
    // "p:<slot>:<value>" (each slot's sum to 1), and the elite history, best first.
    void progressCarriesPolicyViews()
    {
        const Scenario s = preset("mixtral-8x22b-64gpu");
        CountingObserver obs;
        const SearchOutcome r = runSearch(s, ppoOptions(1200, 4), &obs);
        QVERIFY(r.found);
        const SearchProgress& p = obs.last;
        const SearchSpace space(s);
        std::map<std::string, double> sums;
        std::set<std::string> names;
        for (const auto& [name, value] : p.metrics) {
            names.insert(name);
            if (name.rfind("p:", 0) == 0)
                sums[name.substr(2, name.rfind(':') - 2)] += value;
        }
        QCOMPARE(static_cast<int>(sums.size()), space.slotCount());
        for (const auto& [slot, sum] : sums)
            QVERIFY2(std::abs(sum - 1) < 1e-3, slot.c_str());
        for (const char* n : {"confidence", "entropy", "policy_loss", "value_loss", "approx_kl", "clip_fraction"})
            QVERIFY2(names.count(n), n);
        QVERIFY(!p.elites.empty() && p.elites.size() <= 3);
        for (size_t i = 1; i < p.elites.size(); ++i)
            QVERIFY(p.elites[i - 1].tokensPerSPerGpu >= p.elites[i].tokensPerSPerGpu);
    }

    void optionsFromExtra()
    {
        rl::PpoOptions o;
        QVERIFY(rl::parsePpoOptions({{"ppo.elite", 0}, {"ppo.lr", 0.01}, {"anneal.x", 3}}, o).empty());
        QCOMPARE(o.elite, 0);
        QCOMPARE(o.learningRate, 0.01);
        FieldErrors e = rl::parsePpoOptions({{"ppo.lr", -1}}, o);
        QCOMPARE(e.size(), size_t(1));
        QCOMPARE(e[0].where, std::string("ppo.lr"));
        e = rl::parsePpoOptions({{"ppo.samples", 2.5}}, o);
        QVERIFY(!e.empty() && e[0].reason.find("whole number") != std::string::npos);
        e = rl::parsePpoOptions({{"ppo.elitee", 2}}, o);
        QVERIFY(!e.empty() && e[0].where == "ppo.elitee");
        e = rl::parsePpoOptions({{"ppo.hidden", 30}, {"ppo.heads", 4}}, o);
        QVERIFY(!e.empty() && e[0].where == "ppo.heads");
        // Bad options reach a search as a message, not a crash.
        SearchOptions so = ppoOptions(100, 1);
        so.extra["ppo.tau"] = 7;
        const SearchOutcome r = runSearch(preset("llama3-70b-8gpu"), so);
        QVERIFY(!r.found);
        QVERIFY2(r.message.find("ppo.tau") != std::string::npos, r.message.c_str());
    }

    void optionsFromJson()
    {
        std::map<std::string, double> extra;
        QVERIFY(rl::ppoExtraFromJson(R"({"ppo": {"elite": 0, "lr": 0.001, "warm_start": false}})", "p.json", extra)
                    .empty());
        QCOMPARE(extra.at("ppo.elite"), 0.0);
        QCOMPARE(extra.at("ppo.warm_start"), 0.0);
        const FieldErrors e = rl::ppoExtraFromJson(R"({"tau": "high"})", "p.json", extra);
        QCOMPARE(e.size(), size_t(1));
        QCOMPARE(e[0].file, std::string("p.json"));
        QCOMPARE(e[0].where, std::string("tau"));
        QVERIFY(!rl::ppoExtraFromJson("{", "p.json", extra).empty());
        rl::PpoOptions round;
        QVERIFY(rl::parsePpoOptions(rl::ppoOptionsToExtra(rl::PpoOptions{}), round).empty());
    }
};

QTEST_GUILESS_MAIN(TestPpo)
#include "tst_ppo.moc"

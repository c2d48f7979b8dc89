// The ppo search: the policy learns a bandit, masks hold under sampling, a seed
// replays, the budget and a stop request end the search, options parse with named errors.
#include <QtTest>

#include <atomic>
#include <cstring>
#include <cmath>
#include <map>
#include <set>

#include "model/plan.h"
#include "plugin/rl_plugin.h"
#include "rl/ppo_agent.h"
#include "rl/ppo_options.h"
#include "rl/ppo_pretrain.h"
#include "rl/pretrained_policy.h"
#include "rl/ppo_search.h"
#include "runner/run_search.h"
#include "search/training_fingerprint.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using shardlab::testing::budgeted;
using shardlab::testing::presetScenario;

namespace {

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

// A weights file (magic line, header, then name/values records) with the parameter `drop`
// left out and a parameter `add` of 3 values appended.
std::string rewriteParameters(const std::string& w, const std::string& drop, const std::string& add)
{
    auto get32 = [&](size_t at) {
        std::uint32_t v = 0;
        std::memcpy(&v, w.data() + at, 4);
        return v;
    };
    auto put32 = [](std::string& out, std::uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
    size_t at = w.find('\n') + 1;
    at += 4 + get32(at);
    const std::uint32_t count = get32(at);
    std::string records;
    std::uint32_t kept = 0;
    size_t p = at + 4;
    for (std::uint32_t i = 0; i < count; ++i) {
        const std::uint32_t nameLen = get32(p);
        const std::string name = w.substr(p + 4, nameLen);
        const size_t size = 4 + nameLen + 4 + size_t(get32(p + 4 + nameLen)) * 4;
        if (name != drop) {
            records += w.substr(p, size);
            ++kept;
        }
        p += size;
    }
    put32(records, static_cast<std::uint32_t>(add.size()));
    records += add;
    put32(records, 3);
    const float values[3] = {1, 2, 3};
    records.append(reinterpret_cast<const char*>(values), sizeof values);
    std::string out = w.substr(0, at);
    put32(out, kept + 1);
    return out + records;
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
        const SearchOutcome r = runSearch(presetScenario("llama3-70b-8gpu"), budgeted("ppo", 300, 1));
        QVERIFY2(r.found, r.message.c_str());
        QVERIFY(rlPluginLoaded());
        QVERIFY2(r.message.find("ppo (") != std::string::npos, r.message.c_str());
    }

    void banditShiftsProbability_data()
    {
        QTest::addColumn<double>("topFraction");
        QTest::newRow("plain PPO, mean baseline") << 1.0;
        QTest::newRow("risk-seeking, quantile baseline") << 0.25;
    }
    // A one-slot bandit: value index 1 of the batch slot pays 1, the others 0. The policy
    // (no elite history) must move its probability toward index 1 within a few updates.
    void banditShiftsProbability()
    {
        QFETCH(double, topFraction);
        const Scenario s = presetScenario("llama3-70b-8gpu");
        SearchSpaceOptions so;
        so.batchValues = {8, 16, 32};
        const SearchSpace space(s, so);
        rl::PpoOptions o;
        o.pretrained = false; // an untrained policy: the update alone must move it
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
        const Scenario s = presetScenario(scenario.toLatin1().constData());
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

    void nearSamplesStayNearTheBestElite_data() { masksHoldUnderSampling_data(); }
    // Samples near the best elite: none without an elite; with one, every sample passes the
    // masks and the plan checks, is anchored on that elite, and most differ from it in one
    // or two slots (a later slot the mask no longer allows may differ too).
    void nearSamplesStayNearTheBestElite()
    {
        QFETCH(QString, scenario);
        const Scenario s = presetScenario(scenario.toLatin1().constData());
        const SearchSpace space(s);
        rl::PpoAgent agent(space, rl::scenarioFeatures(s), rl::PpoOptions{}, 3);
        QVERIFY(agent.sampleNearBest(8).empty());
        std::mt19937_64 rng(9);
        std::vector<int> best(space.slotCount());
        space.randomPlan(rng, best.data());
        agent.setElites({{best, 1.0}});
        const auto batch = agent.sampleNearBest(64);
        QCOMPARE(static_cast<int>(batch.size()), 64);
        int near = 0, same = 0;
        for (const auto& c : batch) {
            QVERIFY(space.isValid(c.data()));
            const FieldErrors e = validatePlan(space.decode(c.data()), s);
            QVERIFY2(e.empty(), e.empty() ? "" : e.front().toString().c_str());
            int differ = 0;
            for (int k = 0; k < space.slotCount(); ++k)
                differ += c[k] != best[k];
            near += differ >= 1 && differ <= 2;
            same += differ == 0;
        }
        for (std::int64_t a : agent.latestAnchors())
            QCOMPARE(a, std::int64_t(1));
        QVERIFY2(near >= 32, qPrintable(QString("%1 of 64 within two slots, %2 repeats").arg(near).arg(same)));
    }

    void sameSeedSameResult()
    {
        const Scenario s = presetScenario("mixtral-8x22b-64gpu");
        const SearchOutcome a = runSearch(s, budgeted("ppo", 1200, 42));
        const SearchOutcome b = runSearch(s, budgeted("ppo", 1200, 42));
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
        const Scenario s = presetScenario("deepseek-v3-256gpu");
        SearchOptions o = budgeted("ppo", budget, 1);
        o.extra["ppo.tau"] = 1; // no early exit: the budget alone ends the run
        CountingObserver obs;
        const SearchOutcome r = runSearch(s, o, &obs);
        QVERIFY2(r.calls <= budget, qPrintable(QString::number(r.calls)));
        QVERIFY(obs.maxCall <= budget);
        QVERIFY2(r.calls >= budget - refinementReserve(budget) || r.message.find("converged") != std::string::npos,
                 r.message.c_str());
        QVERIFY(obs.last.finished);
    }

    void stopsOnRequest()
    {
        const Scenario s = presetScenario("moe-1.6t-1024gpu");
        CountingObserver obs(300);
        const SearchOutcome r = runSearch(s, budgeted("ppo", 4000, 2), &obs, &obs.stop);
        QVERIFY(r.stopped);
        QVERIFY2(r.calls >= 300 && r.calls <= 301, qPrintable(QString::number(r.calls)));
    }

    // A search whose best stops improving recovers (hotter samples, half from scratch) and
    // says so; with ppo.recover_after=0 it never does. Llama-3-70B's optimum is found early,
    // so the rest of a 1500-call budget is a long stretch without improvement.
    void recoversFromADeadEnd()
    {
        const Scenario s = presetScenario("llama3-70b-8gpu");
        SearchOptions o = budgeted("ppo", 1500, 1);
        o.extra["ppo.tau"] = 1; // no early exit: the budget runs out
        CountingObserver on;
        const SearchOutcome a = runSearch(s, o, &on);
        auto metric = [](const SearchProgress& p, const std::string& name) {
            for (const auto& [k, v] : p.metrics)
                if (k == name)
                    return v;
            return -1.0;
        };
        QVERIFY2(metric(on.last, "recoveries") >= 1, a.message.c_str());
        QVERIFY2(a.message.find("from a dead end") != std::string::npos, a.message.c_str());
        o.extra["ppo.recover_after"] = 0;
        CountingObserver off;
        const SearchOutcome b = runSearch(s, o, &off);
        QCOMPARE(metric(off.last, "recoveries"), 0.0);
        QVERIFY2(b.message.find("dead end") == std::string::npos, b.message.c_str());
    }

    // The shipped policy is keyed by slot and value names, so one set of weights loads into
    // spaces of different layouts (dense GQA, MoE, MLA: other operator slots, other value
    // lists), and ppo.pretrained=0 gives the untrained network.
    void pretrainedPolicyLoadsIntoEveryLayout()
    {
        const rl::PretrainedPolicyInfo info = rl::pretrainedPolicyInfo();
        QVERIFY2(info.available, info.error.c_str());
        QVERIFY(!info.curve.empty());
        QVERIFY(info.trainingScenarios > 0 && info.command.find("shardlab-pretrain") != std::string::npos);
        std::set<int> slotCounts;
        for (const char* n : {"llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu"}) {
            const Scenario s = presetScenario(n);
            const SearchSpace space(s);
            slotCounts.insert(space.slotCount());
            rl::PpoOptions o;
            rl::PpoAgent agent(space, rl::scenarioFeatures(s), o, 1);
            QVERIFY(agent.pretrained());
            const rl::GreedyView g = agent.greedy();
            QVERIFY(space.isValid(g.choice.data()));
            o.pretrained = false;
            rl::PpoAgent scratch(space, rl::scenarioFeatures(s), o, 1);
            QVERIFY(!scratch.pretrained());
            // Different weights give a different distribution somewhere.
            const rl::GreedyView h = scratch.greedy();
            bool differs = false;
            for (size_t k = 0; k < g.probabilities.size(); ++k)
                for (size_t v = 0; v < g.probabilities[k].size(); ++v)
                    differs = differs || std::abs(g.probabilities[k][v] - h.probabilities[k][v]) > 1e-3;
            QVERIFY(differs);
        }
        QVERIFY(slotCounts.size() > 1); // the layouts really differ
        // A width other than the shipped policy's is refused with the fix in the message.
        SearchOptions so = budgeted("ppo", 1000, 1);
        so.extra["ppo.hidden"] = 48;
        const SearchOutcome r = runSearch(presetScenario("llama3-70b-8gpu"), so);
        QVERIFY2(r.message.find("ppo.pretrained=0") != std::string::npos, r.message.c_str());
        so.extra["ppo.pretrained"] = 0;
        QVERIFY(runSearch(presetScenario("llama3-70b-8gpu"), so).found);
    }

    // The trainer: seeded, so the weights (not the header's wall time) replay; the curve has
    // one point per epoch; the file it writes is read back with its shape.
    void pretrainingReplays()
    {
        rl::PretrainOptions o;
        o.trainScenarios = 6;
        o.validationScenarios = 2;
        o.epochs = 2;
        o.command = "shardlab-pretrain (test)";
        std::vector<std::string> lines;
        const rl::PretrainResult a = rl::pretrainPolicy(o, [&](const std::string& l) { lines.push_back(l); });
        const rl::PretrainResult b = rl::pretrainPolicy(o, [](const std::string&) {});
        QVERIFY2(a.info.available, a.info.error.c_str());
        QCOMPARE(static_cast<int>(a.info.curve.size()), 2);
        QCOMPARE(a.info.hidden, o.hidden);
        for (const auto& p : a.info.curve)
            QVERIFY(std::isfinite(p.trainLoss) && p.trainLoss > 0 && std::isfinite(p.validationLoss));
        auto body = [](const std::string& w) {
            const size_t at = w.find('\n') + 1;
            std::uint32_t len = 0;
            std::memcpy(&len, w.data() + at, 4);
            return w.substr(at + 4 + len);
        };
        QVERIFY(body(a.weights).size() > 10000);
        QVERIFY(body(a.weights) == body(b.weights));
        QVERIFY(!lines.empty());
    }

    // The GUI's live views: confidence and entropy, per-slot probabilities (one
    // distribution per slot of the space, in slot order, each summing to 1), and the elite
    // history, best first.
    void progressCarriesPolicyViews()
    {
        const Scenario s = presetScenario("mixtral-8x22b-64gpu");
        CountingObserver obs;
        const SearchOutcome r = runSearch(s, budgeted("ppo", 1200, 4), &obs);
        QVERIFY(r.found);
        const SearchProgress& p = obs.last;
        const SearchSpace space(s);
        std::set<std::string> names;
        for (const auto& [name, value] : p.metrics) {
            names.insert(name);
            QVERIFY2(name.rfind("p:", 0) != 0, name.c_str()); // probabilities are typed, not named
        }
        QCOMPARE(static_cast<int>(p.slotDistributions.size()), space.slotCount());
        for (int k = 0; k < space.slotCount(); ++k) {
            const SearchProgress::SlotDistribution& d = p.slotDistributions[k];
            QCOMPARE(d.slot.name, space.slots()[k].name);
            QVERIFY(d.slot.values == space.slots()[k].values);
            QCOMPARE(d.probabilities.size(), d.slot.values.size());
            double sum = 0;
            for (double v : d.probabilities)
                sum += v;
            QVERIFY2(std::abs(sum - 1) < 1e-3, d.slot.name.c_str());
        }
        for (const char* n : {"confidence", "entropy", "policy_loss", "approx_kl", "clip_fraction", "pretrained",
                              "elite_age", "attention:0", "anchor:0"})
            QVERIFY2(names.count(n), n);
        // Where the proposals came from: shares over the memory places, summing to 1; the
        // attention over those places is a distribution too.
        double anchors = 0, attention = 0;
        for (const auto& [name, value] : p.metrics) {
            if (name.rfind("anchor:", 0) == 0)
                anchors += value;
            if (name.rfind("attention:", 0) == 0)
                attention += value;
        }
        QVERIFY2(std::abs(anchors - 1) < 1e-6, qPrintable(QString::number(anchors)));
        QVERIFY2(std::abs(attention - 1) < 1e-4, qPrintable(QString::number(attention)));
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
        SearchOptions so = budgeted("ppo", 100, 1);
        so.extra["ppo.tau"] = 7;
        const SearchOutcome r = runSearch(presetScenario("llama3-70b-8gpu"), so);
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

    // The shipped weights were trained against this build's search space and cost model:
    // a change of either lands with retrained weights (docs/ppo.md, "Retraining").
    void shippedWeightsMatchThisBuild()
    {
        const rl::PretrainedPolicyInfo info = rl::pretrainedPolicyInfo();
        QVERIFY2(info.available, info.error.c_str());
        const TrainingFingerprint& f = trainingFingerprint();
        QVERIFY2(f.probes >= 100, std::to_string(f.probes).c_str());
        QCOMPARE(static_cast<int>(f.hash.size()), 16);
        QCOMPARE(&trainingFingerprint(), &f); // computed once per process
        const std::string stale = rl::policyStaleness(info);
        QVERIFY2(info.fingerprint == f.hash && stale.empty(), stale.c_str());
        // Weights with another fingerprint are reported stale, with the command that retrains.
        rl::PretrainedPolicyInfo other = info;
        other.fingerprint = "0000000000000000";
        const std::string why = rl::policyStaleness(other);
        QVERIFY2(why.find("another search space or cost model") != std::string::npos
                     && why.find("shardlab-pretrain") != std::string::npos,
                 why.c_str());
    }

    // A network grown by a part still loads the weights it shares: a parameter the file
    // lacks keeps its initial value, one the network lacks is ignored, both are named.
    void weightsWithMissingOrExtraPartsLoad()
    {
        const std::string& shipped = rl::pretrainedPolicyBytes();
        if (shipped.empty())
            QSKIP("this build has no pretrained policy");
        const std::string edited = rewriteParameters(shipped, "value_out.weight", "a_future_part");
        QVERIFY(edited != shipped);
        rl::PpoOptions o;
        std::string notes;
        QCOMPARE(rl::policyWeightsProblem(edited, o, &notes), std::string());
        QVERIFY2(notes.find("value_out.weight") != std::string::npos && notes.find("a_future_part") != std::string::npos,
                 notes.c_str());
        notes.clear();
        QCOMPARE(rl::policyWeightsProblem(shipped, o, &notes), std::string());
        QCOMPARE(notes, std::string());
    }

    // Values are described by what they mean, not only by name: a value list the policy
    // was never trained on (every batch from 3 to 2000 in steps of 7) still loads and
    // decodes into valid plans, sampled and greedy.
    void unseenValueListsDecode()
    {
        const Scenario s = presetScenario("deepseek-v3-256gpu");
        SearchSpaceOptions so;
        for (int b = 3; b <= 2000; b += 7)
            so.batchValues.push_back(b);
        const SearchSpace space(s, so);
        rl::PpoOptions o;
        rl::PpoAgent agent(space, rl::scenarioFeatures(s), o, 3);
        QVERIFY(agent.pretrained());
        QVERIFY(space.isValid(agent.greedy().choice.data()));
        for (const std::vector<int>& c : agent.sample(64))
            QVERIFY(space.isValid(c.data()));
    }

    // Damaged weights are refused by name, never loaded: a bad header, a truncated file and
    // a NaN or inf among the values (the last float of the file).
    void damagedWeightsAreRefused()
    {
        const std::string& shipped = rl::pretrainedPolicyBytes();
        if (shipped.empty())
            QSKIP("this build has no pretrained policy");
        rl::PpoOptions o;
        QCOMPARE(rl::policyWeightsProblem(shipped, o), std::string());
        QVERIFY(rl::policyWeightsProblem("GARBAGE" + shipped, o).find("bad header") != std::string::npos);
        QVERIFY(rl::policyWeightsProblem(shipped.substr(0, shipped.size() / 2), o).find("truncated") != std::string::npos);
        for (float bad : {std::nanf(""), INFINITY}) {
            std::string damaged = shipped;
            std::memcpy(&damaged[damaged.size() - 4], &bad, 4);
            const std::string why = rl::policyWeightsProblem(damaged, o);
            QVERIFY2(why.find("not finite (NaN or inf)") != std::string::npos, why.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestPpo)
#include "tst_ppo.moc"

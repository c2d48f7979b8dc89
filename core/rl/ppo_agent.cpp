// The PPO agent over the layout-independent policy (rl/policy_net.h): the rollout, its
// frozen elite history, the baseline and the greedy view (docs/ppo.md). Plain C++: the
// network's tensors stay in policy_net.cpp.
#include "rl/ppo_agent.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

#include "rl/policy_net.h"
#include "rl/pretrained_policy.h"

namespace shardlab::rl {

namespace {

// OpenBLAS (LibTorch's BLAS on Debian) keeps its own thread pool, which
// torch::set_num_threads does not cap; its threads spin (sched_yield) waiting for work, and
// on a loaded 2-core machine that made a 4000-call search 3x slower (0.9-1.1 s with one
// thread vs 2.9-3.4 s). Cap it too. The library is already loaded (LibTorch links it), so
// RTLD_NOLOAD only finds it; nothing happens where it is absent.
void capBlasThreads(int threads)
{
    using SetThreads = void (*)(int);
    for (const char* name : {"libopenblas.so.0", "libblas.so.3"}) {
        void* handle = ::dlopen(name, RTLD_NOW | RTLD_NOLOAD);
        if (!handle)
            continue;
        if (auto set = reinterpret_cast<SetThreads>(::dlsym(handle, "openblas_set_num_threads")))
            set(threads);
        ::dlclose(handle);
    }
}

} // namespace

struct PpoAgent::Impl {
    PpoOptions options;
    net::Scene scene;
    net::Policy policy;
    std::mt19937_64 rng;
    std::vector<EliteEntry> elites;
    double scratch = 0;
    double temperature = 1;
    int previousThreads = 1;
    bool pretrained = false;
    std::string loadNotes; // how the pretrained weights fit this build ("" when they do)

    net::History snapshot; // the elite history of the pending rollout
    net::Batch pending;    // every sample since the last update
    net::Batch latest;     // the last sample() call

    Impl(const SearchSpace& sp, const std::vector<float>& feats, const PpoOptions& o, std::uint64_t seed)
        : options(o), scene(sp, feats), policy(o.hidden, o.heads, static_cast<float>(o.copyInit), &seed),
          rng(seed)
    {
        if (options.pretrained) {
            const std::string& bytes = options.weights ? *options.weights : pretrainedPolicyBytes();
            const PretrainedPolicyInfo info = options.weights ? readPolicyInfo(bytes) : pretrainedPolicyInfo();
            if (!info.available)
                throw std::runtime_error("no pretrained policy in this build (" + info.error
                                         + "); set ppo.pretrained=0");
            if (info.hidden != options.hidden || info.heads != options.heads)
                throw std::runtime_error("the pretrained policy has width " + std::to_string(info.hidden) + " and "
                                         + std::to_string(info.heads) + " heads, not ppo.hidden="
                                         + std::to_string(options.hidden) + ", ppo.heads="
                                         + std::to_string(options.heads) + "; set ppo.pretrained=0 to train another");
            std::string error;
            if (!net::loadWeights(policy, bytes, error, &loadNotes))
                throw std::runtime_error("pretrained policy: " + error);
            pretrained = true;
            if (!loadNotes.empty())
                loadNotes = "the pretrained policy's weights loaded in part: " + loadNotes;
            const std::string stale = policyStaleness(info);
            loadNotes += (loadNotes.empty() || stale.empty() ? "" : "; ") + stale;
        }
        policy.makeOptimizer(options.learningRate);
    }

    net::History makeSnapshot() const { return net::History(scene, elites, options.elite, scratch); }

    net::LearningSamples learningSet(const std::vector<double>& rewards, const std::vector<std::uint8_t>& learn);
};

// The baseline (docs/ppo.md, "The update"). The state a rollout is sampled in is the same
// for every sample (scenario and frozen elite history), so a learned state-value baseline
// is one number per rollout and cancels in standardized advantages: there is no value head.
// Risk-seeking (topFraction < 1): the rollout's (1 - topFraction) reward quantile, and only
// samples at or above it enter the loss (the rest are neither pushed up nor down); when
// every such sample ties at the best reward, the rollout's mean. Plain PPO
// (topFraction = 1): the rollout's mean reward.
net::LearningSamples PpoAgent::Impl::learningSet(const std::vector<double>& rewards,
                                                 const std::vector<std::uint8_t>& learn)
{
    net::LearningSamples ls;
    const int total = std::min<int>(static_cast<int>(rewards.size()), static_cast<int>(pending.choices.size()));
    std::vector<int> flagged;
    std::vector<float> all;
    for (int i = 0; i < total; ++i)
        if (learn.empty() || (i < static_cast<int>(learn.size()) && learn[i])) {
            flagged.push_back(i);
            all.push_back(static_cast<float>(rewards[i]));
        }
    if (flagged.empty())
        return ls;
    if (options.topFraction < 1) {
        std::vector<float> sorted(all);
        std::sort(sorted.begin(), sorted.end(), std::greater<float>());
        ls.baseline = sorted[std::max(1, static_cast<int>(std::ceil(options.topFraction * sorted.size()))) - 1];
        // When the top fraction all tie at the best reward (a plan repeated, or a bandit whose
        // winner already holds that share), nothing lies above the quantile and the update
        // would stop: those samples are then taken against the rollout's mean instead.
        if (ls.baseline >= sorted.front())
            ls.baseline = std::accumulate(all.begin(), all.end(), 0.0) / all.size();
    } else {
        ls.baseline = std::accumulate(all.begin(), all.end(), 0.0) / all.size();
    }
    const net::SpaceLayout& L = scene.layout();
    const size_t stride = static_cast<size_t>(L.slots) * L.widest;
    for (size_t j = 0; j < flagged.size(); ++j) {
        if (options.topFraction < 1 && all[j] < ls.baseline)
            continue;
        const int i = flagged[j];
        ls.actions.insert(ls.actions.end(), pending.choices[i].begin(), pending.choices[i].end());
        ls.anchors.push_back(pending.anchors[i]);
        ls.temperature.push_back(pending.temperature[i]);
        ls.masks.insert(ls.masks.end(), pending.masks.begin() + i * stride, pending.masks.begin() + (i + 1) * stride);
        ls.reward.push_back(all[j]);
    }
    ls.n = static_cast<int>(ls.reward.size());
    return ls;
}

PpoAgent::PpoAgent(const SearchSpace& space, const std::vector<float>& scenarioFeatures, const PpoOptions& options,
                   std::uint64_t seed)
{
    m_impl = std::make_unique<Impl>(space, scenarioFeatures, options, seed);
    m_impl->previousThreads = net::setThreads(options.threads);
    capBlasThreads(std::max(1, options.threads));
}

PpoAgent::~PpoAgent()
{
    if (m_impl)
        net::setThreads(m_impl->previousThreads);
}

bool PpoAgent::pretrained() const { return m_impl->pretrained; }

const std::string& PpoAgent::pretrainedNotes() const { return m_impl->loadNotes; }

std::string policyWeightsProblem(const std::string& bytes, const PpoOptions& o, std::string* notes)
{
    net::Policy policy(o.hidden, o.heads, static_cast<float>(o.copyInit), nullptr);
    std::string error;
    return net::loadWeights(policy, bytes, error, notes) ? std::string() : error;
}

void PpoAgent::setElites(const std::vector<EliteEntry>& elites)
{
    Impl& d = *m_impl;
    d.elites.clear();
    for (const EliteEntry& e : elites)
        if (static_cast<int>(e.choice.size()) == d.scene.layout().slots && static_cast<int>(d.elites.size()) < d.options.elite)
            d.elites.push_back(e);
}

void PpoAgent::setScratchShare(double share) { m_impl->scratch = std::clamp(share, 0.0, 1.0); }

void PpoAgent::setTemperature(double t) { m_impl->temperature = std::clamp(t, 0.05, 100.0); }

const std::vector<std::vector<int>>& PpoAgent::sample(int n)
{
    Impl& d = *m_impl;
    if (d.pending.choices.empty())
        d.snapshot = d.makeSnapshot();
    d.latest = d.policy.decode(d.scene, d.snapshot, std::max(1, n), false, d.rng, nullptr, nullptr,
                               static_cast<float>(d.temperature));
    d.pending.append(d.latest);
    return d.latest.choices;
}

const std::vector<std::vector<int>>& PpoAgent::sampleNearBest(int n)
{
    Impl& d = *m_impl;
    if (d.pending.choices.empty())
        d.snapshot = d.makeSnapshot();
    if (d.snapshot.count() == 0 || d.elites.empty()) {
        d.latest.clear();
        return d.latest.choices;
    }
    d.latest = d.policy.decodeNear(d.scene, d.snapshot, 1, d.elites.front().choice, std::max(1, n), d.rng,
                                   static_cast<float>(d.temperature));
    d.pending.append(d.latest);
    return d.latest.choices;
}

const std::vector<std::int64_t>& PpoAgent::latestAnchors() const { return m_impl->latest.anchors; }

PpoUpdateMetrics PpoAgent::update(const std::vector<double>& rewards, const std::vector<std::uint8_t>& learn)
{
    Impl& d = *m_impl;
    const net::LearningSamples ls = d.learningSet(rewards, learn);
    d.pending.clear();
    return d.policy.ppoUpdate(d.scene, d.snapshot, ls, d.options, d.rng);
}

GreedyView PpoAgent::greedy()
{
    Impl& d = *m_impl;
    GreedyView g;
    const net::Batch b = d.policy.decode(d.scene, d.makeSnapshot(), 1, true, d.rng, &g.anchorProbabilities,
                                         &g.probabilities, 1.0f, &g.attention);
    g.choice = b.choices[0];
    g.anchor = static_cast<int>(b.anchors[0]);
    g.confidence = g.anchorProbabilities[g.anchor];
    for (int k = 0; k < d.scene.layout().slots; ++k)
        g.confidence *= g.probabilities[k][g.choice[k]];
    return g;
}

} // namespace shardlab::rl

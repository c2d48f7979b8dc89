// The PPO agent over the layout-independent policy (rl/policy_net.h): sampling, the greedy
// view and the PPO update (docs/ppo.md). A LibTorch translation unit (~30 s to compile).
#include "rl/ppo_agent.h"

#include <torch/torch.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <new>
#include <numeric>
#include <random>
#include <stdexcept>

#include "rl/policy_net.h"
#include "rl/pretrained_policy.h"

namespace shardlab::rl {

namespace {

// LibTorch's default generator is process-wide.
std::mutex& torchGlobalsMutex()
{
    static std::mutex m;
    return m;
}

// Runs `f`, turning a LibTorch error into std::runtime_error with its first line, so no
// c10 type leaves this file (the search loop reports it; nothing crashes). LibTorch's
// allocation failures become std::bad_alloc: runSearch reports those as memory running
// out and keeps the best plan found so far.
template <typename F>
auto guarded(F&& f) -> decltype(f())
{
    try {
        return f();
    } catch (const c10::Error& e) {
        const std::string what = e.what();
        if (dynamic_cast<const c10::OutOfMemoryError*>(&e) || what.find("not enough memory") != std::string::npos)
            throw std::bad_alloc();
        throw std::runtime_error("LibTorch: " + what.substr(0, what.find('\n')));
    }
}

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
    const SearchSpace& space;
    PpoOptions options;
    net::SpaceLayout L;
    torch::Tensor features; // [1, 1, F]
    net::PolicyNet policy{nullptr};
    std::unique_ptr<torch::optim::Adam> adam;
    std::mt19937_64 rng;
    std::vector<EliteEntry> elites;
    double scratch = 0;
    double temperature = 1;
    int previousThreads = 1;
    bool pretrained = false;
    std::string loadNotes; // how the pretrained weights fit this build ("" when they do)

    net::EliteSnapshot snapshot; // of the pending rollout
    net::Batch pending;          // every sample since the last update
    net::Batch latest;           // the last sample() call

    Impl(const SearchSpace& sp, const std::vector<float>& feats, const PpoOptions& o, std::uint64_t seed)
        : space(sp), options(o), rng(seed)
    {
        L = net::makeLayout(space);
        std::vector<float> f(feats);
        f.resize(kScenarioFeatures, 0.0f);
        features = torch::tensor(f).view({1, 1, kScenarioFeatures});
        std::lock_guard<std::mutex> lock(torchGlobalsMutex());
        torch::manual_seed(seed);
        policy = net::PolicyNet(options.hidden, options.heads, static_cast<float>(options.copyInit));
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
        adam = std::make_unique<torch::optim::Adam>(policy->parameters(), torch::optim::AdamOptions(options.learningRate));
    }

    net::EliteSnapshot makeSnapshot() const { return net::makeSnapshot(L, elites, options.elite, scratch); }
    net::Context encode(const net::EliteSnapshot& s) { return net::encode(policy, L, features, s, options.elite); }

    // The pending rollout's samples to learn from, as tensors, with their advantages.
    struct LearningSet {
        double baseline = 0;
        int n = 0; // samples in the policy loss
        torch::Tensor actions, anchors, mask, oldLogp, advantage, temperature;
    };
    LearningSet learningSet(const std::vector<double>& rewards, const std::vector<std::uint8_t>& learn);
    PpoUpdateMetrics update(const std::vector<double>& rewards, const std::vector<std::uint8_t>& learn);
};

// The baseline (docs/ppo.md, "The update"). The state a rollout is sampled in is the same
// for every sample (scenario and frozen elite history), so a learned state-value baseline
// is one number per rollout and cancels in standardized advantages: there is no value head.
// Risk-seeking (topFraction < 1): the rollout's (1 - topFraction) reward quantile, and only
// samples at or above it enter the loss (the rest are neither pushed up nor down); when
// every such sample ties at the best reward, the rollout's mean. Plain PPO
// (topFraction = 1): the rollout's mean reward.
PpoAgent::Impl::LearningSet PpoAgent::Impl::learningSet(const std::vector<double>& rewards,
                                                         const std::vector<std::uint8_t>& learn)
{
    LearningSet ls;
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
    std::vector<std::int64_t> act, anc;
    std::vector<std::uint8_t> maskBytes;
    std::vector<float> r, temps;
    const size_t stride = static_cast<size_t>(L.slots) * L.widest;
    for (size_t j = 0; j < flagged.size(); ++j) {
        if (options.topFraction < 1 && all[j] < ls.baseline)
            continue;
        const int i = flagged[j];
        act.insert(act.end(), pending.choices[i].begin(), pending.choices[i].end());
        anc.push_back(pending.anchors[i]);
        temps.push_back(pending.temperature[i]);
        maskBytes.insert(maskBytes.end(), pending.masks.begin() + i * stride, pending.masks.begin() + (i + 1) * stride);
        r.push_back(all[j]);
    }
    ls.n = static_cast<int>(r.size());
    if (ls.n == 0)
        return ls;
    ls.actions = torch::tensor(act, torch::kLong).view({ls.n, L.slots});
    ls.anchors = torch::tensor(anc, torch::kLong);
    ls.temperature = torch::tensor(temps);
    ls.mask = torch::from_blob(maskBytes.data(), {ls.n, L.slots, L.widest}, torch::kUInt8).to(torch::kBool);
    torch::NoGradGuard noGrad;
    ls.oldLogp = net::logProb(policy, L, encode(snapshot), ls.anchors, ls.actions, ls.mask, ls.temperature).first;
    // Standardized: the step size does not depend on the reward's scale.
    auto a = torch::tensor(r) - static_cast<float>(ls.baseline);
    if (ls.n > 1)
        a = a / (a.std(false) + 1e-8);
    ls.advantage = a;
    return ls;
}

PpoUpdateMetrics PpoAgent::Impl::update(const std::vector<double>& rewards, const std::vector<std::uint8_t>& learn)
{
    const LearningSet ls = learningSet(rewards, learn);
    pending.clear();
    PpoUpdateMetrics m;
    m.baseline = ls.baseline;
    const int n = ls.n;
    if (n == 0)
        return m;
    const double eps = options.clipRange;
    const int mbSize = std::max(1, (n + options.minibatches - 1) / options.minibatches);
    std::vector<std::int64_t> order(n);
    for (int epoch = 0; epoch < options.epochs; ++epoch) {
        std::iota(order.begin(), order.end(), 0);
        for (int i = n - 1; i > 0; --i) // Fisher-Yates with the seeded engine: same order everywhere
            std::swap(order[i], order[rng() % static_cast<std::uint64_t>(i + 1)]);
        for (int start = 0; start < n; start += mbSize) {
            const int len = std::min(mbSize, n - start);
            const net::Context c = encode(snapshot);
            const auto idx =
                torch::tensor(std::vector<std::int64_t>(order.begin() + start, order.begin() + start + len), torch::kLong);
            auto [logp, entropy] =
                net::logProb(policy, L, c, ls.anchors.index({idx}), ls.actions.index({idx}), ls.mask.index({idx}),
                             ls.temperature.index({idx}));
            const auto adv = ls.advantage.index({idx});
            const auto ratio = torch::exp(logp - ls.oldLogp.index({idx}));
            const auto policyLoss = -torch::min(ratio * adv, torch::clamp(ratio, 1 - eps, 1 + eps) * adv).mean();
            const auto entropyMean = entropy.mean();
            const auto loss = policyLoss - options.entropyCoef * entropyMean;
            adam->zero_grad();
            loss.backward();
            const double gradNorm = torch::nn::utils::clip_grad_norm_(policy->parameters(), options.maxGradNorm);
            adam->step();

            torch::NoGradGuard noGrad;
            m.gradNorm += gradNorm;
            m.policyLoss += policyLoss.item<double>();
            m.entropy += entropyMean.item<double>();
            m.approxKl += ((ratio - 1) - torch::log(ratio)).mean().item<double>();
            m.clipFraction += ((ratio - 1).abs() > eps).to(torch::kFloat).mean().item<double>();
            ++m.minibatches;
        }
    }
    const double k = std::max(1, m.minibatches);
    m.gradNorm /= k;
    m.policyLoss /= k;
    m.entropy /= k;
    m.approxKl /= k;
    m.clipFraction /= k;
    m.samples = n;
    return m;
}

PpoAgent::PpoAgent(const SearchSpace& space, const std::vector<float>& scenarioFeatures, const PpoOptions& options,
                   std::uint64_t seed)
{
    guarded([&] {
        m_impl = std::make_unique<Impl>(space, scenarioFeatures, options, seed);
        m_impl->previousThreads = torch::get_num_threads();
        torch::set_num_threads(std::max(1, options.threads));
        capBlasThreads(std::max(1, options.threads));
        return 0;
    });
}

PpoAgent::~PpoAgent()
{
    if (m_impl)
        torch::set_num_threads(std::max(1, m_impl->previousThreads));
}

bool PpoAgent::pretrained() const { return m_impl->pretrained; }

const std::string& PpoAgent::pretrainedNotes() const { return m_impl->loadNotes; }

std::string policyWeightsProblem(const std::string& bytes, const PpoOptions& o, std::string* notes)
{
    std::lock_guard<std::mutex> lock(torchGlobalsMutex());
    net::PolicyNet policy(o.hidden, o.heads, static_cast<float>(o.copyInit));
    std::string error;
    return net::loadWeights(policy, bytes, error, notes) ? std::string() : error;
}

void PpoAgent::setElites(const std::vector<EliteEntry>& elites)
{
    Impl& d = *m_impl;
    d.elites.clear();
    for (const EliteEntry& e : elites)
        if (static_cast<int>(e.choice.size()) == d.L.slots && static_cast<int>(d.elites.size()) < d.options.elite)
            d.elites.push_back(e);
}

void PpoAgent::setScratchShare(double share) { m_impl->scratch = std::clamp(share, 0.0, 1.0); }

void PpoAgent::setTemperature(double t) { m_impl->temperature = std::clamp(t, 0.05, 100.0); }

const std::vector<std::vector<int>>& PpoAgent::sample(int n)
{
    return guarded([&]() -> const std::vector<std::vector<int>>& {
        Impl& d = *m_impl;
        if (d.pending.choices.empty())
            d.snapshot = d.makeSnapshot();
        torch::NoGradGuard noGrad;
        d.latest = net::decode(d.policy, d.space, d.L, d.encode(d.snapshot), std::max(1, n), false, d.rng, nullptr,
                                  nullptr, static_cast<float>(d.temperature));
        d.pending.append(d.latest);
        return d.latest.choices;
    });
}

const std::vector<std::vector<int>>& PpoAgent::sampleNearBest(int n)
{
    return guarded([&]() -> const std::vector<std::vector<int>>& {
        Impl& d = *m_impl;
        if (d.pending.choices.empty())
            d.snapshot = d.makeSnapshot();
        if (d.snapshot.count == 0 || d.elites.empty()) {
            d.latest.clear();
            return d.latest.choices;
        }
        torch::NoGradGuard noGrad;
        d.latest = net::decodeNear(d.policy, d.space, d.L, d.encode(d.snapshot), 1, d.elites.front().choice,
                                   std::max(1, n), d.rng, static_cast<float>(d.temperature));
        d.pending.append(d.latest);
        return d.latest.choices;
    });
}

const std::vector<std::int64_t>& PpoAgent::latestAnchors() const { return m_impl->latest.anchors; }

PpoUpdateMetrics PpoAgent::update(const std::vector<double>& rewards, const std::vector<std::uint8_t>& learn)
{
    return guarded([&] { return m_impl->update(rewards, learn); });
}

GreedyView PpoAgent::greedy()
{
    return guarded([&] {
        Impl& d = *m_impl;
        torch::NoGradGuard noGrad;
        GreedyView g;
        const net::Context c = d.encode(d.makeSnapshot());
        const net::Batch b = net::decode(d.policy, d.space, d.L, c, 1, true, d.rng, &g.anchorProbabilities, &g.probabilities);
        g.choice = b.choices[0];
        g.anchor = static_cast<int>(b.anchors[0]);
        g.confidence = g.anchorProbabilities[g.anchor];
        for (int k = 0; k < d.L.slots; ++k)
            g.confidence *= g.probabilities[k][g.choice[k]];
        const auto att = c.attention.contiguous();
        g.attention.assign(att.data_ptr<float>(), att.data_ptr<float>() + att.numel());
        return g;
    });
}

} // namespace shardlab::rl

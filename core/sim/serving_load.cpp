#include "sim/serving_load.h"

#include "sim/serving_load_parts.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <deque>
#include <limits>
#include <vector>

namespace shardlab {

using namespace load_detail;

namespace {

// One replica's share of the protocol: requests in flight (closed) or arrival rate (open),
// and how many it sends.
struct Share {
    int concurrency = 0;
    double rate = 0;
    int measured = 0;
};


// The engine loop of one replica (the scheduling described in serving_load.h).
class Replica {
public:
    Replica(const WorkloadSpec& w, const LoadSpec& load, const Share& share, int batch, std::uint64_t seed,
            PerStep perStep)
        : m_w(w), m_load(load), m_share(share), m_batch(std::max(1, batch)), m_perStep(perStep), m_draws(seed),
          m_closed(load.protocol == LoadProtocol::Concurrency), m_total(share.measured)
    {
        m_reqs.reserve(m_total);
        if (m_closed) {
            for (int i = 0; i < std::min(share.concurrency, m_total); ++i)
                issue(0);
            return;
        }
        double t = 0;
        for (int i = 0; i < m_total; ++i)
            issue(t = nextArrival(m_draws, t, share.rate));
    }

    bool done() const { return m_finished >= m_total; }
    // Arrivals up to `t` join the queue and the queue's head the batch; whether the replica
    // has a step to run.
    bool admitAt(double t)
    {
        m_t = t;
        admit();
        return !m_running.empty();
    }
    // When the next request arrives (infinity when none is left to arrive).
    double nextArrivalS() const
    {
        return m_nextArrival < m_reqs.size() ? m_reqs[m_nextArrival].arrivalS : std::numeric_limits<double>::infinity();
    }
    // The step's composition (compose): its decoding sequences and its prompt tokens.
    std::pair<int, int> composeStep()
    {
        const int decoding = compose();
        int chunk = 0;
        for (const auto& c : m_chunks)
            chunk += c.second;
        return {decoding, chunk};
    }
    // The step composed last ends at `t`: its tokens are out, recorded in `out`.
    void endStep(double t, ReplicaResult& out)
    {
        m_t = t;
        ++out.steps;
        out.sumRunning += static_cast<double>(m_running.size());
        out.sumQueued += static_cast<double>(m_queue.size());
        advance();
    }
    // How many steps of `dt` from `t` on repeat the step just ended with nothing changing:
    // every running sequence decoding one token a step (no prompt left, no drafts), none
    // finishing, no request arriving or waiting for a free slot. Far more than any run
    // when the replica has nothing running and nothing left to arrive.
    long long quietSteps(double t, double dt) const
    {
        long long n = std::numeric_limits<long long>::max() / 4;
        const double arrival = nextArrivalS();
        if (std::isfinite(arrival))
            n = arrival <= t ? 0 : std::min<double>(n, std::ceil((arrival - t) / dt) - 1);
        if (!m_queue.empty() && static_cast<int>(m_running.size()) < m_batch)
            return 0; // the queue's head joins at the next step
        if (!m_running.empty() && m_perStep.emitted != 1.0)
            return 0;
        for (int i : m_running) {
            const Request& r = m_reqs[i];
            if (r.prefilled != r.prompt)
                return 0;
            n = std::min<long long>(n, static_cast<long long>(std::ceil(r.output - r.generated)) - 1);
        }
        return std::max(0LL, n);
    }
    // `n` such steps of `dt` each, ending at `t`, recorded in `out`.
    void skipQuietSteps(long long n, double t, ReplicaResult& out)
    {
        m_t = t;
        out.steps += n;
        out.sumRunning += double(n) * static_cast<double>(m_running.size());
        out.sumQueued += double(n) * static_cast<double>(m_queue.size());
        for (int i : m_running)
            m_reqs[i].generated += double(n);
    }
    int running() const { return static_cast<int>(m_running.size()); }
    void collect(ReplicaResult& out) const
    {
        out.durationS = m_t;
        collectMeasured(m_reqs, out);
    }

private:
    void issue(double at)
    {
        m_reqs.push_back(drawRequest(m_draws, m_w, m_load, at));
    }
    // Arrivals up to now join the queue; the queue's head joins the batch while it has room.
    void admit()
    {
        while (m_nextArrival < m_reqs.size() && m_reqs[m_nextArrival].arrivalS <= m_t)
            m_queue.push_back(static_cast<int>(m_nextArrival++));
        while (!m_queue.empty() && static_cast<int>(m_running.size()) < m_batch) {
            m_running.push_back(m_queue.front());
            m_queue.pop_front();
        }
    }
    // One decode token (with speculative decoding: 1 + draft tokens) per sequence past its
    // prompt, then prompt chunks in admission order within the token budget, each at most
    // the room its owner has (a token-split rank: its share of the budget less its share
    // of the decode tokens, at least one token, as the steady state's promptRoom). Returns
    // the decoding sequences; m_chunks gets the chunks.
    int compose()
    {
        int decoding = 0;
        for (int i : m_running)
            decoding += m_reqs[i].prefilled == m_reqs[i].prompt ? 1 : 0;
        const int budget = std::max(1, m_w.maxNumTokens);
        int room = std::max(0, budget - decoding * m_perStep.queries);
        const double share = m_perStep.ownerShare;
        const int ownerRoom = share < 1 && m_perStep.costs
            ? static_cast<int>(std::floor(m_perStep.costs->promptRoom(double(decoding) * m_perStep.queries * share, 1, share)))
            : room;
        m_chunks.clear();
        for (int i : m_running) {
            const Request& r = m_reqs[i];
            if (r.prefilled < r.prompt && room > 0) {
                const int take = std::min({r.prompt - r.prefilled, room, ownerRoom});
                m_chunks.emplace_back(i, take);
                room -= take;
            }
        }
        return decoding;
    }
    void finish(Request& r)
    {
        r.finishS = m_t;
        ++m_finished;
        if (m_closed && static_cast<int>(m_reqs.size()) < m_total)
            issue(m_t); // the client sends its next request as soon as one returns
    }
    // The step's tokens are out: decoders advance, finished prompts give their first token.
    void advance()
    {
        for (int i : m_running) {
            Request& r = m_reqs[i];
            if (r.prefilled == r.prompt && (r.generated += m_perStep.emitted) >= r.output)
                finish(r);
        }
        for (const auto& [i, take] : m_chunks) {
            Request& r = m_reqs[i];
            r.prefilled += take;
            if (r.prefilled == r.prompt) { // the step that ends the prompt yields the first token
                r.firstTokenS = m_t;
                if (++r.generated >= r.output)
                    finish(r);
            }
        }
        m_still.clear();
        for (int i : m_running)
            if (m_reqs[i].finishS < 0)
                m_still.push_back(i);
        m_running.swap(m_still);
    }

    const WorkloadSpec& m_w;
    const LoadSpec& m_load;
    Share m_share;
    int m_batch;
    PerStep m_perStep;
    Draws m_draws;
    bool m_closed;
    int m_total;
    std::vector<Request> m_reqs; // indices stay valid: reserved for every request
    std::deque<int> m_queue;
    std::vector<int> m_running, m_still;
    std::vector<std::pair<int, int>> m_chunks; // (request, prompt tokens this step)
    size_t m_nextArrival = 0;
    int m_finished = 0;
    double m_t = 0;
};

// Runs replicas that step together until each has finished its requests: one replica
// alone, or the replicas of a lock-step group (CostModel::lockStepReplicas: an MoE engine
// instance's, whose MoE layers exchange tokens every layer, so no replica's step ends
// before the busiest one's). A group's step is priced as its busiest replica's: the most
// prompt tokens any of them carries, beside the most decoding sequences any has, the
// group's MoE layers routing every replica's prompt tokens. A replica with nothing
// running sits the step out, and a group's replicas without requests are not among
// `members` (`group`: the plan's replicas run in lock step, however many are here: one
// replica's prompt is then its group's only one, not every replica's). One ReplicaResult per
// replica, in order.
std::vector<ReplicaResult> runTogether(std::vector<Replica>& members, StepPricer& price, bool group)
{
    std::vector<ReplicaResult> out(members.size());
    std::vector<char> stepping(members.size(), 0);
    double t = 0;
    long long steps = 0;
    for (;;) {
        bool left = false, any = false;
        double next = std::numeric_limits<double>::infinity();
        for (size_t i = 0; i < members.size(); ++i) {
            stepping[i] = 0;
            if (members[i].done())
                continue;
            left = true;
            stepping[i] = members[i].admitAt(t) ? 1 : 0;
            any = any || stepping[i];
            next = std::min(next, members[i].nextArrivalS());
        }
        if (!left)
            break;
        if (!any) { // idle until the next arrival
            if (!std::isfinite(next)) {
                out.front().error = "the request-level run stalled (no request to serve)";
                return out;
            }
            t = std::max(t, next);
            continue;
        }
        int seqs = 0, chunk = 0;
        long long groupChunk = 0;
        for (size_t i = 0; i < members.size(); ++i)
            if (stepping[i]) {
                const auto [d, c] = members[i].composeStep();
                seqs = std::max(seqs, d);
                chunk = std::max(chunk, c);
                groupChunk += c;
            }
        t += group ? price.groupSeconds(seqs, chunk, groupChunk) : price.seconds(seqs, chunk);
        if (++steps > kMaxSteps || !std::isfinite(t)) {
            out.front().error = "the request-level run exceeded " + std::to_string(kMaxSteps) + " engine steps";
            return out;
        }
        for (size_t i = 0; i < members.size(); ++i)
            if (stepping[i])
                members[i].endStep(t, out[i]);
        // A group's decode-only steps repeat until something happens (a finish, an
        // arrival): run them in one go, each priced as the step just run. (One replica
        // alone keeps stepping one at a time.)
        if (group && chunk == 0) {
            int next = 0; // the next step's decoding sequences, the most any replica runs
            for (const Replica& m : members)
                next = std::max(next, m.running());
            const double dt = next > 0 ? price.seconds(next, 0) : 0.0;
            long long n = next > 0 && dt > 0 ? kMaxSteps - steps : 0;
            for (size_t i = 0; i < members.size() && n > 0; ++i)
                if (!members[i].done())
                    n = std::min(n, members[i].quietSteps(t, dt));
            if (n > 0) {
                t += double(n) * dt;
                steps += n;
                for (size_t i = 0; i < members.size(); ++i)
                    if (members[i].running() > 0)
                        members[i].skipQuietSteps(n, t, out[i]);
            }
        }
    }
    for (size_t i = 0; i < members.size(); ++i)
        members[i].collect(out[i]);
    return out;
}

} // namespace

LoadRun simulateLoad(const Simulator& sim, const Plan& plan, const SimResult& steady)
{
    return simulateLoad(sim, plan, steady, sim.scenario().workload.load);
}

namespace {

// Replicas that run the same share of the protocol, and how many of them there are: a
// closed loop's C requests split C / DP and C / DP + 1 per replica, and its measured
// requests in proportion to each replica's concurrency, as whole requests that add
// up to the counts asked (replica i takes the counts up to its concurrencies' running sum
// less those before it); an open loop's rate 1 / DP each, and its measured requests N / DP
// and N / DP + 1.
struct ReplicaGroup {
    Share share;
    int replicas = 0;
};
std::vector<ReplicaGroup> replicaGroups(const LoadSpec& load, int dp)
{
    const int measuredTotal = load.measuredRequests();
    std::vector<ReplicaGroup> groups;
    if (load.protocol == LoadProtocol::Concurrency) {
        const int q = load.concurrency / dp, extra = load.concurrency % dp;
        auto upTo = [&](long long total, long long clients) { return int(total * clients / load.concurrency); };
        long long clients = 0;
        for (int i = 0; i < dp; ++i) {
            const int c = i < extra ? q + 1 : q;
            if (c == 0)
                continue; // past the concurrency: no share
            Share share;
            share.concurrency = c;
            share.measured = std::max(1, upTo(measuredTotal, clients + c) - upTo(measuredTotal, clients));
            clients += c;
            auto same = std::find_if(groups.begin(), groups.end(), [&](const ReplicaGroup& g) {
                return g.share.concurrency == c && g.share.measured == share.measured;
            });
            if (same != groups.end())
                ++same->replicas;
            else
                groups.push_back({share, 1});
        }
        return groups;
    }
    // Every replica is offered rate / DP. The measured requests split as evenly as whole
    // requests can, so the run measures the count asked for (one each when fewer than DP).
    const int q = measuredTotal / dp, extra = measuredTotal % dp;
    for (int part = 0; part < 2; ++part) {
        ReplicaGroup g;
        g.replicas = q == 0 ? (part == 0 ? dp : 0) : (part == 0 ? extra : dp - extra);
        if (g.replicas == 0)
            continue;
        g.share.rate = load.requestRate / dp;
        g.share.measured = q == 0 ? 1 : (part == 0 ? q + 1 : q);
        groups.push_back(g);
    }
    return groups;
}

// Lock-step instances' shares. The replicas' shares in order (a closed loop's replicas past
// its concurrency have none) are dealt to the instances in turn, so member k of instance i
// takes replica k x instances + i's. Instances whose members have the same concurrency or
// rate run alike: each such set is listed once, with its first instance's measured counts,
// and the number of instances it stands for (so the measured count can differ from the one
// asked for by a few requests). Instances dealt nothing are left out.
struct DealtInstances {
    std::vector<std::pair<int, Share>> members; // (member k, its share)
    int instances = 0;
};
std::vector<DealtInstances> dealToInstances(const std::vector<ReplicaGroup>& groups, int instances, int lockStep)
{
    std::vector<Share> shares;
    for (const ReplicaGroup& g : groups)
        shares.insert(shares.end(), g.replicas, g.share);
    std::vector<DealtInstances> dealt;
    for (int i = 0; i < instances; ++i) {
        std::vector<std::pair<int, Share>> members;
        for (int k = 0; k < lockStep; ++k)
            if (const size_t replica = size_t(k) * instances + i; replica < shares.size())
                members.emplace_back(k, shares[replica]); // a replica without requests steps with nobody
        if (members.empty())
            continue;
        auto same = std::find_if(dealt.begin(), dealt.end(), [&](const DealtInstances& d) {
            return std::equal(d.members.begin(), d.members.end(), members.begin(), members.end(),
                              [](const auto& x, const auto& y) {
                                  return x.first == y.first && x.second.concurrency == y.second.concurrency
                                      && x.second.rate == y.second.rate;
                              });
        });
        if (same != dealt.end())
            ++same->instances;
        else
            dealt.push_back({members, 1});
    }
    return dealt;
}

LoadRun runAtRate(const Simulator& sim, const Plan& plan, const SimResult& steady, const LoadSpec& load)
{
    LoadRun run;
    LoadFigures& f = run.figures;
    const Scenario& sc = sim.scenario();
    const WorkloadSpec& w = sc.workload;
    run.error = startFigures(f, load, w, steady.outputTokensPerS, {steady.violations});
    if (run.error.empty() && w.serving != ServingMode::Aggregated)
        run.error = std::string("a load protocol is modelled for aggregated and disaggregated serving (this is ")
            + servingModeName(w.serving) + ")";
    if (!run.ok())
        return run;
    const std::vector<ReplicaGroup> groups = replicaGroups(load, std::max(1, plan.dataParallel));

    StepPricer price(sim, plan);
    const PerStep perStep{static_cast<int>(sim.costs().queriesPerSequence()), sim.costs().tokensPerStep(),
                          promptOwnerShare(plan.option(OpId::Attention), plan.tensorParallel), &sim.costs()};
    Totals totals;
    const int lockStep = std::max(1, sim.costs().lockStepReplicas(plan));
    if (lockStep > 1 && plan.dataParallel % lockStep == 0) {
        // Each engine instance's replicas run together (dealToInstances).
        const int instances = plan.dataParallel / lockStep;
        const std::vector<DealtInstances> dealt = dealToInstances(groups, instances, lockStep);
        if (dealt.empty()) {
            run.error = "the load protocol sends no requests";
            return run;
        }
        for (const auto& [list, count] : dealt) {
            std::vector<Replica> members;
            for (const auto& [k, share] : list)
                members.emplace_back(w, load, share, plan.batch, load.seed + 7919 * k, perStep);
            const std::vector<ReplicaResult> rs = runTogether(members, price, true);
            if (!rs.front().error.empty()) {
                run.error = rs.front().error;
                return run;
            }
            for (const ReplicaResult& r : rs)
                totals.add(r, count, f);
        }
    } else {
        for (size_t gi = 0; gi < groups.size(); ++gi) {
            const ReplicaGroup& g = groups[gi];
            std::vector<Replica> alone;
            alone.emplace_back(w, load, g.share, plan.batch, load.seed + 7919 * gi, perStep);
            const ReplicaResult r = runTogether(alone, price, false).front();
            if (!r.error.empty()) {
                run.error = r.error;
                return run;
            }
            totals.add(r, g.replicas, f);
        }
    }
    totals.finish(f);
    endFigures(f, load, sc.cluster.totalGpus(), price.priced());
    return run;
}

} // namespace

LoadRun simulateLoad(const Simulator& sim, const Plan& plan, const SimResult& steady, const LoadSpec& load)
{
    return runWithSensitivity(load, [&](const LoadSpec& l) { return runAtRate(sim, plan, steady, l); });
}

LoadVerdict judgeLoad(const WorkloadSpec& w, const LoadFigures& f)
{
    LoadVerdict v;
    auto ms = [](double x) {
        char buf[48];
        std::snprintf(buf, sizeof buf, "%.1f ms", x);
        return std::string(buf);
    };
    auto limit = [](double x) { // with the decimals the limit has (a 12.55 ms limit is not "12.6")
        char buf[48];
        std::snprintf(buf, sizeof buf, "%g ms", x);
        return std::string(buf);
    };
    v.saturated = f.saturated;
    v.ttftOver = !(f.ttftP90Ms <= w.ttftSloMs);
    v.tpotOver = !(f.tpotP90Ms <= w.tpotSloMs);
    if (v.saturated)
        v.reasons.push_back("saturated: the offered load exceeds the capacity, TTFT grows without bound");
    if (v.ttftOver)
        v.reasons.push_back("p90 TTFT under load " + ms(f.ttftP90Ms) + " exceeds the limit of " + limit(w.ttftSloMs));
    if (v.tpotOver)
        v.reasons.push_back("p90 TPOT under load " + ms(f.tpotP90Ms) + " exceeds the limit of " + limit(w.tpotSloMs));
    v.withinLimits = v.reasons.empty();
    return v;
}

void rankUnderLoad(const Simulator& sim, const Plan& plan, SimResult& r, const LoadSpec& load)
{
    const std::uint32_t sloBits = (1u << static_cast<int>(Violation::TtftSlo)) | (1u << static_cast<int>(Violation::TpotSlo));
    const std::uint32_t steadyOther = r.violations & ~sloBits;
    if (r.structureChecks != 0 || steadyOther != 0 || r.unbounded)
        return; // not runnable: the steady evaluation's reasons stand
    const LoadRun run = load.protocol == LoadProtocol::Concurrency ? simulateLoad(sim, plan, r, load) : LoadRun{{}, "not a closed loop"};
    if (!run.ok()) {
        r.valid = false;
        r.tokensPerSPerGpu = r.outputTokensPerS = 0;
        return;
    }
    const LoadFigures& f = run.figures;
    const LoadVerdict v = judgeLoad(sim.scenario().workload, f);
    r.tokensPerSPerGpu = f.tokensPerSPerGpu;
    r.outputTokensPerS = f.outputTokensPerS;
    r.ttftMs = f.ttftP90Ms;
    r.tpotMs = f.tpotP90Ms;
    r.e2eMs = f.e2eMeanMs;
    r.violations = steadyOther;
    if (v.ttftOver)
        r.violations |= 1u << static_cast<int>(Violation::TtftSlo);
    if (v.tpotOver)
        r.violations |= 1u << static_cast<int>(Violation::TpotSlo);
    r.valid = r.violations == 0 && v.withinLimits;
}

} // namespace shardlab

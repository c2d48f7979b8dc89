#include "sim/serving_load_disaggregated.h"

#include "model/engine_caps.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <queue>
#include <unordered_map>
#include <vector>

#include "sim/serving_load_parts.h"

namespace shardlab {

using namespace load_detail;

namespace {

// The cost model's price of one prefill pass of `prompts` prompts of the workload's length
// on a prefill replica (the plan with that many prompts per pass: its cycle), each count
// priced once.
class PassPricer {
public:
    PassPricer(const Simulator& sim, const Plan& plan) : m_sim(sim), m_plan(plan) {}
    double seconds(int prompts)
    {
        auto it = m_cache.find(prompts);
        if (it != m_cache.end())
            return it->second;
        Plan q = m_plan;
        q.batch = std::max(prompts, std::max(1, q.microBatches));
        m_sim.evaluate(q, m_scratch, false);
        const double s = std::isfinite(m_scratch.cycleMs) && m_scratch.cycleMs > 0
            ? m_scratch.cycleMs * 1e-3
            : std::numeric_limits<double>::infinity();
        m_cache.emplace(prompts, s);
        return s;
    }

private:
    const Simulator& m_sim;
    Plan m_plan;
    SimResult m_scratch;
    std::unordered_map<int, double> m_cache;
};

// A request's times beyond the shared record: when its pass started and ended, when its KV
// cache reached the decode pool, and when a decode replica admitted it.
struct PoolTimes {
    double passStartS = -1, passEndS = -1, arrivedS = -1, admittedS = -1;
};

enum class Kind : std::uint8_t { Arrival, PassEnd, TransferEnd, StepEnd };
struct Event {
    double t = 0;
    long long order = 0; // ties in time run in the order they were scheduled
    Kind kind = Kind::Arrival;
    int index = 0;       // the request (Arrival, TransferEnd), the prefill replica (PassEnd) or the
                         // decode replicas' lock-step group (StepEnd)
};
struct Later {
    bool operator()(const Event& a, const Event& b) const { return a.t > b.t || (a.t == b.t && a.order > b.order); }
};

struct PrefillReplica {
    std::deque<int> queue;
    std::vector<int> pass;
    bool busy = false;
    double linksFreeS = 0; // when the replica's links have sent every cache handed to them
};
struct DecodeReplica {
    std::deque<int> queue;
    std::vector<int> running, still;
    long long steps = 0;
};

// What the run needs of the plan and its pools.
struct PoolSetup {
    int prefillReplicas = 1, decodeReplicas = 1;
    int prefillBatch = 1, decodeBatch = 1; // prompts per pass; sequences per decode step
    // Decode replicas that step together (CostModel::lockStepReplicas: an MoE engine
    // instance's), consecutive replicas forming one group; 1: each steps alone.
    int decodeLockStep = 1;
    double transferS = 0;                   // one prompt's KV cache over one replica's links
    PerStep perStep;
    // The decode engine streams the prefill's first token when it takes a request in
    // (streamsPrefillFirstToken); else its first step yields it.
    bool firstTokenAtAdmission = false;
};

// The event loop over every replica of both pools (the scheduling in the header).
class DeploymentRun {
public:
    DeploymentRun(const WorkloadSpec& w, const LoadSpec& load, const PoolSetup& setup, PassPricer& pass,
                  StepPricer& step)
        : m_w(w), m_load(load), m_setup(setup), m_pass(pass), m_step(step), m_draws(load.seed),
          m_closed(load.protocol == LoadProtocol::Concurrency), m_total(load.measuredRequests()),
          m_prefill(setup.prefillReplicas), m_decode(setup.decodeReplicas),
          m_groupBusy(setup.decodeReplicas / std::max(1, setup.decodeLockStep), 0)
    {
        m_reqs.reserve(m_total);
        m_times.reserve(m_total);
        if (m_closed) {
            for (int i = 0; i < std::min(load.concurrency, m_total); ++i)
                issue(0);
            return;
        }
        double t = 0;
        for (int i = 0; i < m_total; ++i)
            issue(t = nextArrival(m_draws, t, load.requestRate));
    }

    ReplicaResult run()
    {
        ReplicaResult out;
        long long events = 0;
        while (m_finished < m_total) {
            if (m_events.empty()) {
                out.error = "the request-level run stalled (no request to serve)";
                return out;
            }
            const Event e = m_events.top();
            m_events.pop();
            if (!std::isfinite(e.t) || ++events > kMaxSteps) {
                out.error = "the request-level run exceeded " + std::to_string(kMaxSteps) + " engine events";
                return out;
            }
            m_t = e.t;
            switch (e.kind) {
            case Kind::Arrival: arrive(e.index); break;
            case Kind::PassEnd: endPass(e.index); break;
            case Kind::TransferEnd: reachDecode(e.index); break;
            case Kind::StepEnd: endStep(e.index); break;
            }
        }
        out.durationS = m_t;
        out.sumRunning = m_sumRunning;
        out.sumQueued = m_sumQueued;
        for (const DecodeReplica& d : m_decode)
            out.steps += d.steps;
        collectMeasured(m_reqs, out);
        return out;
    }

    // TTFT's parts, means over the requests.
    void parts(LoadFigures& f) const
    {
        double wait = 0, transfer = 0, slot = 0, n = 0;
        for (size_t i = 0; i < m_reqs.size(); ++i) {
            const PoolTimes& t = m_times[i];
            wait += t.passStartS - m_reqs[i].arrivalS;
            transfer += t.arrivedS - t.passEndS;
            slot += t.admittedS - t.arrivedS;
            n += 1;
        }
        if (n > 0) {
            f.prefillWaitMeanMs = wait / n * 1e3;
            f.kvTransferMeanMs = transfer / n * 1e3;
            f.decodeWaitMeanMs = slot / n * 1e3;
        }
    }
    long long mostStepsOfAReplica() const
    {
        long long most = 0;
        for (const DecodeReplica& d : m_decode)
            most = std::max(most, d.steps);
        return most;
    }

private:
    void schedule(double t, Kind kind, int index) { m_events.push(Event{t, m_order++, kind, index}); }
    void issue(double at)
    {
        m_reqs.push_back(drawRequest(m_draws, m_w, m_load, at));
        m_times.emplace_back();
        schedule(at, Kind::Arrival, static_cast<int>(m_reqs.size()) - 1);
    }
    void arrive(int r)
    {
        const int i = static_cast<int>(m_nextPrefill++ % m_prefill.size());
        m_prefill[i].queue.push_back(r);
        if (!m_prefill[i].busy)
            startPass(i);
    }
    // The pass takes the queue's head, at most the plan's prompts per pass, priced by the
    // prompt tokens it carries (in prompts of the workload's length).
    void startPass(int i)
    {
        PrefillReplica& p = m_prefill[i];
        p.pass.clear();
        double tokens = 0;
        while (!p.queue.empty() && static_cast<int>(p.pass.size()) < m_setup.prefillBatch) {
            const int r = p.queue.front();
            p.queue.pop_front();
            p.pass.push_back(r);
            m_times[r].passStartS = m_t;
            tokens += m_reqs[r].prompt;
        }
        p.busy = !p.pass.empty();
        if (!p.busy)
            return;
        const int prompts = std::max(1, static_cast<int>(std::lround(tokens / std::max(1, m_w.promptTokens))));
        schedule(m_t + m_pass.seconds(prompts), Kind::PassEnd, i);
    }
    void endPass(int i)
    {
        PrefillReplica& p = m_prefill[i];
        for (int r : p.pass) {
            m_times[r].passEndS = m_t;
            p.linksFreeS = std::max(p.linksFreeS, m_t) + m_setup.transferS;
            schedule(p.linksFreeS, Kind::TransferEnd, r);
        }
        startPass(i);
    }
    void reachDecode(int r)
    {
        m_times[r].arrivedS = m_t;
        const int j = static_cast<int>(m_nextDecode++ % m_decode.size());
        m_decode[j].queue.push_back(r);
        const int g = j / m_setup.decodeLockStep;
        if (!m_groupBusy[g])
            startStep(g);
    }
    // A step of lock-step group `g` (one replica when replicas step alone): each member
    // admits what its queue holds, up to the batch; the step lasts as long as the step of
    // the most sequences any member runs, since the group's MoE layers wait for the busiest.
    // A member with nothing running sits the step out.
    void startStep(int g)
    {
        int most = 0;
        for (int j = g * m_setup.decodeLockStep; j < (g + 1) * m_setup.decodeLockStep; ++j) {
            DecodeReplica& d = m_decode[j];
            while (!d.queue.empty() && static_cast<int>(d.running.size()) < m_setup.decodeBatch) {
                const int r = d.queue.front();
                d.queue.pop_front();
                m_times[r].admittedS = m_t;
                if (!admitWithPrefillToken(r))
                    d.running.push_back(r);
            }
            if (d.running.empty())
                continue;
            most = std::max(most, static_cast<int>(d.running.size()));
            ++d.steps;
            m_sumRunning += static_cast<double>(d.running.size());
            m_sumQueued += static_cast<double>(d.queue.size());
        }
        m_groupBusy[g] = most > 0;
        if (most > 0)
            schedule(m_t + m_step.seconds(most, 0), Kind::StepEnd, g);
    }
    // An engine that streams the prefill's token (PoolSetup::firstTokenAtAdmission) sends it
    // as it takes the request in: the request has one token out and needs a step for each
    // later one. Whether that one token ends it.
    bool admitWithPrefillToken(int r)
    {
        if (!m_setup.firstTokenAtAdmission)
            return false;
        Request& q = m_reqs[r];
        q.firstTokenS = m_t;
        q.generated = 1;
        if (q.generated < q.output)
            return false;
        finish(q);
        return true;
    }
    void endStep(int g)
    {
        for (int j = g * m_setup.decodeLockStep; j < (g + 1) * m_setup.decodeLockStep; ++j) {
            DecodeReplica& d = m_decode[j];
            d.still.clear();
            for (int r : d.running) {
                Request& q = m_reqs[r];
                if (q.firstTokenS < 0)
                    q.firstTokenS = m_t;
                q.generated += m_setup.perStep.emitted;
                if (q.generated >= q.output)
                    finish(q);
                else
                    d.still.push_back(r);
            }
            d.running.swap(d.still);
        }
        startStep(g);
    }
    void finish(Request& q)
    {
        q.finishS = m_t;
        ++m_finished;
        if (m_closed && static_cast<int>(m_reqs.size()) < m_total)
            issue(m_t); // the client sends its next request as soon as one returns
    }

    const WorkloadSpec& m_w;
    const LoadSpec& m_load;
    PoolSetup m_setup;
    PassPricer& m_pass;
    StepPricer& m_step;
    Draws m_draws;
    bool m_closed;
    int m_total;
    std::vector<Request> m_reqs; // indices stay valid: reserved for every request
    std::vector<PoolTimes> m_times;
    std::vector<PrefillReplica> m_prefill;
    std::vector<DecodeReplica> m_decode;
    std::vector<char> m_groupBusy; // per lock-step group of decode replicas: a step under way
    std::priority_queue<Event, std::vector<Event>, Later> m_events;
    long long m_order = 0;
    size_t m_nextPrefill = 0, m_nextDecode = 0;
    int m_finished = 0;
    double m_t = 0, m_sumRunning = 0, m_sumQueued = 0;
};

LoadRun runPools(const DisaggregatedSimulator& sim, const DisaggregatedPlan& plan, const DisaggregatedResult& steady,
                 const LoadSpec& load)
{
    LoadRun run;
    LoadFigures& f = run.figures;
    f.pools = true;
    const Scenario& sc = sim.scenario();
    if (!steady.structure.empty()) {
        f.protocol = load.protocol;
        run.error = "the plan does not fit the scenario (the split between the pools)";
        return run;
    }
    run.error = startFigures(f, load, sc.workload, steady.outputTokensPerS,
                             {steady.prefill.violations, steady.decode.violations});
    if (!run.ok())
        return run;
    const Simulator& ps = sim.pool(PoolRole::Prefill, static_cast<int>(plan.prefill.gpus()));
    const Simulator& ds = sim.pool(PoolRole::Decode, static_cast<int>(plan.decode.gpus()));

    PoolSetup setup;
    setup.prefillReplicas = std::max(1, plan.prefill.dataParallel);
    setup.decodeReplicas = std::max(1, plan.decode.dataParallel);
    setup.prefillBatch = std::max(1, plan.prefill.batch);
    setup.decodeBatch = std::max(1, plan.decode.batch);
    if (const int lockStep = ds.costs().lockStepReplicas(plan.decode);
        lockStep > 1 && setup.decodeReplicas % lockStep == 0)
        setup.decodeLockStep = lockStep;
    setup.transferS = steady.prefill.kvTransferMs * 1e-3;
    setup.perStep = PerStep{static_cast<int>(ds.costs().queriesPerSequence()), ds.costs().tokensPerStep()};
    setup.firstTokenAtAdmission = streamsPrefillFirstToken(sc.workload.engine);
    PassPricer pass(ps, plan.prefill);
    StepPricer step(ds, plan.decode);
    DeploymentRun engine(sc.workload, load, setup, pass, step);
    const ReplicaResult r = engine.run();
    if (!r.error.empty()) {
        run.error = r.error;
        return run;
    }
    Totals totals;
    totals.add(r, 1, f);
    totals.finish(f);
    engine.parts(f);
    f.steps = engine.mostStepsOfAReplica();
    endFigures(f, load, sc.cluster.totalGpus(), step.priced());
    return run;
}

} // namespace

LoadRun simulateDisaggregatedLoad(const DisaggregatedSimulator& sim, const DisaggregatedPlan& plan,
                                  const DisaggregatedResult& steady, const LoadSpec& load)
{
    return runWithSensitivity(load, [&](const LoadSpec& l) { return runPools(sim, plan, steady, l); });
}

} // namespace shardlab

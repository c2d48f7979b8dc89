// libFuzzer target: scenario -> SearchSpace -> every registered non-RL algorithm for a few
// hundred simulator calls, then invariants on what the searches return.
//
// Input: scenario JSON (starts with '{', parsed like fuzz_scenario), or raw bytes that
// edit a shipped scenario field by field, so that the shapes the search space is most
// sensitive to -- expert counts with many divisors (55,440), odd GPU counts, layer and
// head counts -- come up far more often than random JSON would produce them.
//
// A finding: a crash, leak or UB (sanitizers), or a broken invariant:
//  - plans the space produces are structurally sound (the simulator's structure checks pass)
//    and encode back to their choices;
//  - a found best plan is valid when simulated again, with finite figures, and its
//    throughput is the best-so-far curve's last value; budgets are respected;
//  - the same seed gives the same result;
//  - exact's proofs hold against the budgeted searches over the same space (optimal: none
//    beats it; infeasible: none finds a valid plan). Exact runs when the input's last
//    byte is odd (its set-up is slow).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "io/presets.h"
#include "runner/run_search.h"

namespace {

using namespace shardlab;

// Reads the raw input; past its end every read yields 0.
class Bytes {
public:
    Bytes(const std::uint8_t* d, std::size_t n) : m_d(d), m_n(n) {}
    unsigned u8() { return m_i < m_n ? m_d[m_i++] : 0; }
    unsigned u16() { return u8() | u8() << 8; }
    template <typename T, std::size_t N>
    T pick(const T (&table)[N]) { return table[u8() % N]; }

private:
    const std::uint8_t* m_d;
    std::size_t m_n, m_i = 0;
};

// Counts with many divisors (the expert-parallel slot lists every divisor of the expert
// count up to the GPU count), primes, and the usual powers of two.
constexpr int kExperts[] = {0, 1, 2, 3, 7, 8, 16, 17, 60, 64, 97, 128, 160, 256, 360, 720, 1024,
                            5040, 20160, 55440, 65521};
constexpr int kGpusPerNode[] = {1, 2, 3, 4, 6, 7, 8, 12, 16, 72};
constexpr int kNodes[] = {1, 2, 3, 5, 8, 16, 60, 128, 210, 1024, 2048};

Scenario rawScenario(const std::uint8_t* data, std::size_t size)
{
    static const char* const kBases[] = {"moe-1.6t-1024gpu", "deepseek-v3-256gpu", "mixtral-8x22b-64gpu",
                                         "llama3-70b-8gpu"};
    Bytes b(data, size);
    Scenario s = scenarioPreset(kBases[b.u8() % 4]).value;
    const unsigned fields = b.u16(); // which fields the following bytes change
    ModelSpec& m = s.model;
    if (fields & 1) {
        m.moe.experts = b.u8() < 200 ? b.pick(kExperts) : static_cast<int>(b.u16());
        if (m.moe.experts > 0) {
            m.moe.expertsPerToken = 1 + static_cast<int>(b.u8()) % std::min(m.moe.experts, 16);
            if (m.moe.expertFfnHidden <= 0)
                m.moe.expertFfnHidden = std::max(16, m.ffnHidden / 8);
            if (m.moe.experts > 1024) // keep the weights near the base model's
                m.moe.expertFfnHidden = 16;
        }
    }
    if (fields & 2)
        s.cluster.gpusPerNode = b.u8() < 200 ? b.pick(kGpusPerNode) : 1 + static_cast<int>(b.u8());
    if (fields & 4)
        s.cluster.nodes = b.u8() < 200 ? b.pick(kNodes) : 1 + static_cast<int>(b.u16() % 4096);
    if (fields & 8)
        m.layers = 1 + static_cast<int>(b.u8());
    if (fields & 16)
        m.moe.denseLayers = static_cast<int>(b.u8()) % (m.layers + 1);
    if (fields & 32) {
        m.attentionHeads = 1 + static_cast<int>(b.u8());
        m.kvHeads = 1 + static_cast<int>(b.u8()) % m.attentionHeads;
    }
    if (fields & 64)
        m.hiddenSize = 64 * (1 + static_cast<int>(b.u8()));
    if (fields & 128) {
        s.workload.promptTokens = 1 + static_cast<int>(b.u16()) * (1 + static_cast<int>(b.u8() % 16));
        s.workload.outputTokens = 1 + static_cast<int>(b.u16());
    }
    if (fields & 256) {
        s.workload.ttftSloMs = 1 + b.u16() * 10.0;
        s.workload.tpotSloMs = 1 + b.u16() / 100.0;
    }
    if (fields & 512)
        s.cluster.gpu.hbmGb = 1 + b.u8();
    if (fields & 1024)
        m.weightPrecision = b.u8() & 1 ? Precision::FP8 : Precision::BF16;
    return s;
}

// Stops a search after a number of simulator calls, or after a short time (exact spends
// time between calls in its bounds; the fuzzer wants each input to stay fast).
class StopAfter : public SearchObserver {
public:
    StopAfter(int calls, std::chrono::milliseconds time)
        : m_calls(calls), m_deadline(std::chrono::steady_clock::now() + time)
    {
    }
    std::atomic<bool> stop{false};
    void progress(const SearchProgress&) override { check(); }
    void evaluated(int call, const Plan&, const SimResult&) override
    {
        if (call >= m_calls)
            stop = true;
        check();
    }

private:
    void check()
    {
        if (std::chrono::steady_clock::now() > m_deadline)
            stop = true;
    }
    int m_calls;
    std::chrono::steady_clock::time_point m_deadline;
};

constexpr int kBudget = 300;

void checkOutcome(const Scenario& s, const SearchOutcome& o, bool budgeted)
{
    using fuzzcheck::require;
    require(o.calls >= 0, "negative call count");
    if (budgeted)
        require(o.calls <= kBudget, "budget exceeded");
    require(std::isfinite(o.log10SpaceSize), "non-finite space size");
    if (!o.found) {
        require(o.bestCurve.empty(), "a best-so-far curve without a best plan");
        return;
    }
    fuzzcheck::checkResult(o.bestResult);
    require(o.bestResult.valid, "best plan not valid");
    require(o.bestResult.tokensPerSPerGpu > 0, "best plan without throughput");
    require(validatePlan(o.best, s).empty(), "best plan fails the structural checks");
    const SimResult again = Simulator(s).evaluate(o.best);
    require(again.valid, "best plan invalid when simulated again");
    require(std::fabs(again.tokensPerSPerGpu - o.bestResult.tokensPerSPerGpu)
                <= 1e-9 * o.bestResult.tokensPerSPerGpu,
            "best plan's throughput differs when simulated again");
    require(!o.bestCurve.empty(), "a best plan without a best-so-far curve");
    // The curve records the search's own calls; a best plan whose batch was refined
    // afterwards (refinedFromBatch()) can only be better than the curve's end.
    if (o.refinedFromBatch() == 0)
        require(std::fabs(o.bestCurve.back().second - o.bestResult.tokensPerSPerGpu)
                    <= 1e-9 * o.bestResult.tokensPerSPerGpu,
                "best-so-far curve does not end at the best plan");
    else
        require(o.bestCurve.back().second <= o.bestResult.tokensPerSPerGpu * (1 + 1e-9),
                "the refined best plan is worse than the curve's end");
    for (size_t i = 1; i < o.bestCurve.size(); ++i)
        require(o.bestCurve[i].second > o.bestCurve[i - 1].second && o.bestCurve[i].first >= o.bestCurve[i - 1].first,
                "best-so-far curve not increasing");
}

// Plans drawn from the space pass the structure checks and encode back to their choices.
void checkSpace(const Scenario& s, const SearchSpace& space)
{
    using fuzzcheck::require;
    require(space.slotCount() > space.firstOpSlot(), "space without operator slots");
    for (const Slot& slot : space.slots())
        require(static_cast<int>(slot.values.size()) <= space.widestSlot(), "a slot wider than widestSlot()");
    const Simulator sim(s);
    std::mt19937_64 rng(1);
    std::vector<int> choice(space.slotCount()), back(space.slotCount());
    for (int i = 0; i < 8; ++i) {
        const Plan p = space.randomPlan(rng, choice.data());
        require(space.isValid(choice.data()), "randomPlan's choice breaks the masks");
        require(space.decode(choice.data()) == p, "randomPlan's plan is not its choice decoded");
        require(space.encode(p, back.data()) && back == choice, "a plan of the space does not encode back");
        require(sim.evaluate(p).structureChecks == 0, "a plan of the space fails the structure checks");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace shardlab;
    using fuzzcheck::require;
    Scenario s;
    if (size > 0 && data[0] == '{') {
        auto parsed = parseScenario(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
        if (!parsed.ok())
            return 0;
        s = parsed.value;
    } else {
        s = rawScenario(data, size);
    }
    if (!validateScenario(s).empty())
        return 0;
    const SearchSpace space(s);
    checkSpace(s, space);

    SearchOutcome best[3]; // random, anneal, genetic: searches of the same space
    int k = 0;
    for (const char* algo : {"random", "anneal", "genetic"}) {
        SearchOptions o;
        o.algorithm = algo;
        o.budget = kBudget;
        o.seed = 7;
        best[k] = runSearch(s, o);
        require(!best[k].stopped, "stopped without a stop request");
        checkOutcome(s, best[k], true);
        ++k;
    }
    {
        // Same seed, same result (a smaller budget: determinism shows early).
        SearchOptions o;
        o.algorithm = "anneal";
        o.budget = 100;
        o.seed = 3;
        const SearchOutcome a = runSearch(s, o), b = runSearch(s, o);
        require(a.calls == b.calls && a.bestCurve == b.bestCurve && a.found == b.found && (!a.found || a.best == b.best),
                "same seed, different result");
    }
    SearchOptions mo;
    mo.algorithm = "megatron";
    checkOutcome(s, runSearch(s, mo), false);

    // Exact's set-up (its cost model's groups) takes most of an input's time, before its
    // first simulator call and stop check: it runs on the half of the inputs whose last
    // byte is odd, so the fuzzer stays fast and can still steer into exact.
    if (size == 0 || !(data[size - 1] & 1))
        return 0;
    SearchOptions eo;
    eo.algorithm = "exact";
    StopAfter stopper(kBudget, std::chrono::milliseconds(30));
    const SearchOutcome ex = runSearch(s, eo, &stopper, &stopper.stop);
    checkOutcome(s, ex, false);
    require(!(ex.provedOptimal && ex.provedInfeasible), "exact proved optimal and infeasible");
    for (const SearchOutcome& o : best) {
        if (ex.provedInfeasible)
            require(!o.found, "exact proved the space infeasible, another search found a valid plan");
        if (ex.provedOptimal && o.found)
            require(o.bestResult.tokensPerSPerGpu <= ex.bestResult.tokensPerSPerGpu * (1 + 1e-9),
                    "a search beat exact's proved optimum");
    }
    return 0;
}

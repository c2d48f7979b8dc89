// Speculative decoding's workload knob (model/specs.h, SpeculativeSpec): the method names,
// the expected tokens per step, and the published acceptance rates by model family
// (docs/simulator.md §4, "Speculative decoding").
#include "model/specs.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace shardlab {

namespace {
// DeepSeek-V3 technical report (arXiv 2412.19437), §5.4.3 "Multi-Token Prediction
// Evaluation": "the acceptance rate of the second token prediction ranges between 85% and
// 90% across various generation topics". The middle of that range is the family's rate for
// the first drafted token (V3, R1: the same architecture and MTP module).
constexpr double kDeepSeekV3FirstDraftAcceptance = 0.875;
// Deeper drafts reuse that one module on its own guesses and are accepted less often: the
// GLM-5 report (Table 2) measures DeepSeek-V3.2 (the same MTP design) at an acceptance
// length of 2.55 tokens per step with 4 speculative steps. The deeper drafts' rate is the one
// that, after a first draft at the V3 report's rate, gives that length.
constexpr double kDeepSeekV32AcceptanceLength = 2.55;
constexpr int kDeepSeekV32AcceptanceSteps = 4;

// The rate b in [0, 1] at which k drafts give `length` tokens per step (bisection; tokens
// per step grow with b): the deeper drafts' rate after a first draft at `first`, or with
// first < 0 one rate for every depth.
double rateGiving(double length, int k, double first = -1)
{
    double lo = 0, hi = 1;
    for (int i = 0; i < 60; ++i) {
        const double mid = 0.5 * (lo + hi);
        (speculativeTokensPerStep(DraftAcceptance{first < 0 ? mid : first, mid}, k) < length ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

bool containsNoCase(const std::string& text, const std::string& word)
{
    auto it = std::search(text.begin(), text.end(), word.begin(), word.end(),
                          [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
    return it != text.end();
}
} // namespace

const char* speculativeMethodName(SpeculativeMethod m) { return m == SpeculativeMethod::Mtp ? "mtp" : "none"; }

bool speculativeMethodFromName(const std::string& name, SpeculativeMethod& out)
{
    for (SpeculativeMethod m : {SpeculativeMethod::None, SpeculativeMethod::Mtp})
        if (name == speculativeMethodName(m)) {
            out = m;
            return true;
        }
    return false;
}

double speculativeTokensPerStep(DraftAcceptance a, int k)
{
    if (k <= 0)
        return 1.0;
    const double first = std::clamp(a.first, 0.0, 1.0), later = std::clamp(a.later, 0.0, 1.0);
    double reach = first, tokens = 1.0; // reach: the chance every draft so far was accepted
    for (int depth = 1; depth <= k; ++depth) {
        tokens += reach;
        reach *= later;
    }
    return tokens;
}

double speculativeTokensPerStep(double a, int k) { return speculativeTokensPerStep(DraftAcceptance{a, a}, k); }

bool deepSeekV3Family(const ModelSpec& m)
{
    // DeepSeek-V3's architecture (MLA attention, MoE) under a DeepSeek name: V3 and R1.
    return m.attention == AttentionKind::MLA && m.isMoe() && containsNoCase(m.name, "deepseek");
}

DraftAcceptance publishedMtpAcceptance(const ModelSpec& m)
{
    if (!deepSeekV3Family(m))
        return {};
    static const double later = rateGiving(kDeepSeekV32AcceptanceLength, kDeepSeekV32AcceptanceSteps,
                                           kDeepSeekV3FirstDraftAcceptance);
    return {kDeepSeekV3FirstDraftAcceptance, later};
}

DraftAcceptance speculativeAcceptance(const SpeculativeSpec& s, const ModelSpec& m)
{
    if (s.acceptanceLength >= 0) {
        const double a = rateGiving(s.acceptanceLength, s.draftTokens);
        return {a, a};
    }
    return s.acceptanceRate >= 0 ? DraftAcceptance{s.acceptanceRate, s.acceptanceRate} : publishedMtpAcceptance(m);
}

FieldErrors validateSpeculative(const SpeculativeSpec& s, const ModelSpec* m, const std::string& p)
{
    FieldErrors e;
    if (s.method == SpeculativeMethod::None)
        return e;
    if (m) { // the default's availability only (the ranges are checked without a model)
        if (s.acceptanceRate < 0 && s.acceptanceLength < 0 && publishedMtpAcceptance(*m).first < 0)
            e.push_back({{}, p + ".acceptance_rate",
                         "no published MTP acceptance rate for model \"" + m->name
                             + "\" (published: the DeepSeek-V3 family); give one, per drafted token in [0, 1], or "
                               "acceptance_length, the tokens per step your engine reports"});
        return e;
    }
    if (s.draftTokens < 1 || s.draftTokens > kMaxDraftTokens)
        e.push_back({{}, p + ".draft_tokens",
                     "must be between 1 and " + std::to_string(kMaxDraftTokens) + " (got " + std::to_string(s.draftTokens)
                         + ")",
                     true});
    const double a = s.acceptanceRate;
    if (!std::isfinite(a) || (a >= 0 ? a > 1 : a != -1)) {
        char buf[120];
        std::snprintf(buf, sizeof buf, "must be between 0 and 1 (got %.10g)", a);
        e.push_back({{}, p + ".acceptance_rate", buf, true});
    }
    const double len = s.acceptanceLength;
    if (!std::isfinite(len) || (len >= 0 ? len < 1 || len > s.draftTokens + 1 : len != -1)) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "must be between 1 and %d, draft_tokens + 1 (got %.10g)", s.draftTokens + 1, len);
        e.push_back({{}, p + ".acceptance_length", buf, true});
    } else if (len >= 0 && a >= 0) {
        e.push_back({{}, p + ".acceptance_length",
                     "give acceptance_rate or acceptance_length, not both (one sets the other)"});
    }
    return e;
}

} // namespace shardlab

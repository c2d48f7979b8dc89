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
// 90% across various generation topics". The middle of that range, for the DeepSeek-V3
// family (V3, R1: the same architecture and MTP module). Measured for one drafted token;
// taken as the rate of every further draft of the same module (docs: it overstates deeper
// drafts).
constexpr double kDeepSeekV3MtpAcceptance = 0.875;

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

double speculativeTokensPerStep(double a, int k)
{
    if (k <= 0)
        return 1.0;
    a = std::clamp(a, 0.0, 1.0);
    if (a >= 1.0)
        return k + 1.0;
    return (1.0 - std::pow(a, k + 1)) / (1.0 - a);
}

bool deepSeekV3Family(const ModelSpec& m)
{
    // DeepSeek-V3's architecture (MLA attention, MoE) under a DeepSeek name: V3 and R1.
    return m.attention == AttentionKind::MLA && m.isMoe() && containsNoCase(m.name, "deepseek");
}

double publishedMtpAcceptance(const ModelSpec& m) { return deepSeekV3Family(m) ? kDeepSeekV3MtpAcceptance : -1; }

double speculativeAcceptance(const SpeculativeSpec& s, const ModelSpec& m)
{
    return s.acceptanceRate >= 0 ? s.acceptanceRate : publishedMtpAcceptance(m);
}

FieldErrors validateSpeculative(const SpeculativeSpec& s, const ModelSpec* m, const std::string& p)
{
    FieldErrors e;
    if (s.method == SpeculativeMethod::None)
        return e;
    if (m) { // the default's availability only (the ranges are checked without a model)
        if (s.acceptanceRate < 0 && publishedMtpAcceptance(*m) < 0)
            e.push_back({{}, p + ".acceptance_rate",
                         "no published MTP acceptance rate for model \"" + m->name
                             + "\" (published: the DeepSeek-V3 family); give one, per drafted token in [0, 1]"});
        return e;
    }
    if (s.draftTokens < 1 || s.draftTokens > kMaxDraftTokens)
        e.push_back({{}, p + ".draft_tokens",
                     "must be between 1 and " + std::to_string(kMaxDraftTokens) + " (got " + std::to_string(s.draftTokens)
                         + ")"});
    const double a = s.acceptanceRate;
    if (!std::isfinite(a) || (a >= 0 ? a > 1 : a != -1)) {
        char buf[120];
        std::snprintf(buf, sizeof buf, "must be between 0 and 1 (got %g)", a);
        e.push_back({{}, p + ".acceptance_rate", buf});
    }
    return e;
}

} // namespace shardlab

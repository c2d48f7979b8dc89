#include "io/speculative_json.h"

namespace shardlab::io {

SpeculativeSpec readSpeculative(JsonReader r)
{
    SpeculativeSpec s;
    if (!r.requireObject())
        return s;
    r.rejectUnknownKeys({"method", "draft_tokens", "acceptance_rate", "acceptance_length", "description"});
    const std::string method = r.string("method");
    if (r.has("method") && !r.json()["method"].is_string())
        return s; // its type error said so; the other fields depend on the method
    if (r.has("method") && !speculativeMethodFromName(method, s.method)) {
        r.fail(r.path("method"), "unknown speculative decoding method \"" + method
                                     + "\" (known: mtp, none; a separate draft model is not modelled)");
        return s;
    }
    if (s.method == SpeculativeMethod::None) {
        if (r.has("draft_tokens") || r.has("acceptance_rate") || r.has("acceptance_length"))
            r.fail(r.path("method"), "draft_tokens, acceptance_rate and acceptance_length need a method (\"mtp\")");
        return s;
    }
    s.draftTokens = r.integer("draft_tokens", 1, kMaxDraftTokens);
    s.acceptanceRate = r.numberOr("acceptance_rate", -1, 0, 1);
    s.acceptanceLength = r.numberOr("acceptance_length", -1, 1, kMaxDraftTokens + 1);
    return s;
}

nlohmann::ordered_json speculativeJson(const SpeculativeSpec& s)
{
    if (s.method == SpeculativeMethod::None)
        return nullptr;
    nlohmann::ordered_json j;
    j["method"] = speculativeMethodName(s.method);
    j["draft_tokens"] = s.draftTokens;
    if (s.acceptanceRate >= 0)
        j["acceptance_rate"] = s.acceptanceRate;
    if (s.acceptanceLength >= 0)
        j["acceptance_length"] = s.acceptanceLength;
    return j;
}

} // namespace shardlab::io

#include "io/load_json.h"

#include <cmath>
#include <limits>

namespace shardlab::io {

LoadSpec readLoad(JsonReader r)
{
    LoadSpec l;
    if (!r.requireObject())
        return l;
    r.rejectUnknownKeys({"protocol", "concurrency", "request_rate", "requests", "warmup_requests", "lengths", "seed",
                         "description"});
    const std::string protocol = r.string("protocol");
    if (r.has("protocol") && !r.json()["protocol"].is_string())
        return l; // its type error said so; the other fields depend on the protocol
    if (r.has("protocol") && !loadProtocolFromName(protocol, l.protocol)) {
        r.fail(r.path("protocol"), "unknown load protocol \"" + protocol + "\" (known: steady, concurrency, request_rate)");
        return l;
    }
    if (l.protocol == LoadProtocol::Concurrency)
        l.concurrency = r.integer("concurrency", 1, kMaxLoadConcurrency);
    else if (r.has("concurrency"))
        r.fail(r.path("concurrency"), "only with \"protocol\": \"concurrency\"");
    if (l.protocol == LoadProtocol::RequestRate) {
        if (r.has("request_rate") && r.json()["request_rate"].is_string()) {
            if (r.json()["request_rate"].get<std::string>() == "inf")
                l.requestRate = std::numeric_limits<double>::infinity();
            else
                r.fail(r.path("request_rate"), "expected requests per second, or \"inf\" (all at once)");
        } else {
            l.requestRate = r.number("request_rate", 1e-9, 1e9);
        }
    } else if (r.has("request_rate")) {
        r.fail(r.path("request_rate"), "only with \"protocol\": \"request_rate\"");
    }
    l.requests = r.integerOr("requests", 0, 1, kMaxLoadRequests);
    l.warmupRequests = r.integerOr("warmup_requests", -1, 0, kMaxLoadRequests);
    const std::string lengths = r.stringOr("lengths", "fixed");
    if (lengths == "uniform")
        l.uniformLengths = true;
    else if (lengths != "fixed")
        r.fail(r.path("lengths"), "expected \"fixed\" or \"uniform\" (each in [0.8 L, L])");
    l.seed = static_cast<std::uint64_t>(r.integerOr("seed", 1, 0, 2147483647));
    return l;
}

nlohmann::ordered_json loadJson(const LoadSpec& l)
{
    if (l.steady())
        return nullptr;
    nlohmann::ordered_json j;
    j["protocol"] = loadProtocolName(l.protocol);
    if (l.protocol == LoadProtocol::Concurrency)
        j["concurrency"] = l.concurrency;
    else if (std::isinf(l.requestRate))
        j["request_rate"] = "inf";
    else
        j["request_rate"] = l.requestRate;
    if (l.requests > 0)
        j["requests"] = l.requests;
    if (l.warmupRequests >= 0)
        j["warmup_requests"] = l.warmupRequests;
    j["lengths"] = l.uniformLengths ? "uniform" : "fixed";
    j["seed"] = l.seed;
    return j;
}

} // namespace shardlab::io

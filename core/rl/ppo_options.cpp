#include "rl/ppo_options.h"

#include <nlohmann/json.hpp>

#include "io/json_reader.h"

#include <cmath>
#include <sstream>

namespace shardlab::rl {

namespace {

struct Field {
    PpoOptionInfo info;
    double (*get)(const PpoOptions&);
    void (*set)(PpoOptions&, double);
};

#define SHARDLAB_PPO_FIELD(KEY, MEMBER, LO, HI, INT, HELP)                                                        \
    Field                                                                                                          \
    {                                                                                                              \
        {KEY, LO, HI, INT, HELP}, [](const PpoOptions& o) { return static_cast<double>(o.MEMBER); },               \
            [](PpoOptions& o, double v) { o.MEMBER = static_cast<decltype(o.MEMBER)>(v); }                        \
    }

const Field kFields[] = {
    SHARDLAB_PPO_FIELD("pretrained", pretrained, 0, 1, true, "1: start from the shipped pretrained policy; 0: from scratch"),
    SHARDLAB_PPO_FIELD("patience", patience, 0, 64, true, "updates without an elite change before tau may end the search"),
    SHARDLAB_PPO_FIELD("elite", elite, 0, 16, true, "T: plans in the elite history (0 = no history)"),
    SHARDLAB_PPO_FIELD("tau", tau, 0.01, 1, false, "early exit when the greedy plan's probability exceeds tau (1 = never)"),
    SHARDLAB_PPO_FIELD("warm_start", warmStart, 0, 2, true,
                       "seed the elite history with the Megatron plan: 0 never, 1 always, 2 only without the pretrained policy"),
    SHARDLAB_PPO_FIELD("diverse", diverseElite, 0, 1, true, "1: one elite per (TP, PP, EP) layout"),
    SHARDLAB_PPO_FIELD("invalid_penalty", invalidPenalty, 0, 100, false, "reward penalty scale of invalid plans"),
    SHARDLAB_PPO_FIELD("lr", learningRate, 1e-6, 1, false, "Adam learning rate"),
    SHARDLAB_PPO_FIELD("samples", samplesPerUpdate, 2, 4096, true, "new plans per PPO update"),
    SHARDLAB_PPO_FIELD("epochs", epochs, 1, 64, true, "passes over each rollout"),
    SHARDLAB_PPO_FIELD("minibatches", minibatches, 1, 64, true, "minibatches per pass"),
    SHARDLAB_PPO_FIELD("clip", clipRange, 0.01, 1, false, "PPO ratio clip range"),
    SHARDLAB_PPO_FIELD("entropy", entropyCoef, 0, 10, false, "entropy bonus coefficient"),
    SHARDLAB_PPO_FIELD("max_grad_norm", maxGradNorm, 1e-3, 1e3, false, "gradient-norm clip"),
    SHARDLAB_PPO_FIELD("top_fraction", topFraction, 0.01, 1, false, "learn from this best fraction of a rollout"),
    SHARDLAB_PPO_FIELD("repeats", learnFromRepeats, 0, 1, true, "1: learn from plans evaluated before"),
    SHARDLAB_PPO_FIELD("scratch", scratchFloor, 0, 1, false, "least share of samples drawn without an elite, at start"),
    SHARDLAB_PPO_FIELD("scratch_until", scratchUntil, 0.01, 1, false, "budget fraction where that share reaches 0"),
    SHARDLAB_PPO_FIELD("copy_init", copyInit, 0, 20, false, "initial copy-from-anchor strength"),
    SHARDLAB_PPO_FIELD("recover_after", recoverAfter, 0, 1, false,
                       "budget fraction without a better plan before sampling hotter and from scratch (0 = never)"),
    SHARDLAB_PPO_FIELD("near", nearShare, 0, 1, false, "share of samples drawn near the best plan (0 = none)"),
    SHARDLAB_PPO_FIELD("batch_repair", batchRepair, 0, 1, true,
                       "1: price near misses and the elite plans at their largest valid batch"),
    SHARDLAB_PPO_FIELD("finish", finishLayouts, 0, 64, true,
                       "layouts whose best plan is priced at its largest valid batch before the budget ends"),
    SHARDLAB_PPO_FIELD("replica_moves", replicaMoves, 0, 1, true,
                       "1: price the best plan with its replicas merged and split pairwise (with batch_repair)"),
    SHARDLAB_PPO_FIELD("redundant_moves", redundantMoves, 0, 1, true,
                       "1: price the best plan with one redundant expert more and fewer per EP rank (with batch_repair)"),
    SHARDLAB_PPO_FIELD("operator_moves", operatorMoves, 0, 1, true,
                       "1: re-choose the best plan's operators one at a time at its batch (with batch_repair)"),
    SHARDLAB_PPO_FIELD("hidden", hidden, 8, 512, true, "network width"),
    SHARDLAB_PPO_FIELD("heads", heads, 1, 16, true, "attention heads (must divide hidden)"),
    SHARDLAB_PPO_FIELD("threads", threads, 1, 64, true, "LibTorch threads during the search"),
};
#undef SHARDLAB_PPO_FIELD

constexpr const char* kPrefix = "ppo.";

const Field* findField(const std::string& key)
{
    for (const Field& f : kFields)
        if (key == f.info.key)
            return &f;
    return nullptr;
}

std::string formatValue(double v)
{
    std::ostringstream s;
    s << v;
    return s.str();
}

// Range and integrality of one value; empty when fine.
std::string checkValue(const Field& f, double v)
{
    if (!std::isfinite(v) || v < f.info.lo || v > f.info.hi)
        return "must be between " + formatValue(f.info.lo) + " and " + formatValue(f.info.hi) + " (got "
            + formatValue(v) + ")";
    if (f.info.integer && v != std::floor(v))
        return "must be a whole number (got " + formatValue(v) + ")";
    return {};
}

std::string knownKeys()
{
    std::string out;
    for (const Field& f : kFields)
        out += (out.empty() ? "" : ", ") + std::string(kPrefix) + f.info.key;
    return out;
}

} // namespace

const std::map<std::string, PpoOptionInfo>& ppoOptionTable()
{
    static const std::map<std::string, PpoOptionInfo> table = [] {
        std::map<std::string, PpoOptionInfo> t;
        for (const Field& f : kFields)
            t.emplace(std::string(kPrefix) + f.info.key, f.info);
        return t;
    }();
    return table;
}

FieldErrors parsePpoOptions(const std::map<std::string, double>& extra, PpoOptions& out)
{
    FieldErrors errors;
    for (const auto& [key, value] : extra) {
        if (key.rfind(kPrefix, 0) != 0)
            continue;
        const Field* f = findField(key.substr(4));
        if (!f) {
            errors.push_back({{}, key, "unknown ppo option (known: " + knownKeys() + ")"});
            continue;
        }
        const std::string why = checkValue(*f, value);
        if (!why.empty()) {
            errors.push_back({{}, key, why});
            continue;
        }
        f->set(out, value);
    }
    if (errors.empty() && out.hidden % out.heads != 0)
        errors.push_back({{}, "ppo.heads", "must divide ppo.hidden (" + std::to_string(out.hidden) + ")"});
    return errors;
}

FieldErrors ppoExtraFromJson(const std::string& text, const std::string& file, std::map<std::string, double>& extra)
{
    FieldErrors errors;
    // The shared parser: the parser's reason, duplicate keys and the depth limit, as for
    // every other ShardLab input.
    nlohmann::json doc;
    FieldError perr;
    if (!io::parseJsonText(text, doc, perr)) {
        perr.file = file;
        errors.push_back(perr);
        return errors;
    }
    std::string base;
    if (doc.is_object() && doc.size() == 1 && doc.contains("ppo")) {
        doc = doc["ppo"];
        base = "ppo.";
    }
    if (!doc.is_object()) {
        errors.push_back({file, base.empty() ? std::string() : "ppo", "must be an object of ppo options"});
        return errors;
    }
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        std::string key = it.key();
        const std::string where = base + key;
        if (key.rfind(kPrefix, 0) == 0)
            key = key.substr(4);
        const Field* f = findField(key);
        if (!f) {
            errors.push_back({file, where, "unknown ppo option (known: " + knownKeys() + ")"});
            continue;
        }
        double v = 0;
        if (it->is_boolean())
            v = it->get<bool>() ? 1 : 0;
        else if (it->is_number())
            v = it->get<double>();
        else {
            errors.push_back({file, where, "must be a number"});
            continue;
        }
        const std::string why = checkValue(*f, v);
        if (!why.empty()) {
            errors.push_back({file, where, why});
            continue;
        }
        extra[std::string(kPrefix) + key] = v;
    }
    return errors;
}

std::map<std::string, double> ppoOptionsToExtra(const PpoOptions& o)
{
    std::map<std::string, double> out;
    for (const Field& f : kFields)
        out[std::string(kPrefix) + f.info.key] = f.get(o);
    return out;
}

} // namespace shardlab::rl

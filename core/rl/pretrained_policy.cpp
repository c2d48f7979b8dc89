#include "rl/pretrained_policy.h"

#include <nlohmann/json.hpp>

#include <cstring>

#include "search/training_fingerprint.h"

// The weights are linked in with the assembler's .incbin (no generated source, no path
// lookup at run time). SHARDLAB_PPO_WEIGHTS is the file's absolute path (core/rl/CMakeLists).
#ifdef SHARDLAB_PPO_WEIGHTS
__asm__(".section .rodata\n"
        ".balign 16\n"
        ".global shardlab_ppo_weights_begin\n"
        ".hidden shardlab_ppo_weights_begin\n"
        "shardlab_ppo_weights_begin:\n"
        ".incbin \"" SHARDLAB_PPO_WEIGHTS "\"\n"
        ".global shardlab_ppo_weights_end\n"
        ".hidden shardlab_ppo_weights_end\n"
        "shardlab_ppo_weights_end:\n"
        ".previous\n");
extern "C" const char shardlab_ppo_weights_begin[];
extern "C" const char shardlab_ppo_weights_end[];
#endif

namespace shardlab::rl {

namespace {
constexpr const char* kMagic = "SHARDLAB-PPO-WEIGHTS 1\n";
}

const std::string& pretrainedPolicyBytes()
{
#ifdef SHARDLAB_PPO_WEIGHTS
    static const std::string bytes(shardlab_ppo_weights_begin,
                                   static_cast<size_t>(shardlab_ppo_weights_end > shardlab_ppo_weights_begin
                                                           ? shardlab_ppo_weights_end - shardlab_ppo_weights_begin
                                                           : 0));
#else
    static const std::string bytes;
#endif
    return bytes;
}

PretrainedPolicyInfo readPolicyInfo(const std::string& bytes)
{
    PretrainedPolicyInfo info;
    const size_t magic = std::strlen(kMagic);
    if (bytes.empty()) {
        info.error = "this build has no pretrained policy";
        return info;
    }
    if (bytes.size() < magic + 4 || bytes.compare(0, magic, kMagic) != 0) {
        info.error = "not a ShardLab policy weights file (bad header)";
        return info;
    }
    std::uint32_t len = 0;
    std::memcpy(&len, bytes.data() + magic, 4);
    if (bytes.size() < magic + 4 + len) {
        info.error = "truncated header";
        return info;
    }
    info.metadataJson = bytes.substr(magic + 4, len);
    const nlohmann::json j = nlohmann::json::parse(info.metadataJson, nullptr, false);
    if (!j.is_object()) {
        info.error = "the header is not a JSON object";
        return info;
    }
    info.hidden = j.value("hidden", 0);
    info.heads = j.value("heads", 0);
    info.features = j.value("features", 0);
    info.trainingScenarios = j.value("training_scenarios", 0);
    info.validationScenarios = j.value("validation_scenarios", 0);
    info.seed = j.value("seed", 0ull);
    info.command = j.value("command", std::string());
    info.fingerprint = j.value("fingerprint", std::string());
    info.trainingSeconds = j.value("training_seconds", 0.0);
    if (j.contains("curve") && j["curve"].is_array())
        for (const auto& p : j["curve"])
            if (p.is_object())
                info.curve.push_back({p.value("epoch", 0), p.value("train_loss", 0.0), p.value("validation_loss", 0.0),
                                      p.value("validation_best_of_32", 0.0)});
    info.available = info.hidden > 0 && info.heads > 0;
    if (!info.available)
        info.error = "the header has no network shape";
    return info;
}

std::string policyStaleness(const PretrainedPolicyInfo& info)
{
    if (!info.available)
        return "";
    const std::string& now = trainingFingerprint().hash;
    if (info.fingerprint == now)
        return "";
    return "the pretrained policy was trained against another search space or cost model (its fingerprint "
        + (info.fingerprint.empty() ? std::string("is missing") : info.fingerprint) + ", this build's " + now
        + "): it still searches, but its proposals may be worse than the shipped benchmarks say; retrain it with "
        + (info.command.empty() ? std::string("shardlab-pretrain (docs/ppo.md)") : info.command);
}

PretrainedPolicyInfo pretrainedPolicyInfo()
{
    static const PretrainedPolicyInfo info = readPolicyInfo(pretrainedPolicyBytes());
    return info;
}

} // namespace shardlab::rl

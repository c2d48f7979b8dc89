// The H100 cluster with the isolated kernel profile: kernels priced as they are timed
// alone, as the published kernel tables the kernel tests hold the models against.
#pragma once

#include <QtGlobal>

#include <memory>

#include "io/presets.h"
#include "io/profile_json.h"

namespace shardlab::testing {

// Published kernel tables time each kernel alone, so the cluster carries the isolated
// profile (resources/examples/profiles/h100-sxm-isolated.json: a 4 us per-kernel floor, the
// FP8 GEMM's 13.4 us) rather than the shipped in-step floors (docs/simulator.md §8).
inline const KernelProfile& isolatedProfile()
{
    static const KernelProfile p = [] {
        auto parsed = loadProfileFile(SHARDLAB_RESOURCES "/examples/profiles/h100-sxm-isolated.json");
        if (!parsed.ok())
            qFatal("%s", parsed.firstError().c_str());
        return parsed.value;
    }();
    return p;
}

inline ClusterSpec h100()
{
    auto c = clusterPreset("h100-8");
    if (!c.ok())
        qFatal("h100-8 preset missing");
    applyProfile(c.value, std::make_shared<const KernelProfile>(isolatedProfile()));
    return c.value;
}

} // namespace shardlab::testing

// What a learned policy is trained against, as one hash (docs/ppo.md, "The fingerprint"):
// the search space's slots (kind, name, value list) and the simulator's figures, rounded,
// on fixed (scenario, plan) probes drawn from the scenario generator, some of them as the
// prefill pool of a disaggregated deployment. A policy whose
// recorded fingerprint differs from the running build's was trained on another space or
// another cost model: still usable, but stale, and retraining it is due.
#pragma once

#include <string>

namespace shardlab {

struct TrainingFingerprint {
    std::string hash; // 16 hex digits
    int probes = 0;   // (scenario, plan) pairs simulated
};

// The running build's fingerprint (computed once per process, ~0.1 s; thread-safe).
const TrainingFingerprint& trainingFingerprint();

} // namespace shardlab

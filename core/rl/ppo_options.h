// Hyperparameters of the ppo search (docs/ppo.md), and how they arrive: as named values in
// SearchOptions::extra ("ppo.lr" = 0.003) or as a JSON object. Plain C++: no LibTorch here.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "model/error.h"

namespace shardlab::rl {

// Defaults are the tuned values of docs/benchmarks.md ("PPO (Learn to Shard)").
struct PpoOptions {
    // The method (docs/ppo.md, "The seed method").
    bool pretrained = true;        // start from the shipped pretrained policy (0 = from scratch, as the paper)
    // With `pretrained`: a weights file's bytes to start from instead of the shipped ones
    // (the pretrainer scores its candidates by searching with them). Not a user option:
    // never read from or written to "ppo.*" values.
    std::shared_ptr<const std::string> weights;
    int patience = 2;              // early exit needs the elite history unchanged for this many updates
    int elite = 3;                 // T: plans in the elite history the policy attends to (0 = none)
    double tau = 0.95;             // early exit once the greedy plan's probability exceeds this and the
                                   // elite history has stopped moving (1 = never)
    // Seed the elite history with the Megatron recipe's plan: 0 never, 1 always, 2 only
    // when the policy starts from scratch (a pretrained policy's own first proposals are
    // better, and the recipe's family held it: docs/ppo.md, "How the defaults were chosen").
    int warmStart = 2;
    bool diverseElite = true;      // at most one elite per (TP, PP, EP) layout
    double invalidPenalty = 1.0;   // reward of a plan breaking memory/SLOs: -penalty x min(1, 0.1 + excess)
    // PPO.
    double learningRate = 3e-3;    // Adam
    int samplesPerUpdate = 256;    // new plans per PPO update (sampled in rounds of this many)
    int epochs = 3;                // passes over one rollout per update
    int minibatches = 1;           // minibatches per pass
    double clipRange = 0.2;        // PPO ratio clip epsilon
    double entropyCoef = 0.01;     // bonus on the plan's entropy (nats, summed over decisions)
    double maxGradNorm = 0.5;      // global gradient-norm clip
    // Search-specific choices (docs/ppo.md explains each with its measurement).
    double topFraction = 0.1;      // risk-seeking: learn from this best fraction of a rollout (1 = plain PPO)
    bool learnFromRepeats = false; // learn from samples that repeat an already evaluated plan
    double scratchFloor = 1;       // least share of samples drawn from scratch (no elite anchor) at the start,
    double scratchUntil = 0.25;    // decaying linearly to 0 at this fraction of the budget
    double copyInit = 4;           // initial strength of the copy-from-anchor pointer
    // Recovery from a dead end: when the best plan has not improved for this fraction of
    // the budget (at least one rollout: samplesPerUpdate calls), the next samples are drawn hotter and
    // half of them from scratch (docs/ppo.md, "No confident dead ends"). 0: never.
    double recoverAfter = 0.1;
    // Share of each round's samples drawn near the best elite (one or two slots redrawn by
    // the policy, the rest kept: net::Policy::decodeNear): the neighbours a confident policy
    // rarely proposes itself (docs/ppo.md, "Proposals near the best plan"). 0: none.
    double nearShare = 0.25;
    // Batches between the scale's values (docs/ppo.md, "Plans at their largest valid
    // batch"), every call charged: a sampled plan that narrowly breaks a limit while its
    // throughput would beat the best plan is priced again at its largest valid batch on the
    // scale, and the elite plans are priced at their largest valid integer batch before
    // the budget ends. Without it a move that only pays with a smaller batch is never
    // seen, and two plans are ranked at scale values where their order can be reversed.
    bool batchRepair = true;
    // Layouts priced at their largest valid batch before the budget ends (with
    // batchRepair): the best plan of each of this many (TP, PP, EP) layouts seen, best
    // first at the scale's batches. More than the elite history holds, because a layout
    // ranked below the elite at a scale value can overtake it at its own largest batch
    // (docs/ppo.md, "Plans at their largest valid batch").
    int finishLayouts = 8;
    // With batchRepair: the best plan is also priced with its data-parallel replicas merged
    // pairwise (TP x2, DP /2) and split (TP /2, DP x2), each at its largest valid batch
    // (docs/ppo.md, "Replica moves"): a coupled move that variations of one or two slots
    // do not make.
    bool replicaMoves = true;
    // With batchRepair, after the replica moves: the best plan of an MoE model is also
    // priced with the next redundant-expert counts its EP degree allows, one copy more
    // and one fewer per EP rank, the better at its largest valid batch (docs/ppo.md,
    // "Redundant-expert moves"): a slot the elite's plans agree on early.
    bool redundantMoves = true;
    // With batchRepair, last: the best plan's operators re-chosen one at a time at its
    // batch, the plan then priced at its largest valid batch (search/best_plan_moves.h;
    // docs/ppo.md, "Operator moves").
    bool operatorMoves = true;
    // The network and LibTorch.
    int hidden = 32;               // width of embeddings, attention and the decoder
    int heads = 4;                 // attention heads (divides hidden)
    int threads = 1;               // LibTorch intra-op threads during the search
};

// One option: its key without the "ppo." prefix, range and help line.
struct PpoOptionInfo {
    const char* key;
    double lo, hi;
    bool integer;
    const char* help;
};
const std::map<std::string, PpoOptionInfo>& ppoOptionTable();

// Reads every "ppo.*" key of `extra` into `out` (keys without the prefix are ignored).
// Unknown ppo keys, non-integers where an integer is due and values out of range are
// errors whose `where` is the key ("ppo.lr").
FieldErrors parsePpoOptions(const std::map<std::string, double>& extra, PpoOptions& out);

// A JSON object of ppo options ({"lr": 0.003, "elite": 3}, keys with or without the
// "ppo." prefix, or wrapped as {"ppo": {...}}) added to `extra` as "ppo.*" values.
// Errors name the file and the JSON path; nothing throws.
FieldErrors ppoExtraFromJson(const std::string& text, const std::string& file, std::map<std::string, double>& extra);

// The options back as "ppo.*" values (for reports and round trips).
std::map<std::string, double> ppoOptionsToExtra(const PpoOptions& o);

} // namespace shardlab::rl

// The discrete decision space of a scenario: one slot per coarse degree,
// batch, micro-batches and per-operator sharding, with validity masks so that every plan
// assembled slot by slot is structurally valid (tiles the cluster, divides the model).
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "model/engine_caps.h"
#include "model/plan.h"

namespace shardlab {

enum class SlotKind : std::uint8_t {
    TensorParallel,
    PipelineParallel,
    ExpertParallel,
    Batch,
    MicroBatches,
    RedundantExperts,
    TwoBatchOverlap,
    Instances,
    Operator
};

// The redundant-expert counts of the space with `ep` EP ranks over `experts` experts: every
// r with (experts + r) divisible by EP up to the plan rule's limit (redundantExpertsFit,
// model/plan_checks.h), ascending. Empty when none fits.
std::vector<int> redundantExpertCounts(int experts, int ep);
bool isRedundantExpertCount(int experts, int ep, int redundant); // in that list (no allocation)

// Restrictions of the space, for tests and focused searches. An empty list keeps the
// default values. Values outside the defaults are allowed (e.g. a batch of 534).
struct SearchSpaceOptions {
    std::vector<int> batchValues;      // sequences per replica
    std::vector<int> microBatchValues; // pipeline micro-batches
    // Operators limited to some of their option indices; the others keep all options.
    std::vector<std::pair<OpId, std::vector<int>>> operatorOptions;
};

struct Slot {
    std::string name;        // "tensor_parallel", "operators.qkv_proj", ...
    SlotKind kind;
    OpId op = OpId::Count;   // for Operator slots
    std::vector<int> values; // degree values, or option indices for operators
};

// Data parallelism is not a slot: it is N / (TP x PP), so every plan tiles the cluster.
// Slots in order: tensor_parallel, pipeline_parallel, expert_parallel, batch,
// micro_batches, for an MoE model redundant_experts and two_batch_overlap (0/1), then one
// per operator.
class SearchSpace {
public:
    static constexpr int kMaxSlots = 32;

    // The most values any slot has: the size a mask buffer needs. Slots are sized by
    // the scenario (e.g. every divisor of the expert count), so callers size their
    // buffers with this, never with a constant.
    int widestSlot() const { return m_widest; }

    explicit SearchSpace(const Scenario& s, const SearchSpaceOptions& options = {});

    const Scenario& scenario() const { return m_scenario; }
    const std::vector<Slot>& slots() const { return m_slots; }
    int slotCount() const { return static_cast<int>(m_slots.size()); }

    // Slots are decided in order; `choice[j]` for j < slot are the earlier decisions.
    // Writes 1/0 per value of `slot` into valid; returns how many are valid.
    int mask(int slot, const int* choice, std::uint8_t* valid) const;

    Plan decode(const int* choice) const;
    // The plan's value for `slot` (a degree, the batch, 0/1 for overlap, an option index):
    // what decode writes there, read back. encode and the searches that move a plan into
    // the space read every slot through it.
    int planValue(int slot, const Plan& p) const;
    // False when the plan uses a value outside the space.
    bool encode(const Plan& p, int* choice) const;
    // The plan moved into the space, for a plan of another space (another GPU count, a
    // pool of another size) or outside the masks: every slot's value (planValue) kept where
    // the space has it, ordered values rounded down to the space's (the smallest when all
    // are above), an operator's option the space lacks its first; then repaired by the masks.
    std::vector<int> choiceNear(const Plan& p) const;

    // A uniformly chosen valid value per slot, in slot order.
    Plan randomPlan(std::mt19937_64& rng, int* choiceOut = nullptr) const;

    // True when every slot's value is allowed by the mask of the earlier slots.
    bool isValid(const int* choice) const;
    // Makes `choice` valid, slot by slot in order: a value the mask rejects is replaced by
    // the nearest allowed one (by position in the slot's list; the lower on a tie).
    // Deterministic. Returns false only if some slot has no allowed value at all.
    bool repair(int* choice) const;
    // True for slots whose values are ordered numbers (degrees, batch), where "adjacent
    // value" is a meaningful small move; false for operator slots.
    bool isOrdered(int slot) const { return m_slots[slot].kind != SlotKind::Operator; }

    // log10 of the number of structurally valid plans (exact count by enumeration of the
    // coarse degrees times the per-operator options each allows).
    double log10Size() const { return m_log10Size; }

    // Indices of slots by kind. A dense model has no redundant-experts, overlap and
    // instances slots (-1: its space is what it was before MoE plans had them).
    int tpSlot() const { return 0; }
    int ppSlot() const { return 1; }
    int epSlot() const { return 2; }
    int batchSlot() const { return 3; }
    int microSlot() const { return 4; }
    int redundantSlot() const { return m_moe ? 5 : -1; }
    int overlapSlot() const { return m_moe ? 6 : -1; }
    int instancesSlot() const { return m_moe ? 7 : -1; }
    int firstOpSlot() const { return m_moe ? 8 : 5; }

    // Whether option `o` of operator `id` is allowed with these degrees.
    bool optionAllowed(OpId id, int o, int tp, int etp) const;

    // The batch range of the scenario's constraints (1..kMaxBatch when unconstrained):
    // exact covers every integer batch in it, runSearch refines a plan's batch inside it.
    int batchMin() const { return m_batchMin; }
    int batchMax() const { return m_batchMax; }
    // True when the plan's degrees, batch and options are within the scenario's constraints
    // (not whether the simulator accepts it).
    bool withinConstraints(const Plan& p) const;
    // Why a plan is outside the space the searches consider, one error per broken rule:
    // a constraint by its scenario path (constraints.tensor_parallel, constraints.batch,
    // constraints.operators.qkv_proj), the runnable engine's rules as workload.runnable.
    // Empty when it is within.
    FieldErrors outsideConstraints(const Plan& p) const;
    // False when the constraints leave no (TP, PP, EP) at all (checkConstraints says why).
    bool hasDegrees() const { return m_hasDegrees; }

    // The engine a runnable scenario restricts the space to (model/engine_caps.h); none
    // otherwise. Its rules are masks like the others: batch and micro-batches one per
    // pipeline stage, the degrees, overlap and instances it runs, and operators' options
    // in one of its modes.
    const std::optional<Engine>& engine() const { return m_engine; }
    // The engine modes (bit m: mode m) that run these degrees, overlap and instances; every
    // mode (0b1111 for MoE, 0b1 for a dense model) when the space has no engine, 0 when the
    // degrees are outside the space.
    unsigned engineModeBits(const Plan& degrees) const;

private:
    // The constructor's parts: the slots of the degrees (TP, PP, EP), the batch and
    // micro-batches, the MoE-only slots (redundant experts, two-batch overlap, instances),
    // the operators; then the space's size. countPlans sets m_hasDegrees.
    void addDegreeSlots();
    void addBatchSlots(const SearchSpaceOptions& options);
    void addMoeSlots();
    void addOperatorSlots(const SearchSpaceOptions& options);
    double countPlans();
    // Whether (TP, PP) has some allowed DP and EP, whether TP has some such PP.
    bool degreesViable(int tp, int pp) const;
    bool tpViable(int tp) const;
    // MoE: some instance count of the slot divides DP and leaves EP dividing an instance.
    bool instancesFit(int tp, int dp, int ep) const;

    // The engine's modes per (TP, PP, EP, overlap, instances) index, and whether some mode
    // runs a (TP, PP) and a (TP, PP, EP) with any later choice.
    void buildEngineTables();
    size_t engineIndex(int ti, int pi, int ei, int oi, int ii) const;
    size_t engineEpIndex(int ti, int pi, int ei) const;
    int engineInstances() const { return m_moe ? static_cast<int>(m_slots[instancesSlot()].values.size()) : 1; }
    // The engine's rule for value i of a slot (mask); `modes` caches operatorModes per call.
    static constexpr unsigned kModesUnknown = 0x100;
    bool engineAllows(int slot, int i, const int* choice, const Plan& d, unsigned& modes) const;
    // The modes left for an operator slot: those of the degrees, consistent with the
    // earlier operators' choices.
    unsigned operatorModes(int slot, const int* choice, const Plan& d) const;
    // The operator options' combinations for the degrees in `choice` (its operator slots
    // are not read); `valid` is a mask buffer.
    double operatorCombos(int* choice, std::uint8_t* valid) const;

    Scenario m_scenario;
    std::optional<Engine> m_engine;
    std::vector<std::uint8_t> m_engineModes; // engineIndex -> mode bits
    std::vector<std::uint8_t> m_enginePp, m_engineEp; // any mode for (ti, pi), (ti, pi, ei)
    bool m_moe = false;
    std::vector<Slot> m_slots;
    int m_batchMin = 1, m_batchMax = 1;
    bool m_hasDegrees = false;
    double m_log10Size = 0;
    int m_widest = 1;
};

// Problems of the scenario's constraints on its cluster and model, by JSON path: the values
// no plan can take (checkConstraintValues, model/constraint_checks.h) and a combination that
// leaves no plan at all. Empty when some plan is within them.
FieldErrors checkConstraints(const Scenario& s);

} // namespace shardlab

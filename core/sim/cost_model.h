// The one cost model (docs/simulator.md): pure functions of a scenario that price a
// phase's context, one operator option, one edge's conversion, a rank's KV cache, and
// the pipeline aggregate. Simulator::evaluate applies them to a plan's options; the
// exact search applies the same functions to every option and bounds their sums.
// Nothing else in ShardLab computes a cost.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "model/op_graph.h"
#include "sim/collectives.h"
#include "sim/gemm_model.h"
#include "sim/moe_all_to_all.h"

namespace shardlab {

// Bytes of one activation element (and of a linear layer's state): BF16.
inline constexpr double kActBytes = 2.0;

// Modelling constants that are not hardware: documented in docs/simulator.md.
struct SimConstants {
    // Squared coefficient of variation of the experts' popularity (routed tokens per expert
    // over the mean, lognormal). 0.55 keeps the busiest of 8 EP ranks over 128 experts at
    // 1.25x the mean at large batch, the constant the calibration's MoE rows were fitted
    // with (docs/simulator.md §2, "Expert load imbalance").
    double expertPopularityCv2 = 0.55;
    double prefillWorkspaceFactor = 6; // activation workspace per prompt token, in hidden vectors
    double decodeWorkspaceFactor = 32; // per in-flight token, in hidden vectors
    // Bytes the sampler holds per logit (one sequence's position x one vocabulary entry)
    // when it samples a step's batch: the logits in the model's 16-bit dtype (2), their FP32
    // copy (4), the top-k-masked logits (4) and their softmax (4), as FlashInfer's top-k/top-p
    // sampler holds them in vllm/v1/sample at v0.10.2-v0.11.0 (docs/simulator.md §5). The
    // forward pass's buffers are free by then: a step's activations are the larger of the two.
    double samplerBytesPerLogit = 14;
    int prefillPrompts = 1;            // prompts prefilled together (TTFT = their batch's time)
};

// The expected largest of n independent standard normals (Blom's plotting position;
// expert_balance.cpp, which also defines the load-imbalance members of CostModel).
double expectedMaxOfNormals(double n);
// The same for n ranks, remembered per thread (the hot path asks for a few degrees).
double expectedMaxOfRanks(int n);
// The expected largest of `ranks` independent Poisson counts of the given mean, exact on a
// grid of means up to 64 and interpolated between (attention_dp.cpp).
double expectedMaxPoisson(int ranks, double mean);
// The prompt tokens the busiest of `ranks` sequence-owning ranks prefills in a step that
// carries `chunkTokens` over all of them, each rank at most `rankBudget` tokens, prompts of
// `promptTokens` (attention_dp.cpp).
double busiestRankChunk(double chunkTokens, int ranks, double rankBudget, double promptTokens);

// Static per-operator costs (one layer, one token, unsharded).
struct OpStatic {
    double flopsPerToken = 0;    // GEMM FLOPs for one token
    double weightBytes = 0;      // all of the operator's weights (one layer; experts: one expert)
    double actBytesPerToken = 0; // activations read + written per token
    double outBytesPerToken = 0; // the tensor handed to the next operator
    double kvBytesPerCtx = 0;    // attention: cache bytes read per cached token
    double attnFlopsDecodePerCtx = 0;
    double attnFlopsPrefillPerCtx = 0;
    double kvFloor = 0;          // attention: smallest KV fraction one rank can hold
    bool fp8 = false;            // runs at the FP8 peak (a GEMM: FP8's curves)
    bool fp4 = false;            // a GEMM at the FP4 peak with FP8's curves (fp8 is set too)
    bool w4a16 = false;          // a grouped expert GEMM of 4-bit weights dequantized to BF16
    bool paddedMxfp4 = false;    // ... of MXFP4 weights, stored at the kernel's tile padding
    bool gemm = false;           // priced as a GEMM kernel (gemm_model.h) by size and precision
    double weightElems = 0;      // the GEMM's n x k (one layer; experts: one expert), unsharded
    double matrixElems = 0;      // grouped expert GEMMs: one projection matrix of one expert (h x width)
    double queryHeads = 0;       // attention of a GQA/MHA model: the decode kernel of the profile
    // Attention of a model with an attention layer mix (ModelSpec::attentionMix), priced as
    // the mean of its layers: shares of full, sliding-window and linear-attention layers;
    // the window; a linear layer's state per sequence (recurrent + convolution, times the
    // linear share) and its FLOPs per token (recurrent form in decode, chunked in prefill,
    // times the share); the smallest share of a state one rank holds (one value head).
    bool mixed = false;
    double fullShare = 1, slidingShare = 0, linearShare = 0;
    double window = 0;
    double stateBytes = 0;
    double stateFlopsDecode = 0, stateFlopsPrefill = 0;
    double stateFloor = 1;
};

// The mean number of tokens a query of a sliding-window layer attends to when full
// attention's mean is `meanCtx`: in decode min(meanCtx, window); over a causal prompt
// (queries at every position of a prompt of 2 meanCtx tokens) the mean of min(i, window).
double windowedContext(double meanCtx, double window, bool causalPrompt);
// The mean over an attention layer mix's layers of the cached tokens a query attends to
// (linear layers: none; their state is priced apart).
double attendedContext(const OpStatic& attention, double meanCtx, bool causalPrompt);

// Everything about one step of a phase (a decode step of one micro-batch, or one
// prefill) that depends on the degrees, batch and micro-batches but not on the operator
// options.
struct StepContext {
    bool prefill = false;
    double tokens = 0;        // attention side, per replica per micro-batch (decode + prompt chunk)
    double seqs = 0;          // decoding sequences (decode: queriesPerSeq tokens each)
    double queriesPerSeq = 1; // decode: 1, or 1 + draft tokens when speculative decoding verifies them
    double chunkTokens = 0;   // aggregated decode step: prompt tokens prefilled beside them
    double chunkCtx = 0;      // the mean prefix those prompt tokens attend to
    double ctx = 0;           // cached tokens each query attends to (mean)
    // Decode: the lock-step group's busiest owner of sequences sets the step (attention_dp.cpp).
    // A replica (the replicas of one MoE engine instance wait for each other): its mean
    // context, prompt chunk, and tokens in all; ctx, chunkTokens and tokens when alone.
    double ctxReplica = 0;
    double chunkReplica = 0;
    double tokensReplica = 0;
    // A sequence-split (attention data-parallel) rank of those replicas: its mean context.
    double ctxTokenRank = 0;
    double batchSeqs = 0;     // sequences whose KV cache a replica holds (memory)
    double maxCtx = 0;
    int tp = 1, etp = 1, ep = 1, moeRanks = 1, dp = 1;
    // A token-split operator's share on its busiest rank: the mean share, but at least
    // one token (a rank with work pays for a whole one). See docs "batch property".
    double tokensPerRank = 0;
    double seqsPerRank = 0;
    // Sequence-split ranks own whole prompts: the busiest rank's prompt chunk
    // (busiestRankChunk) and its tokens in all (its decoding sequences' and that chunk).
    // Its decoding sequences are the mean rank's (tokensPerRank: an even split, as the
    // dispatch of a head-split replica's tokens is).
    double chunkBusiestRank = 0;
    double tokensBusiestRank = 0;
    double invTp = 1, invEtp = 1;
    double stageTokens = 0;      // tokens one instance's stage routes in one step, its every replica's
    double routedPerEpRank = 0;  // token-expert pairs landing on one EP rank (busiest)
    double routedPerEtpRank = 0; // routedPerEpRank / expert TP (an expectation)
    double localExperts = 0;       // expert slots per EP rank: (experts + redundant) / EP
    // Of those, how many the busiest EP rank reads: expertsTouched, but no more than the
    // routed pairs it receives (each slot it reads serves at least one).
    double activeLocalExperts = 0;
    double expertsTouched = 0;     // the busiest rank's slots with a token (busiestRankActiveSlots)
    double loadImbalance = 1;      // busiest EP rank's routed pairs / the mean (expertLoadImbalance)
    // Two-batch overlap: 2, and every per-token field above is one half-batch's (each
    // operator runs once per half); 1 otherwise. stepTokens / stepSeqs are the whole
    // micro-batch's step either way (token budget, stage-to-stage transfer, TTFT).
    int halves = 1;
    double stepTokens = 0;
    double stepSeqs = 0;
    Group tpGroup, etpGroup, moeGroup; // as placed (model/placement.h): the worst of each kind
    Group replicaGroup; // MoE: one rank of each TP group of the exchange group (model/placement.h)
    bool stageHandoffCrossesNodes = false;  // some stage hands its hidden states to another node
    // Below 1: a step of a phase priced as events, in which that share of the steps carry
    // a prompt piece (PhaseContext): the step with the piece (carried by the busiest
    // replica: setBusiestOwners) or the plain step. Both run the MoE kernel of a phase with
    // prompt tokens (moeKernel), as the mean step does.
    double pieceShare = 1;
    // With prefill as events, the share of steps in which the busiest token-split rank
    // carries its own piece (setBusiestOwners): it owns its sequences and has 1/TP of the
    // budget, so its steps with a piece are not the replica's. In the step with the piece,
    // chunkBusiestRank is that piece (or, at a share of 1, the rank's mean chunk); op()
    // weights token-split options by this share, every other price by pieceShare.
    double rankShare = 1;
    // StepLoad::groupChunkTokens given: chunkTokens is the group's mean replica's, this the
    // busiest replica's own chunk (both per half with two-batch overlap); below 0 otherwise.
    double ownChunk = -1;
};
// A phase as op() and edge() price it. Steady aggregated decode, prefill as events
// (docs/simulator.md §4): engines put a prompt's chunk into some steps and none into the
// others, so when the lock-step group prefills less than one prompt piece per step on
// average, a step either carries one piece or none. The base is then a step that carries
// it, `plain` the step without, and `chunkShare` (below 1) the share of steps with one;
// op() and edge() price both and weight them by it. At a share of 1 every step carries
// prompt tokens, the base is the mean step and `plain` is unused. stepTokens is the mean
// step's either way.
struct PhaseContext : StepContext {
    double chunkShare = 1;
    StepContext plain;
    bool events() const { return chunkShare < 1; }
};

// One operator option's cost in one phase, per GPU.
struct OpCost {
    double computeS = 0;   // FLOPs / achieved peak
    double memoryS = 0;    // HBM bytes / achieved bandwidth
    double timeS = 0;      // max(compute, memory) + launch overhead
    double fixedS = 0;     // of which the kernels' fixed costs (launch gaps, tails, floors)
    double flops = 0;
    double hbmBytes = 0;
    double weightBytes = 0; // weights this GPU holds for the operator (one layer)
    CollectiveCost own;     // its own collective (dispatch, combine, sequence-split prefill, logits gather)
    double totalS() const { return timeS + own.seconds; }
};

// Two-batch overlap (docs/simulator.md §3): every price of an MoE layer belongs to one
// part of vLLM's dual-batch-overlap schedule. Attention: everything on the token ranks
// (norms, attention, router, dense collectives, dispatch's and combine's own local work,
// and their collective unless it is an all-to-all);
// SharedExpert: the shared expert and its conversions; Experts: the routed experts and
// the expert-side conversions; Dispatch / Combine: their all-to-all (or gather/scatter).
enum class OverlapPart : std::uint8_t { Attention, SharedExpert, Experts, Dispatch, Combine, Count };
constexpr int kOverlapParts = static_cast<int>(OverlapPart::Count);
// The part of option `option` of operator `id`'s price: its compute/memory time, or (own)
// its own collective. Only an all-to-all dispatch/combine is overlapped (the engines overlap
// DeepEP's); an all-gather dispatch or reduce-scatter combine counts as Attention.
OverlapPart overlapPart(OpId id, int option, bool own);
// The part of an edge's conversion.
OverlapPart overlapPart(const GraphEdge& e);
// One MoE layer of a two-batch-overlap step from the parts of one half-batch (A, S, M, D,
// C): the four slots of vLLM's schedule, each as long as the longer of its compute and its
// communication: max(A, D) + max(M, D) + max(S + M, C) + max(S + A, C). Between
// max(2(A+S+M), 2(D+C)) (perfect overlap) and 2(A+S+M+D+C) (none).
double overlappedLayerSeconds(const std::array<double, kOverlapParts>& half);

// Additive per-layer-kind sums of a plan or of a group of its operators. Index 0: one
// dense layer, 1: one MoE layer, 2: the first stage only (embedding), 3: the last stage
// only (LM head). dec/pre in seconds (one micro-batch's decode step / one prefill; with
// two-batch overlap, one half-batch's), weights and kv in bytes per GPU. moeDec/moePre:
// the MoE layer's dec[1]/pre[1] by overlap part (they sum to it).
struct LayerSums {
    std::array<double, 4> dec{}, pre{}, weights{}, kv{};
    // The share of the batch's logits each rank samples (lmHeadLogitsShare): set by the LM
    // head's option alone, 0 in every other operator's sums.
    double logitsShare = 0;
    // The share of a replica's token budget the owner of a prompt has for its pieces
    // (promptOwnerShare): set by the attention's option alone, 0 in every other operator's
    // sums; 0 in a whole plan's sums reads as 1.
    double promptOwnerShare = 0;
    std::array<double, kOverlapParts> moeDec{}, moePre{};
    // Speculative decoding's drafting pass on the last stage (0 without drafts), one
    // half-batch's: one layer of the model's last kind (its sum, and by overlap part as
    // moeDec) and the embedding, the LM head and the MTP input projection (draftFixed).
    // draftSeconds makes the step's drafting time of them.
    double draftLayer = 0, draftFixed = 0;
    std::array<double, kOverlapParts> draftParts{};
    LayerSums& operator+=(const LayerSums& o);
    bool dominatedBy(const LayerSums& o) const; // o <= this in every channel
};
// Seconds one layer of channel `ch` takes in a step of `halves` half-batches (1: no
// overlap): the sum of its prices; with two-batch overlap an MoE layer runs the overlapped
// schedule and every other channel its two halves back to back. Monotone in every field.
double layerSeconds(const LayerSums& s, int ch, bool prefill, int halves);
// Seconds a step's `passes` drafting passes take on the last stage (walkDraft in
// simulator.cpp): each the draft layer as the step runs a layer of its kind (an MoE layer
// under two-batch overlap: the overlapped schedule of draftParts) and the fixed parts once
// per half-batch. Monotone in every field; 0 with no passes.
double draftSeconds(const LayerSums& s, bool moeLayer, int halves, int passes);
LayerSums operator+(LayerSums a, const LayerSums& b);
// The share of a step's logits each of a replica's ranks holds to sample them, by the LM
// head's option: a token-split head computes only its rank's own sequences' (attention data
// parallelism: SGLang's --enable-dp-lm-head, vLLM's data-parallel engines), 1/TP; a
// vocabulary-split head's logits are gathered whole on every rank for sampling, and a
// replicated head computes them all.
double lmHeadLogitsShare(int lmHeadOption, int tensorParallel);
// Whether the LM head's logits are gathered over the TP group for sampling: a
// vocabulary-split head at TP above 1 leaves each rank a slice of every position's logits,
// and the sampler needs them whole. Priced by opInStep, listed by opConversions.
bool lmHeadGathersLogits(int lmHeadOption, int tensorParallel);
// The share of a replica's token budget the rank that owns a sequence has for its prompt's
// pieces, by the attention's option: with the token split (attention data parallelism) each
// TP rank owns whole sequences and prefills them at its 1/TP of the budget; otherwise the
// replica's TP group prefills every prompt together, at the whole budget.
double promptOwnerShare(int attentionOption, int tensorParallel);
LayerSums componentMin(const LayerSums& a, const LayerSums& b);

// Contiguous pipeline stages (stage k holds floor((k+1)L/PP) - floor(kL/PP) layers, dense
// layers first), merged into distinct shapes with their multiplicity, in stage order.
struct StageShape {
    int dense = 0, moe = 0, count = 0;
    bool first = false, last = false;
};
struct StageShapes {
    static constexpr int kMax = 12;
    std::array<StageShape, kMax> shape{};
    int size = 0;
};
StageShapes pipelineStages(int layers, int denseLayers, int pipelineParallel);

// What a plan's sums add up to: the pipeline aggregate (docs/simulator.md §4).
struct PipelineFigures {
    double cycleS = 0;        // one decode step of every micro-batch
    double tpotMs = 0;
    double ttftMs = 0;
    double e2eMs = 0;         // TTFT + (output - 1) x TPOT
    double stepTokens = 0;    // tokens of one engine step (one micro-batch): decode + prompt chunk
    double prefillMs = 0;     // one prompt's prefill through every stage (not in a prefill pool)
    double passMs = 0;        // prefill pool: one prompt's pass through the stages
    double kvTransferMs = 0;  // prefill pool: its KV cache sent to the decode pool
    double stageStepS = 0;    // busiest stage, one micro-batch
    double p2pDecS = 0;       // stage-to-stage transfer of one micro-batch
    double p2pBytes = 0;      // of which the bytes each rank sends (its 1/TP of the hidden states)
    double bubble = 0;
    double tokensPerS = 0;    // whole cluster
    double tokensPerSPerGpu = 0;
    double weightsBytes = 0, kvBytes = 0; // the fullest stage's GPU
    double activationBytes = 0;
    double memoryGb = 0;      // total per GPU, reserve included
    StageShape busiest;       // the busiest decode stage
    bool finite = true;
};

// The memory a KV cache pool takes per GB of cache it holds when the engine gives the pool a
// fraction f of the memory the reserve, weights and activations leave
// (workload.kv_cache_memory_fraction; TensorRT-LLM's free_gpu_memory_fraction): the rest of
// that memory is held back, unused but no other sequence's. The plan's memory, what the pool
// holds back and the room a fraction gives (sim/engine_memory.h) all follow from it.
inline double kvPoolGbPerCacheGb(double f) { return 1 / f; }

// The collective an operator runs itself (dispatch and combine between the attention and
// expert ranks), by option; None for every other operator. Sequence-split prefill
// attention's all-gather and a vocabulary-split LM head's logits gather are priced by
// CostModel::op (the latter listed by opConversions) and are not per-layer ones.
Collective ownCollective(OpId id, int option);
// The ranks an operator's own collective `kind` exchanges among, in an expert group of
// `moeRanks` ranks with tensor parallelism `tp`: the all-gather dispatch's input is
// replicated over each TP group, so it gathers only across the replicas (moeRanks / tp).
inline long long ownCollectiveRanks(Collective kind, long long moeRanks, int tp)
{
    return kind == Collective::AllGather ? moeRanks / (tp > 1 ? tp : 1) : moeRanks;
}

// A layout conversion charged to an operator, as the simulator charges it: the edges of
// the operator graph charged to it (model/op_graph.h) plus its own collective. Only
// conversions that move data in this plan (a group of more than one rank) are listed;
// `where` says which layers ("dense layers", "MoE layers") when the model has both, or
// "output join" / "to expert ranks" / "back to token ranks". `denseLayers` and `moeLayers`
// say which kinds of layer run it: both for the embedding's, the head's and the dispatch's
// and combine's own; a pipeline stage without one kind of layer runs only the other's.
struct OpConversion {
    Layout from = Layout::R;
    Layout to = Layout::R;
    Collective kind = Collective::None;
    const char* where = "";
    bool denseLayers = true, moeLayers = true;
};
std::vector<OpConversion> opConversions(const ModelSpec& m, const Plan& p, OpId id);

// One engine step as a request-level run composes it (sim/serving_load.h): the decoding
// sequences and the prompt tokens it carries, per replica (all its micro-batches together).
// Without one, a decode step is the steady state's mean step (chunkPerSequence).
struct StepLoad {
    double seqs = 0;
    double chunkTokens = 0;
    bool draftPass = false; // speculative decoding: one drafting pass (one token per sequence)
    // Below 1: the chunk is the lock-step group's one prompt piece, in that share of the
    // steps (PhaseContext::pieceShare).
    double pieceShare = 1;
    // A request-level run's step of a lock-step group (lockStepReplicas), when not below 0:
    // the prompt tokens of all the group's replicas, chunkTokens then being the busiest
    // replica's own. The busiest replica holds its chunk, the group's MoE layers route all
    // of them. Below 0: every replica of the group is taken to carry a chunk like it.
    double groupChunkTokens = -1;
};

class CostModel {
public:
    CostModel(const Scenario& s, const SimConstants& constants);

    const Scenario& scenario() const { return m_scenario; }
    const SimConstants& constants() const { return m_constants; }
    const OpStatic& opStatic(OpId id) const { return m_ops[static_cast<int>(id)]; }
    double kvBytesPerTokenPerLayer() const { return m_kvPerTokenLayer; }
    double hiddenBytes() const { return m_hiddenBytes; }
    const LinkModel& link() const { return m_link; }
    // This model with the engines' custom all-reduce at any size (LinkModel::sizeCapsLifted):
    // no price above this model's, none jumping up with the size.
    CostModel withSizeCapsLifted() const;
    const GemmModel& gemm() const { return m_gemm; }
    // The engine's host work per micro-batch step, seconds (part of every cycle).
    double stepOverheadS() const { return m_stepOverheadS; }
    // The replicas that run a decode step in lock step: an MoE engine instance's (their MoE
    // layers exchange tokens every layer); a dense model's replicas never wait for each
    // other, so 1 (attention_dp.cpp).
    int lockStepReplicas(const Plan& p) const;
    // The MoE dispatch/combine kernel a phase runs (moe_all_to_all.h): by the engine, and
    // whether the phase carries prompt tokens. With prefill as events the plain step keeps
    // the kernel of the step with the piece: the normal kernel's fit (4096 tokens per rank)
    // has no per-node latency, so at a few tokens it is priced below the low-latency
    // kernel, and a plain step on the low-latency kernel would cost more than the step with
    // a piece (docs/simulator.md §4).
    MoeKernel moeKernel(const StepContext& ph) const
    {
        return moeKernelFor(m_link.engine, ph.prefill || ph.chunkTokens > 0 || ph.pieceShare < 1);
    }

    // Uses the plan's degrees, batch, micro-batches, redundant experts and two-batch
    // overlap (not its options).
    void phase(const Plan& degrees, bool prefill, PhaseContext& out, const StepLoad* load = nullptr) const;
    // A phase no plan with these degrees and a redundant-expert count in
    // [degrees.redundantExperts, redundantHigh] prices below: the fewest expert slots per
    // rank (the range's start) and expertLoadImbalanceFloor. Every price is non-decreasing
    // in the slots per rank and in the routed tokens per rank, so an upper bound on the
    // throughput of the whole range (exact bounds ranges of counts with it).
    void phaseFloor(const Plan& degrees, int redundantHigh, bool prefill, PhaseContext& out,
                    const StepLoad* load = nullptr) const;
    // The expected routed load of the busiest of `ep` expert-parallel ranks over the mean,
    // when `stageTokens` tokens (each to top-k experts) are routed in one step and the ranks
    // hold experts + `redundant` slots (docs/simulator.md §2, "Expert load imbalance"):
    // 1 at EP 1, never below 1, finite.
    double expertLoadImbalance(int ep, int redundant, double stageTokens) const;
    // A floor of expertLoadImbalance over every redundant count in [low, high]: the fewest
    // slots' cap, the most slots' hottest slot, the routing noise without the static
    // placement's popularity term unless high is 0. Each of these is the smallest its term
    // takes over the range, and the imbalance is non-decreasing in each term.
    double expertLoadImbalanceFloor(int ep, int low, int high, double stageTokens) const;
    // The load of the busiest expert slot over the mean expert's, after the load balancer
    // gives `redundant` replicas to the busiest experts (0: the busiest expert itself).
    double hottestSlotLoad(int redundant) const;
    // The expected number of the experts + `redundant` slots that receive at least one of
    // `stageTokens` tokens' top-k picks, with the experts' popularity skewed as the load
    // imbalance assumes (docs/simulator.md §2, "Experts a step reads"). Non-decreasing in
    // `redundant` and in the tokens; k at one token, every slot as the tokens grow.
    double expectedActiveSlots(int redundant, double stageTokens) const;
    // Of those, the slots the busiest of `ep` ranks reads (each rank holds slots / ep): the
    // mean rank's share plus the expected largest deviation of a sum of Bernoulli draws,
    // at most every slot the rank holds. Non-decreasing in `redundant` and the tokens.
    double busiestRankActiveSlots(int ep, int redundant, double stageTokens) const;
    // One operator option's price in a phase: with prefill as events (ph.events()), the
    // share-weighted mean of its price in the step with a prompt piece and in the plain
    // step; every figure is a mean over steps (the collective's kind and algorithm are the
    // step with the piece's, or the plain step's when that one has none; its size-capped
    // count is the two steps' sum, a one-step phase's step counted twice: cost_model_ops.h).
    OpCost op(OpId id, int option, const PhaseContext& ph) const;
    // The conversion of edge `e` from layout `from` to `to` (kind None when free), weighted
    // over the two steps as op() is.
    CollectiveCost edge(const GraphEdge& e, Layout from, Layout to, const PhaseContext& ph) const;
    // KV cache bytes one GPU holds for one layer: every sequence of the replica at the
    // longest context, split as the attention option splits it. With an attention layer
    // mix the layers' mean: sliding-window layers hold at most the window, linear layers
    // their fixed state.
    double kvBytesPerLayer(int attentionOption, const StepContext& decode) const;
    // One sequence's cache of one layer at `ctx` tokens, unsplit (the layers' mean).
    double cacheBytesPerSequence(double ctx) const;
    PipelineFigures pipeline(const Plan& degrees, const StageShapes& stages, const PhaseContext& dec,
                             const PhaseContext& pre, const LayerSums& sums) const;
    // The serving figures a decode cycle gives, pipeline()'s and exact's bounds' alike: TPOT,
    // throughput (all GPUs and per GPU), TTFT and end-to-end time, from f.cycleS, the
    // sequences in flight, the decode tokens of one engine step (its sequences x queries
    // per sequence: they leave the prompt its room) and the prompt's own parts in f
    // (prefillMs; a prefill pool's passMs and kvTransferMs).
    void servingFigures(PipelineFigures& f, double seqsInFlight, double stepDecodeTokens,
                        double promptOwnerShare) const;
    // The scenario's limits the figures break, each relaxed by (1 + slack): memory per GPU,
    // TTFT, TPOT, one step's token budget. The one rule the simulator's verdict and exact's
    // bounds read (a figure that is not a number breaks its limit).
    struct LimitsBroken {
        bool memory = false, ttft = false, tpot = false, tokenBudget = false;
        bool any() const { return memory || ttft || tpot || tokenBudget; }
    };
    LimitsBroken limitsBroken(const PipelineFigures& f, double slack) const;
    // Finite figures within every limit, relaxed by (1 + slack).
    bool withinLimits(const PipelineFigures& f, double slack) const { return f.finite && !limitsBroken(f, slack).any(); }
    // Aggregated serving: prompt tokens prefilled per decoding sequence per step in steady
    // state (ISL / OSL: each request costs ISL prompt tokens over OSL decode steps); 0 in
    // decode mode.
    double chunkPerSequence() const;
    // Aggregated serving's steady decode step with these degrees and batch: the share of
    // steps that carry a prompt piece (docs/simulator.md §4, "Prefill as events"). A piece
    // is a whole prompt, or the budget the decode tokens leave when the prompt is longer.
    // The lock-step group (an MoE instance's replicas, else one replica) waits for its
    // busiest replica, whose mean prompt tokens per step (busiestRankChunk) the steps with
    // a piece carry as one whole piece: the share is those tokens over the piece; 1 when
    // that is a piece or more (every step carries prompt tokens), in decode mode and in a
    // prefill pool. Never falls as the batch grows.
    double chunkStepShare(const Plan& degrees) const;
    // Aggregated serving: the prompt tokens one replica's step (two-batch overlap: each of
    // its `halves`) can carry beside `decodeTokens` decode tokens: the token budget left,
    // at least one. `budgetShare` is the owner's share of the replica's budget (a
    // token-split rank's 1/TP).
    double promptRoom(double decodeTokens, double halves = 1, double budgetShare = 1) const;
    // The halves a step runs its operators in: 2 with two-batch overlap (MoE), else 1.
    int stepHalves(const Plan& p) const { return p.twoBatchOverlap && m_scenario.model.isMoe() ? 2 : 1; }
    // Aggregated serving: the steps a request waits for its first token: half a cycle for
    // the next step, then its prompt's chunks at the budget the decode tokens of its step
    // leave free (max_num_tokens - seqs per step), one step per cycle. The prompt's owner
    // has `ownerShare` of the budget and of the step's decode tokens (promptOwnerShare; 0
    // reads as 1). TTFT adds the prompt's own prefill work to those steps
    // (PipelineFigures::prefillMs).
    double aggregatedTtftMs(double cycleS, double seqsPerStep, double ownerShare) const;
    // Tokens an engine step may carry: max_num_tokens (a prefill pool: at least one prompt).
    double tokenBudget() const;
    // The scenario's workload has a TPOT (shardlab::hasTpot, model/specs.h).
    bool hasTpot() const { return shardlab::hasTpot(m_scenario.workload); }
    // Speculative decoding (docs/simulator.md §4; sim/speculative_cost.cpp). Tokens a decoding
    // sequence carries per step (1 + draft tokens, else 1); the tokens it emits per step
    // (speculativeTokensPerStep; 1 when off and in a prefill pool); the drafting passes per
    // step (0 when off); one drafting pass's phase (each sequence one token, no prompt chunk;
    // `load`: that step's sequences); and the MTP module's 2d -> d projection in that phase.
    bool speculative() const;
    double queriesPerSequence() const;
    double tokensPerStep() const;
    int draftPasses() const;
    // With redundantHigh above the plan's count: the phase floor over that range (phaseFloor).
    void draftPhase(const Plan& degrees, PhaseContext& out, const StepLoad* load = nullptr, int redundantHigh = -1) const;
    OpCost mtpProjection(const Plan& degrees, const PhaseContext& draft) const;
    // Disaggregated serving: one prompt's KV cache (every layer), the bytes per second one
    // GPU's `kv_transfer` link carries, and the transfer time from a prefill replica.
    double kvBytesPerRequest() const;
    double kvLinkBytesPerS() const;
    double kvTransferMs(const Plan& degrees) const;

private:
    // phase() for one step: the steady mean step, or the step `load` gives.
    void stepPhase(const Plan& degrees, bool prefill, StepContext& out, const StepLoad* load) const;
    // The prices of op() and edge() in one step (cost_model_ops.h).
    OpCost opInStep(OpId id, int option, const StepContext& ph) const;
    CollectiveCost edgeInStep(const GraphEdge& e, Layout from, Layout to, const StepContext& ph) const;
    // Whether opInStep prices an option at the busiest token-split rank (its tokens,
    // sequences, chunk and context): a token-split operator other than the experts and
    // the exchange, which have prices of their own.
    static bool pricedAtBusiestRank(OpId id, const OpOption& opt)
    {
        return opt.split == Split::Tokens && id != OpId::ExpertUp && id != OpId::ExpertDown
            && id != OpId::Dispatch && id != OpId::Combine;
    }
    // The routed token-expert pairs of the busiest EP rank (and per expert-TP rank) from
    // the stage's tokens and the imbalance over the mean rank.
    void setRoutedLoad(StepContext& ph, double stageTokens, double imbalance) const;
    // An MoE phase's expert side from the plan's degrees and the phase's tokens: ranks,
    // slots per EP rank, the slots the busiest rank reads and its routed pairs.
    void setExpertLoad(const Plan& degrees, StepContext& ph) const;
    // The busiest owner of sequences' context and prompt chunk (attention_dp.cpp).
    void setBusiestOwners(const Plan& p, StepContext& ph) const;
    // The constructor's parts: the hardware's rates and kernels, then each operator's
    // static figures (weights, FLOPs and bytes per token, precision), then GEMM shapes.
    void setHardware();
    void setEmbeddingAndNorms();
    void setAttentionOps(bool fp8);
    void setFfnOps(bool fp8);
    void setMoeOps(bool fp8);
    void setLmHead(bool fp8);
    void setGemmShapes(GemmMath math);
    // The tokens per step speculative decoding's acceptance gives (m_tokensPerStep).
    double expectedTokensPerStep() const;
    // Fills m_stratumLogIdle from the model's experts and the popularity's spread.
    void setPopularityStrata();
    // The attention layer mix's mean layer: shares, window, linear layers' projections and
    // state (constructor; ModelSpec::attentionMix).
    void setAttentionMix(OpStatic& qkv, OpStatic& attention, OpStatic& out);
    Scenario m_scenario;
    SimConstants m_constants;
    std::array<OpStatic, kOpCount> m_ops{};
    LinkModel m_link;
    GemmModel m_gemm;
    double m_peakBf16 = 0, m_peakFp8 = 0, m_hbm = 0, m_overheadS = 0;
    double m_stepOverheadS = 0;   // the engine's host work per micro-batch step (kernel profile)
    double m_tokensPerStep = 1;   // tokens a decoding sequence emits per step (speculative decoding)
    // The decode attention kernel (profile's attention_decode, knobs as multipliers).
    double m_attnFixedS = 0, m_attnStream = 0, m_attnFlops = 0, m_attnPerHeadS = 0;
    double m_kvPerTokenLayer = 0;
    double m_hiddenBytes = 0;   // one token's hidden vector in the activation precision
    double m_popularitySigma = 0; // lognormal sigma of the experts' popularity
    double m_hottestExpert = 0;   // hottestSlotLoad(0)
    // The popularity in kPopularityStrata equal-probability strata of its lognormal (mean 1):
    // log(1 - top_k x popularity / experts), a token's chance of missing an expert of each.
    static constexpr int kPopularityStrata = 32;
    std::array<double, kPopularityStrata> m_stratumLogIdle{};
    std::uint64_t m_id = 0;       // distinct per constructed model (hottestSlotLoad's cache)
};

} // namespace shardlab

#include "sim/cost_model_ops.h"

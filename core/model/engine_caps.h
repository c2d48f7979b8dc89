// What each serving engine can run (docs/engines.md, every capability with its source):
// the engines ShardLab exports to, at the versions whose arguments were checked, and their
// capabilities as rules over the one plan space. A runnable scenario (workload.runnable)
// restricts every search, exact's certificate and the recipe to these rules through the
// search space's masks; export refuses a plan that breaks them, naming each rule.
//
// An engine runs a plan's operators in one of a few layouts ("modes"): attention split by
// heads over the tensor-parallel group (every engine's tensor parallelism), or, for an MoE
// model, sequences split over it (attention data parallelism); and the MoE token exchange
// as an all-to-all (DeepEP) or as an all-gather with a reduce-scatter. A mode fixes each
// operator's option (a few operators have two); the degrees decide which modes exist.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/error.h"
#include "model/plan.h"
#include "model/specs.h"

namespace shardlab {

enum class Engine : std::uint8_t { Vllm, Sglang, TrtLlm };

struct EngineInfo {
    Engine engine;
    const char* name;    // what --engine takes: "vllm"
    const char* label;   // "vLLM"
    const char* version; // the release whose flags and capabilities were checked: "0.11"
};

const std::vector<EngineInfo>& launchEngines();
const EngineInfo& engineInfo(Engine e);
bool engineFromName(const std::string& name, Engine& out);
std::string knownEngines(); // "vllm, sglang, trtllm"

// TensorRT-LLM's share of the memory left after the model loads that its KV cache gets when
// not told otherwise: KvCacheConfig.free_gpu_memory_fraction and trtllm-bench's
// --kv_cache_free_gpu_mem_fraction both default to 0.90 (docs/launch.md, "Memory settings").
constexpr double kTrtLlmDefaultKvFraction = 0.90;
// vLLM 0.10-0.11 as `vllm serve` starts it on a GPU of 70 GiB or more, not A100 (EngineArgs'
// batch defaults for the API server, vllm/engine/arg_utils.py): at most 1024 sequences in
// flight and 8192 tokens per step; gpu_memory_utilization 0.9 (CacheConfig).
constexpr int kVllmServeMaxNumSeqs = 1024;
constexpr int kVllmServeMaxNumBatchedTokens = 8192;
constexpr double kVllmDefaultMemoryUtilization = 0.90;

// The engine whose collectives a workload names (vllm_eager is vLLM); none for nccl.
std::optional<Engine> engineOfCollectives(CollectiveEngine c);
// Its inverse: the workload.engine value that names an engine's collectives.
CollectiveEngine collectivesOf(Engine e);
// Whether the engine's decode instance, serving disaggregated, streams the first output
// token the prefill instance computed as soon as it takes the request in, with no decode step
// of its own (docs/simulator.md §4, "Disaggregated pools under load"). SGLang's does: its
// decode scheduler streams a transferred request's token as it takes it in and merges it
// into the running batch (process_batch_result_prebuilt in python/sglang/srt/managers/
// scheduler_output_processor_mixin.py; 0.4-0.5 spend an iteration that runs no model on it,
// "Generate fake extend output" in python/sglang/srt/disaggregation/decode.py, not
// modelled). vLLM's does not: its scheduler marks every
// prompt token but the last as loaded and computes that one in a step to get the first token
// (`num_computed_tokens -= 1` in _update_waiting_for_remote_kv, vllm/v1/core/sched/
// scheduler.py). Nor does TensorRT-LLM's: its generation instance adds the context
// instance's token when the cache has arrived, in the iteration that runs the request's first
// generation step, and responds after that step (_prepare_disagg_gen_transmission_complete
// in tensorrt_llm/_torch/pyexecutor/py_executor.py); its proxy passes on only the context
// response's disaggregated parameters (_get_gen_request, tensorrt_llm/serve/
// openai_disagg_server.py). A scenario naming no engine (nccl) is taken as vLLM's.
bool streamsPrefillFirstToken(CollectiveEngine c);
// The engine a runnable scenario's plans are restricted to; none when it is not runnable.
std::optional<Engine> runnableEngine(const Scenario& s);

// ", among the plans vLLM 0.11 runs (docs/engines.md)" for a runnable scenario, empty
// otherwise: what every "proved optimal" names as its space.
std::string runnableSpaceWords(const Scenario& s);

// Modes: index = 2 x attentionDp + allToAll.
constexpr int kEngineModes = 4;
struct EngineMode {
    bool attentionDp = false; // sequences split over the TP group (MoE only)
    bool allToAll = false;    // MoE dispatch and combine as all-to-all; else all-gather + reduce-scatter
};
inline EngineMode engineMode(int index) { return {(index & 2) != 0, (index & 1) != 0}; }
std::string engineModeName(int index); // "attention by heads, all-gather / reduce-scatter"

// Why an engine does not run some degrees in a mode (None: it does).
enum class EngineRefusal : std::uint8_t {
    None,
    AttentionDp,        // attention data parallelism the engine has not (or not for a dense model)
    ExpertParallelAll,  // vLLM: EP over all of a stage's ranks or none
    AllToAllBackend,    // no all-to-all backend for this layout
    AttentionTp,        // TensorRT-LLM: attention TP is the whole stage or 1
    DenseUnderDp,       // SGLang: dense FFN or shared expert split over a DP-attention stage
    Overlap,            // two-batch overlap the engine cannot run here
    Redundant,          // redundant experts without expert parallelism
    Layout,             // some operator has no option of this mode that divides the model
};
// The degrees rule: whether `e` runs the plan's degrees, redundant experts, overlap and
// instances in mode `mode` (operators' options and micro-batches aside). Cheap: the search
// space's masks ask it.
EngineRefusal engineDegreesRefusal(Engine e, const ModelSpec& m, const Plan& degrees, int mode);
// Whether `e` runs option `o` of operator `id` in mode `mode` with these degrees.
bool engineOptionAllowed(Engine e, const ModelSpec& m, const Plan& degrees, int mode, OpId id, int o);
// The micro-batch rule: engines keep one micro-batch per pipeline stage in flight.
inline bool engineMicroBatchesRun(const Plan& p) { return p.microBatches == p.pipelineParallel && p.batch >= p.pipelineParallel; }

// The mode a plan's options are in: by its attention (sequences split: attention DP) and
// its dispatch (all-to-all).
int planEngineMode(const ModelSpec& m, const Plan& p);
// The placement rule: whether a script starts the plan's servers as planned on nodes of
// `gpusPerNode` GPUs. A server (an SGLang server or a dense plan's SGLang replica, a
// TensorRT-LLM MPI world; an MoE plan's server is its engine instance) is whole nodes, or
// tiles a node; on several nodes any other size leaves one straddling two nodes without
// filling them, which no launch starts. vLLM's Ray cluster places its engines' GPUs itself:
// no rule. Empty when it holds; else the reason, with the plan field that decides it in
// `field`. Depends on the degrees only.
// The GPUs of one server a launch starts for the plan: an MoE plan's engine instance (its
// stage's ranks over the pipeline), a dense plan's replica (tensor x pipeline parallel; the
// engines run a dense model's attention by heads).
long long engineServerGpus(const ModelSpec& m, const Plan& p);
std::string enginePlacementRefusal(Engine e, const ModelSpec& m, const Plan& degrees, int gpusPerNode,
                                   std::string* field = nullptr);
// Every rule of `e` the plan breaks, by plan field (tensor_parallel, operators.qkv_proj,
// ...), each with the engine's reason; `s` is the scenario the plan runs on (a pool's for a
// pool: its model and its nodes). Empty when the engine runs the plan as it is.
FieldErrors engineViolations(Engine e, const Plan& p, const Scenario& s);
// The engine's own layout for a plan's degrees: the plan's options moved into the nearest
// mode `e` runs them in (its own mode; else its attention with the other dispatcher; else
// the others in order, attention by heads with all-gather / reduce-scatter first) and
// micro-batches one per stage. Degrees are kept.
void applyEngineLayout(Engine e, const ModelSpec& m, Plan& p);

} // namespace shardlab

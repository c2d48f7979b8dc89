// collective: the model's time for one collective, and the algorithm it chose
// (docs/simulator.md §2, "Collectives by algorithm and size"), for checking against
// nccl-tests or an engine's own benchmark, and for teaching.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <ostream>

#include "cli_commands.h"
#include "io/presets.h"
#include "sim/collectives.h"
#include "sim/moe_all_to_all.h"

namespace shardlab::cli {

namespace {

struct OpName {
    const char* name;
    Collective kind;
    double busFactor(double n) const // nccl-tests' bus bandwidth factor
    {
        return kind == Collective::AllReduce ? 2 * (n - 1) / n : (n - 1) / n;
    }
};
constexpr OpName kOps[] = {{"all_reduce", Collective::AllReduce},
                           {"all_gather", Collective::AllGather},
                           {"reduce_scatter", Collective::ReduceScatter},
                           {"all_to_all", Collective::AllToAll}};

// A MoE dispatch and combine (--kernel): the DeepEP-style kernels or NCCL's all-to-all of
// every (token, expert) copy, for --tokens per rank (docs/simulator.md §2, "MoE dispatch and
// combine").
int runMoeAllToAll(const Args& a, const ClusterSpec& preset, CollectiveEngine engine, std::ostream& out,
                   std::ostream& err)
{
    MoeKernel kernel = MoeKernel::Nccl;
    const std::string name = a.value("--kernel");
    if (!moeKernelFromName(name.c_str(), kernel))
        return reportErrors(err, {"--kernel: unknown '" + displayText(name) + "' (one of deepep_ll, deepep_normal, nccl)"});
    if (!a.has("--gpus"))
        return reportErrors(err, {"--gpus: required (the expert-parallel ranks, e.g. 16)"});
    if (!a.has("--tokens"))
        return reportErrors(err, {"--tokens: required with --kernel (tokens per rank, e.g. 128)"});
    if (a.has("--bytes"))
        return reportErrors(err, {"--bytes: not with --kernel (the payload follows from --tokens, --hidden and --top-k)"});
    long long gpus = 0, hidden = 7168, topK = 8;
    double tokens = 0;
    std::string error;
    if (!intValue(a, "--gpus", 1, 1 << 20, gpus, error) || !numberValue(a, "--tokens", 1, 1e9, tokens, error)
        || (a.has("--hidden") && !intValue(a, "--hidden", 1, 1 << 20, hidden, error))
        || (a.has("--top-k") && !intValue(a, "--top-k", 1, 1024, topK, error)))
        return reportErrors(err, {error});
    ClusterSpec c = preset;
    c.nodes = static_cast<int>((gpus + c.gpusPerNode - 1) / c.gpusPerNode);
    const Group g = placeGroup(static_cast<int>(gpus), 1, c.gpusPerNode);
    const LinkModel link = linkModel(c, engine);
    const CollectiveCost d = moeAllToAllCost(kernel, false, tokens, double(hidden), int(topK), g, link);
    const CollectiveCost cb = moeAllToAllCost(kernel, true, tokens, double(hidden), int(topK), g, link);
    const int nodes = g.nodes;
    if (a.flag("--json")) {
        nlohmann::ordered_json j = {{"op", "all_to_all"},
                                    {"kernel", moeKernelName(kernel)},
                                    {"gpus", gpus},
                                    {"tokens_per_rank", tokens},
                                    {"hidden", hidden},
                                    {"top_k", topK},
                                    {"cluster", c.name},
                                    {"nodes", nodes},
                                    {"ranks_per_node", g.ranksPerNode},
                                    {"algorithm", collectiveAlgoName(d.algo)},
                                    {"dispatch_us", d.seconds * 1e6},
                                    {"combine_us", cb.seconds * 1e6},
                                    {"dispatch_bytes_sent_per_rank", d.bytesPerRank},
                                    {"combine_bytes_sent_per_rank", cb.bytesPerRank}};
        out << j.dump(2) << "\n";
        return kExitOk;
    }
    char line[256];
    std::snprintf(line, sizeof line, "MoE dispatch/combine of %.0f tokens per rank (hidden %lld, top-%lld) over %lld GPUs "
                  "(%d per node, %d node%s), %s kernels on %s\n",
                  tokens, hidden, topK, gpus, g.ranksPerNode, nodes, nodes > 1 ? "s" : "", moeKernelName(kernel),
                  c.gpu.name.c_str());
    out << line;
    std::snprintf(line, sizeof line, "  dispatch   %.2f us   (%s payload)\n", d.seconds * 1e6,
                  kernel == MoeKernel::Nccl ? "BF16" : "FP8");
    out << line;
    std::snprintf(line, sizeof line, "  combine    %.2f us   (BF16 payload)\n", cb.seconds * 1e6);
    out << line;
    std::snprintf(line, sizeof line, "  algorithm  %s\n", collectiveAlgoName(d.algo));
    out << line;
    return kExitOk;
}

int runCollective(const Args& a, std::ostream& out, std::ostream& err)
{
    const std::string opName = a.value("--op");
    const OpName* op = nullptr;
    for (const OpName& o : kOps)
        if (opName == o.name)
            op = &o;
    if (!op)
        return reportErrors(err, {"--op: " + (opName.empty() ? std::string("required") : "unknown '" + displayText(opName) + "'")
                                  + " (one of all_reduce, all_gather, reduce_scatter, all_to_all)"});
    CollectiveEngine engine = CollectiveEngine::Nccl;
    if (a.has("--engine") && !collectiveEngineFromName(a.value("--engine"), engine))
        return reportErrors(err, {"--engine: unknown '" + displayText(a.value("--engine")) + "' (one of "
                                  + knownCollectiveEngines() + ")"});
    const std::string clusterName = a.value("--cluster", "h100-8");
    auto cluster = clusterPreset(clusterName);
    if (!cluster.ok())
        return reportErrors(err, {"--cluster: " + cluster.errors.front().reason});
    if (FieldErrors errors; !applyProfileArg(a, cluster.value, errors)) // its NCCL, all-reduce, DeepEP tables
        return reportFieldErrors(err, errors);
    long long gpus = 0;
    double bytes = 0;
    std::string error;
    if (a.has("--kernel")) {
        if (op->kind != Collective::AllToAll)
            return reportErrors(err, {"--kernel: only with --op all_to_all (MoE dispatch and combine)"});
        return runMoeAllToAll(a, cluster.value, engine, out, err);
    }
    for (const char* flag : {"--tokens", "--hidden", "--top-k"})
        if (a.has(flag))
            return reportErrors(err, {std::string(flag) + ": only with --kernel (a MoE dispatch and combine); a "
                                                          "collective's size is --bytes"});
    if (!a.has("--gpus"))
        return reportErrors(err, {"--gpus: required (the ranks of the group, e.g. 8)"});
    if (!a.has("--bytes"))
        return reportErrors(err, {"--bytes: required (the nccl-tests size: each rank's buffer, e.g. 16384)"});
    if (!intValue(a, "--gpus", 1, 1 << 20, gpus, error) || !numberValue(a, "--bytes", 1, 1e13, bytes, error))
        return reportErrors(err, {error});
    // A buffer holds whole bytes; 1e6 is one, 1.5 is not (it would be priced and printed as 2).
    if (bytes != std::floor(bytes))
        return reportErrors(err, {"--bytes: expects a whole number of bytes, got '" + a.value("--bytes") + "'"});
    // Whole nodes of the preset's size: a group larger than a node spans several.
    ClusterSpec c = cluster.value;
    c.nodes = static_cast<int>((gpus + c.gpusPerNode - 1) / c.gpusPerNode);
    const Group g = placeGroup(static_cast<int>(gpus), 1, c.gpusPerNode);
    const double n = static_cast<double>(gpus);
    // The model's S is the whole tensor over the group; nccl-tests' all-to-all size is one
    // rank's buffer, a 1/n share of it.
    const double S = op->kind == Collective::AllToAll ? bytes * n : bytes;
    const CollectiveCost cost = collectiveCost(op->kind, S, g, linkModel(c, engine));
    const double us = cost.seconds * 1e6;
    const double busGBps = us > 0 ? op->busFactor(n) * bytes / cost.seconds / 1e9 : 0;
    const int nodes = g.nodes;
    if (a.flag("--json")) {
        nlohmann::ordered_json j = {{"op", op->name},
                                    {"gpus", gpus},
                                    {"bytes", bytes},
                                    {"engine", collectiveEngineName(engine)},
                                    {"cluster", c.name},
                                    {"nodes", nodes},
                                    {"ranks_per_node", g.ranksPerNode},
                                    {"algorithm", collectiveAlgoName(cost.algo)},
                                    {"time_us", us},
                                    {"bus_bandwidth_gb_per_s", busGBps},
                                    {"bytes_sent_per_rank", cost.bytesPerRank}};
        out << j.dump(2) << "\n";
        return kExitOk;
    }
    char line[256];
    std::snprintf(line, sizeof line, "%s of %.0f bytes over %lld GPUs (%d per node, %d node%s), %s collectives on %s\n",
                  op->name, bytes, gpus, g.ranksPerNode, nodes, nodes > 1 ? "s" : "", collectiveEngineName(engine),
                  c.gpu.name.c_str());
    out << line;
    std::snprintf(line, sizeof line, "  time       %.2f us   (the model's, docs/simulator.md §2)\n", us);
    out << line;
    std::snprintf(line, sizeof line, "  algorithm  %s\n", collectiveAlgoName(cost.algo));
    out << line;
    std::snprintf(line, sizeof line, "  bus bandwidth %.1f GB/s   (nccl-tests' busbw: size x factor / time)\n", busGBps);
    out << line;
    return kExitOk;
}

} // namespace

void addCollectiveCommand(std::vector<Command>& v)
{
    v.push_back({{"collective", "--op all_reduce|all_gather|reduce_scatter|all_to_all --gpus N --bytes B "
                                "[--engine nccl|trtllm|vllm|vllm_eager|sglang] [--cluster h100-8] [--json] | --op all_to_all "
                                "--kernel deepep_ll|deepep_normal|nccl --gpus N --tokens T [--hidden 7168] [--top-k 8]",
                  "the model's time for one collective and the algorithm it picks (docs/simulator.md §2)",
                  "--bytes is the nccl-tests size (each rank's buffer). Groups larger than a node of the cluster "
                  "preset span whole nodes. --engine picks whose collectives run: NCCL alone, or an engine's custom "
                  "all-reduce inside a node beside NCCL (vllm_eager: without CUDA graphs). JSON: op, gpus, bytes, "
                  "engine, cluster, nodes, ranks_per_node, algorithm, time_us, bus_bandwidth_gb_per_s, "
                  "bytes_sent_per_rank. With --kernel: one MoE dispatch (FP8) and combine (BF16) of T tokens per "
                  "rank, each to top-k experts spread over the N ranks, by DeepEP's low-latency (decode) or normal "
                  "(prefill) kernels or NCCL's all-to-all; JSON: kernel, tokens_per_rank, hidden, top_k, nodes, "
                  "algorithm, dispatch_us, combine_us, dispatch/combine_bytes_sent_per_rank.",
                  {{"--op", "OP", "all_reduce, all_gather, reduce_scatter or all_to_all"},
                   {"--gpus", "N", "ranks in the group"},
                   {"--bytes", "B", "nccl-tests size in bytes (a whole number; 1e6 is one)"},
                   {"--engine", "E", "nccl (default), trtllm, vllm, vllm_eager or sglang"},
                   {"--kernel", "K", "MoE dispatch/combine: deepep_ll, deepep_normal or nccl (all_to_all only)"},
                   {"--tokens", "T", "with --kernel: tokens per rank"},
                   {"--hidden", "H", "with --kernel: hidden size (default 7168)"},
                   {"--top-k", "K", "with --kernel: experts per token (default 8)"},
                   {"--cluster", "PRESET", "cluster preset whose GPU and links to use (default h100-8)"},
                   kProfileOption, kJsonOption},
                  0, 0},
                 runCollective});
}

} // namespace shardlab::cli

#include "io/constraints_json.h"

#include <algorithm>

#include "model/plan.h"

namespace shardlab::io {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

constexpr size_t kMaxValues = 256;
constexpr long long kMaxDegree = 1 << 20;

// An integer or a non-empty array of integers in [1, kMaxDegree]; sorted, unique.
std::vector<int> readValues(JsonReader& r, const char* key)
{
    std::vector<int> out;
    if (!r.has(key))
        return out;
    const json& v = r.json()[key];
    const std::string where = r.path(key);
    auto one = [&](const json& x, const std::string& at) {
        if (!x.is_number_integer()) {
            r.fail(at, "must be a positive integer, got " + jsonTypeName(x));
            return;
        }
        const long long n = x.is_number_unsigned() ? static_cast<long long>(std::min<unsigned long long>(
                                                         x.get<unsigned long long>(), kMaxDegree + 1))
                                                   : x.get<long long>();
        if (n < 1 || n > kMaxDegree) {
            r.failRange(at, "must be between 1 and " + std::to_string(kMaxDegree) + ", got " + x.dump());
            return;
        }
        out.push_back(static_cast<int>(n));
    };
    if (v.is_array()) {
        if (v.empty())
            r.fail(where, "must list at least one allowed value (leave the field out to allow any)");
        else if (v.size() > kMaxValues)
            r.fail(where, "at most " + std::to_string(kMaxValues) + " values");
        else
            for (size_t i = 0; i < v.size(); ++i)
                one(v[i], where + "[" + std::to_string(i) + "]");
    } else {
        one(v, where);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

} // namespace

PlanConstraints readConstraints(JsonReader r)
{
    PlanConstraints c;
    if (!r.requireObject())
        return c;
    r.rejectUnknownKeys({"tensor_parallel", "expert_parallel", "pipeline_parallel", "data_parallel", "instances",
                         "batch", "operators", "description"});
    c.tensorParallel = readValues(r, "tensor_parallel");
    c.expertParallel = readValues(r, "expert_parallel");
    c.pipelineParallel = readValues(r, "pipeline_parallel");
    c.dataParallel = readValues(r, "data_parallel");
    c.instances = readValues(r, "instances");
    if (r.has("batch")) {
        JsonReader b = r.child("batch");
        if (b.requireObject()) {
            b.rejectUnknownKeys({"min", "max"});
            c.batchMin = b.integerOr("min", 1, 1, kMaxBatch);
            c.batchMax = b.integerOr("max", 0, 1, kMaxBatch);
            // (0: max was given but not read, its own error said so; nothing to compare.)
            if (c.batchMax > 0 && c.batchMax < c.batchMin)
                b.fail(r.path("batch"), "max (" + std::to_string(c.batchMax) + ") is below min ("
                                            + std::to_string(c.batchMin) + ")");
        }
    }
    if (r.has("operators")) {
        JsonReader ops = r.child("operators");
        if (ops.requireObject()) {
            for (auto it = ops.json().begin(); it != ops.json().end(); ++it) {
                const std::string where = ops.path(it.key().c_str());
                OpId id;
                if (!opFromName(it.key(), id)) {
                    std::string known;
                    for (int i = 0; i < kOpCount; ++i)
                        known += (i ? ", " : "") + std::string(opName(static_cast<OpId>(i)));
                    ops.fail(where, "unknown operator (known: " + known + ")");
                    continue;
                }
                std::vector<int> options;
                auto one = [&](const json& x, const std::string& at) {
                    const int o = x.is_string() ? optionFromName(id, x.get<std::string>()) : -1;
                    if (o >= 0) {
                        options.push_back(o);
                        return;
                    }
                    std::string known;
                    for (int k = 0; k < opInfo(id).optionCount; ++k)
                        known += (k ? ", " : "") + std::string(opOption(id, k).name);
                    ops.fail(at, (x.is_string() ? "unknown option \"" + displayText(x.get<std::string>()) + "\""
                                                : "must be an option name, got " + jsonTypeName(x))
                                     + " (options of " + opName(id) + ": " + known + ")");
                };
                if (it.value().is_array()) {
                    if (it.value().empty() || it.value().size() > size_t(kMaxOptions))
                        ops.fail(where, "must list between 1 and " + std::to_string(kMaxOptions) + " option names");
                    else
                        for (size_t i = 0; i < it.value().size(); ++i)
                            one(it.value()[i], where + "[" + std::to_string(i) + "]");
                } else {
                    one(it.value(), where);
                }
                std::sort(options.begin(), options.end());
                if (std::adjacent_find(options.begin(), options.end()) != options.end())
                    ops.fail(where, "names an option more than once");
                options.erase(std::unique(options.begin(), options.end()), options.end());
                if (!options.empty())
                    c.operatorOptions.push_back({static_cast<int>(id), options});
            }
            std::sort(c.operatorOptions.begin(), c.operatorOptions.end());
        }
    }
    return c;
}

ojson constraintsJson(const PlanConstraints& c)
{
    ojson j = ojson::object();
    auto put = [&](const char* key, const std::vector<int>& v) {
        if (!v.empty())
            j[key] = v;
    };
    put("tensor_parallel", c.tensorParallel);
    put("expert_parallel", c.expertParallel);
    put("pipeline_parallel", c.pipelineParallel);
    put("data_parallel", c.dataParallel);
    put("instances", c.instances);
    if (c.batchMin > 1 || c.batchMax > 0) {
        ojson b = ojson::object();
        if (c.batchMin > 1)
            b["min"] = c.batchMin;
        if (c.batchMax > 0)
            b["max"] = c.batchMax;
        j["batch"] = b;
    }
    if (!c.operatorOptions.empty()) {
        ojson ops = ojson::object();
        for (const auto& [op, options] : c.operatorOptions) {
            if (op < 0 || op >= kOpCount)
                continue;
            ojson names = ojson::array();
            for (int o : options)
                if (o >= 0 && o < opInfo(static_cast<OpId>(op)).optionCount)
                    names.push_back(opOption(static_cast<OpId>(op), o).name);
            ops[opName(static_cast<OpId>(op))] = names;
        }
        j["operators"] = ops;
    }
    return j;
}

} // namespace shardlab::io

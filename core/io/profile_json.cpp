#include "io/profile_json.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <mutex>
#include <vector>

#include "io/format_json.h"
#include "io/input_file.h"
#include "io/json_reader.h"
#include "io/presets.h"

namespace shardlab {

namespace {
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using io::JsonReader;

using io::formats::kProfileFormat;
constexpr double kBig = 1e12;

// One number of a profile: its JSON path, where it lives, its range and how it converts
// (microseconds in the file, seconds in the struct).
struct Field {
    std::string path;
    double* number = nullptr;
    int* integer = nullptr;
    bool* flag = nullptr;
    double lo = 0, hi = kBig;
    double scale = 1; // struct value = file value x scale
    bool optional = false; // absent: the struct keeps its default (a field added after files were written)
};

std::vector<Field> fields(KernelProfile& p)
{
    constexpr double us = 1e-6;
    std::vector<Field> f = {
        {"knobs.compute", &p.knobs.compute, nullptr, nullptr, 1e-3, 1},
        {"knobs.hbm", &p.knobs.hbm, nullptr, nullptr, 1e-3, 1},
        {"knobs.nvlink", &p.knobs.nvlink, nullptr, nullptr, 1e-3, 1},
        {"knobs.inter_node", &p.knobs.interNode, nullptr, nullptr, 1e-3, 1},
        {"knobs.kernel_overhead_us", &p.kernelOverheadUs, nullptr, nullptr, 0, 1e4},
        {"gemm.ref_compute", &p.gemm.refCompute, nullptr, nullptr, 1e-3, 1},
        {"gemm.ref_hbm", &p.gemm.refHbm, nullptr, nullptr, 1e-3, 1},
        {"gemm.stream_bf16", &p.gemm.streamBf16, nullptr, nullptr, 1e-3, 1},
        {"gemm.stream_fp8", &p.gemm.streamFp8, nullptr, nullptr, 1e-3, 1},
        {"gemm.compute_bf16", &p.gemm.computeBf16, nullptr, nullptr, 1e-3, 1},
        {"gemm.compute_fp8", &p.gemm.computeFp8, nullptr, nullptr, 1e-3, 1},
        {"gemm.half_size_elems", &p.gemm.halfSizeElems, nullptr, nullptr, 0, kBig},
        {"gemm.min_size_elems", &p.gemm.minSizeElems, nullptr, nullptr, 0, kBig},
        {"gemm.fp8_fixed_ratio", &p.gemm.fp8FixedRatio, nullptr, nullptr, 0, 1e3},
        {"gemm.grouped_compute_bf16", &p.gemm.groupedComputeBf16, nullptr, nullptr, 0, 1, 1, true},
        {"gemm.grouped_compute_fp8", &p.gemm.groupedComputeFp8, nullptr, nullptr, 0, 1, 1, true},
        {"gemm.grouped_half_size_bf16", &p.gemm.groupedHalfSizeBf16, nullptr, nullptr, 0, kBig, 1, true},
        {"gemm.grouped_half_size_fp8", &p.gemm.groupedHalfSizeFp8, nullptr, nullptr, 0, kBig, 1, true},
        {"gemm.grouped_stream_fp8", &p.gemm.groupedStreamFp8, nullptr, nullptr, 0, 1, 1, true},
        {"attention_decode.fixed_us", &p.attentionDecode.fixedS, nullptr, nullptr, 0, 1e6, us},
        {"attention_decode.stream", &p.attentionDecode.stream, nullptr, nullptr, 1e-3, 1},
        {"attention_decode.compute", &p.attentionDecode.compute, nullptr, nullptr, 1e-3, 1},
        {"attention_decode.per_query_head_ns", &p.attentionDecode.perQueryHeadS, nullptr, nullptr, 0, 1e6, 1e-9},
        {"deepep.launch_us", &p.deepEp.launchS, nullptr, nullptr, 0, 1e6, us},
        {"deepep.ll_node_latency_us", &p.deepEp.llNodeLatencyS, nullptr, nullptr, 0, 1e6, us},
        {"deepep.ll_nvlink", &p.deepEp.llNvlink, nullptr, nullptr, 1e-3, 10},
        {"deepep.ll_rdma", &p.deepEp.llRdma, nullptr, nullptr, 1e-3, 10},
        {"deepep.normal_nvlink", &p.deepEp.normalNvlink, nullptr, nullptr, 1e-3, 10},
        {"deepep.normal_rdma_cap", &p.deepEp.normalRdmaCap, nullptr, nullptr, 1e-3, 10},
        {"deepep.normal_rdma_per_peer", &p.deepEp.normalRdmaPerPeer, nullptr, nullptr, 1e-3, 10},
        {"nccl.ll128_launch_us", &p.nccl.launchS, nullptr, nullptr, 0, 1e6, us},
        {"nccl.ll128", &p.nccl.ll128, nullptr, nullptr, 1e-3, 10},
        {"nccl.simple_launch_us", &p.nccl.simpleLaunchS, nullptr, nullptr, 0, 1e6, us},
        {"nccl.simple", &p.nccl.simple, nullptr, nullptr, 1e-3, 10},
        {"nccl.nvls_launch_us", &p.nccl.nvlsLaunchS, nullptr, nullptr, 0, 1e6, us},
        {"nccl.nvls", &p.nccl.nvls, nullptr, nullptr, 1e-3, 10},
        {"nccl.a2a_launch_us", &p.nccl.a2aLaunchS, nullptr, nullptr, 0, 1e6, us},
        {"nccl.a2a_simple", &p.nccl.a2aSimple, nullptr, nullptr, 1e-3, 10},
    };
    for (auto [engine, ar] : {std::pair<std::string, CustomAllReduceParams*>{"trtllm", &p.trtllm}, {"vllm", &p.vllm}}) {
        const std::string at = "engines." + engine + ".custom_all_reduce.";
        f.push_back({at + "launch_us", &ar->launchS, nullptr, nullptr, 0, 1e6, us});
        f.push_back({at + "bandwidth", &ar->bandwidth, nullptr, nullptr, 1e-3, 10});
        f.push_back({at + "one_shot_max_bytes_2", &ar->oneShotMaxBytes2, nullptr, nullptr, 0, kBig});
        f.push_back({at + "one_shot_max_bytes_4", &ar->oneShotMaxBytes4, nullptr, nullptr, 0, kBig});
        f.push_back({at + "one_shot_max_bytes_8", &ar->oneShotMaxBytes8, nullptr, nullptr, 0, kBig});
        f.push_back({at + "two_shot_max_bytes", &ar->twoShotMaxBytes, nullptr, nullptr, 0, kBig});
        f.push_back({at + "max_ranks", nullptr, &ar->maxRanks, nullptr, 0, 1 << 20});
        f.push_back({at + "even_ranks_only", nullptr, nullptr, &ar->evenRanksOnly});
        f.push_back({at + "eager_copy_us", &ar->eagerCopyS, nullptr, nullptr, 0, 1e6, us});
        ar->present = true;
    }
    f.push_back({"engines.trtllm.step_overhead_us", &p.trtllmStepOverheadS, nullptr, nullptr, 0, 1e6, us, true});
    f.push_back({"engines.vllm.step_overhead_us", &p.vllmStepOverheadS, nullptr, nullptr, 0, 1e6, us, true});
    f.push_back({"engines.trtllm.kernel_overhead_scale", &p.trtllmKernelOverheadScale, nullptr, nullptr, 0.01, 10, 1, true});
    f.push_back({"engines.vllm.kernel_overhead_scale", &p.vllmKernelOverheadScale, nullptr, nullptr, 0.01, 10, 1, true});
    for (auto [at, w4] : {std::pair<std::string, WeightOnlyGroupedParams*>{"gemm.", &p.gemm.groupedW4a16},
                          {"engines.vllm.", &p.vllmGroupedW4a16}}) {
        f.push_back({at + "grouped_stream_w4a16", &w4->stream, nullptr, nullptr, 0, 1, 1, true});
        f.push_back({at + "grouped_compute_w4a16", &w4->compute, nullptr, nullptr, 0, 1, 1, true});
        f.push_back({at + "grouped_half_size_w4a16", &w4->halfSizeElems, nullptr, nullptr, 0, kBig, 1, true});
        f.push_back({at + "grouped_pad_hidden_mxfp4", nullptr, &w4->padHidden, nullptr, 0, 65536, 1, true});
        f.push_back({at + "grouped_pad_width_mxfp4", nullptr, &w4->padWidth, nullptr, 0, 65536, 1, true});
    }
    return f;
}

// The JSON value at a dotted path, or null.
const json* at(const json& doc, const std::string& path)
{
    const json* cur = &doc;
    size_t start = 0;
    while (start <= path.size()) {
        const size_t dot = path.find('.', start);
        const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (!cur->is_object() || !cur->contains(key))
            return nullptr;
        cur = &(*cur)[key];
        if (dot == std::string::npos)
            break;
        start = dot + 1;
    }
    return cur;
}

// Every key of the document's sections must be a known field (typos are errors).
void rejectUnknown(const json& doc, const std::vector<Field>& table, FieldErrors& errors)
{
    std::vector<std::string> known;
    for (const Field& f : table)
        known.emplace_back(f.path);
    auto isPrefix = [&](const std::string& p) {
        for (const std::string& k : known)
            if (k == p || (k.size() > p.size() && k.compare(0, p.size(), p) == 0 && k[p.size()] == '.'))
                return true;
        return false;
    };
    // Walk objects until a leaf field ({"value", "source"}) is reached.
    std::vector<std::pair<std::string, const json*>> todo;
    for (const char* section : {"knobs", "gemm", "attention_decode", "deepep", "nccl", "engines"})
        if (doc.contains(section))
            todo.push_back({section, &doc[section]});
    while (!todo.empty()) {
        auto [path, v] = todo.back();
        todo.pop_back();
        if (!isPrefix(path)) {
            errors.push_back({{}, path, "unknown field"});
            continue;
        }
        if (std::find(known.begin(), known.end(), path) != known.end() || !v->is_object())
            continue;
        for (auto it = v->begin(); it != v->end(); ++it)
            todo.push_back({path + "." + it.key(), &it.value()});
    }
}

void readInto(const json& doc, KernelProfile& p, FieldErrors& errors)
{
    std::vector<Field> table = fields(p);
    rejectUnknown(doc, table, errors);
    for (const Field& f : table) {
        const json* v = at(doc, f.path);
        if (!v && f.optional)
            continue;
        if (!v) {
            errors.push_back({{}, f.path, "missing required field ({\"value\": ..., \"source\": \"...\"})"});
            continue;
        }
        JsonReader r(*v, f.path, errors);
        if (!r.requireObject())
            continue;
        r.rejectUnknownKeys({"value", "source"});
        const std::string source = r.string("source");
        if (r.has("source") && source.empty())
            r.fail(r.path("source"), "must say where the number comes from");
        p.sources[f.path] = source;
        if (f.flag)
            *f.flag = r.boolean("value");
        else if (f.integer)
            *f.integer = r.integer("value", static_cast<long long>(f.lo), static_cast<long long>(f.hi));
        else
            *f.number = r.number("value", f.lo, f.hi) * f.scale;
    }
    // A weight-only 4-bit kernel is its streaming share and compute curve together: a partial
    // one would price that kernel with another's numbers.
    for (const std::string section : {"gemm.", "engines.vllm."}) {
        const char* const curve[] = {"grouped_stream_w4a16", "grouped_compute_w4a16", "grouped_half_size_w4a16"};
        int given = 0;
        for (const char* name : curve)
            given += at(doc, section + name) != nullptr;
        if (given == 0 || given == 3)
            continue;
        for (const char* name : curve)
            if (!at(doc, section + name))
                errors.push_back({{}, section + name,
                                  "missing: a weight-only 4-bit kernel gives grouped_stream_w4a16, "
                                  "grouped_compute_w4a16 and grouped_half_size_w4a16 together"});
    }
}
} // namespace

Parsed<KernelProfile> parseProfile(const std::string& text, const std::string& file)
{
    Parsed<KernelProfile> out;
    json doc;
    FieldError perr;
    if (!io::parseJsonText(text, doc, perr)) {
        perr.file = file;
        out.errors.push_back(perr);
        return out;
    }
    JsonReader r(doc, "", out.errors);
    if (r.requireObject()) {
        r.rejectUnknownKeys({"format", "version", "name", "description", "gpu", "knobs", "gemm", "attention_decode", "deepep", "nccl", "engines"});
        const std::string format = r.string("format");
        if (!format.empty() && format != kProfileFormat)
            r.fail("format", "expected \"" + std::string(kProfileFormat) + "\", got \"" + format + "\"");
        r.integer("version", 1, 1);
        out.value.name = r.string("name");
        if (r.has("name") && out.value.name.empty())
            r.fail("name", "must not be empty");
        out.value.description = r.stringOr("description", "");
        out.value.gpu = r.stringOr("gpu", "");
        readInto(doc, out.value, out.errors);
    }
    for (FieldError& e : out.errors) {
        if (e.file.empty())
            e.file = file;
        if (!e.where.empty() && e.where.front() == '.')
            e.where.erase(0, 1);
    }
    return out;
}

Parsed<KernelProfile> loadProfileFile(const std::string& path)
{
    return io::loadWith<KernelProfile>(path, parseProfile);
}

std::string profileToJson(const KernelProfile& in)
{
    KernelProfile p = in;
    ojson j;
    j["format"] = kProfileFormat;
    j["version"] = 1;
    j["name"] = p.name;
    if (!p.description.empty())
        j["description"] = p.description;
    if (!p.gpu.empty())
        j["gpu"] = p.gpu;
    for (const Field& f : fields(p)) {
        ojson leaf;
        if (f.flag)
            leaf["value"] = *f.flag;
        else if (f.integer)
            leaf["value"] = *f.integer;
        else
            leaf["value"] = *f.number / f.scale;
        const auto s = p.sources.find(f.path);
        leaf["source"] = s != p.sources.end() && !s->second.empty() ? s->second : "not given";
        ojson* cur = &j;
        std::string path = f.path;
        size_t start = 0;
        for (size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1)
            cur = &(*cur)[path.substr(start, dot - start)];
        (*cur)[path.substr(start)] = leaf;
    }
    return j.dump(2) + "\n";
}

Parsed<KernelProfile> profilePreset(const std::string& name)
{
    for (const PresetFile& f : profilePresetFiles())
        if (f.name == name)
            return parseProfile(f.text, "resources/profiles/" + name + ".json");
    Parsed<KernelProfile> r;
    r.errors.push_back({{}, {}, "unknown profile preset '" + name + "' (known: " + knownProfileNames() + ")"});
    return r;
}

std::string knownProfileNames() { return knownNames(profilePresetFiles()); }

namespace {
struct ShippedProfile {
    std::shared_ptr<const KernelProfile> profile;
    std::string json; // profileToJson of it, to tell an edited copy from the shipped one
};

// Every shipped profile, parsed once (thread-safe: a function-local static). A file that
// does not parse is left out; tst_profiles fails on it.
const std::map<std::string, ShippedProfile>& shippedProfiles()
{
    static const std::map<std::string, ShippedProfile> all = [] {
        std::map<std::string, ShippedProfile> m;
        for (const PresetFile& f : profilePresetFiles())
            if (auto p = profilePreset(f.name); p.ok())
                m[f.name] = {std::make_shared<const KernelProfile>(p.value), profileToJson(p.value)};
        return m;
    }();
    return all;
}
} // namespace

std::shared_ptr<const KernelProfile> shippedProfile(const std::string& name)
{
    const auto& all = shippedProfiles();
    const auto it = all.find(name);
    return it == all.end() ? nullptr : it->second.profile;
}

bool isShippedProfile(const KernelProfile& p)
{
    const auto& all = shippedProfiles();
    const auto it = all.find(p.name);
    return it != all.end() && it->second.json == profileToJson(p);
}

const KernelProfile& builtinProfile()
{
    // Parsed once. The shipped file is checked by tst_profiles (it parses, every number has a
    // source): a broken file fails that test rather than pricing plans with zeros.
    static const KernelProfile p = profilePreset("h100-sxm").value;
    return p;
}

const KernelProfile& profileOf(const ClusterSpec& c) { return c.profile ? *c.profile : builtinProfile(); }

void applyProfile(ClusterSpec& c, std::shared_ptr<const KernelProfile> p)
{
    if (!p)
        return;
    c.gpu.efficiency = p->knobs;
    c.gpu.kernelOverheadUs = p->kernelOverheadUs;
    c.profile = std::move(p);
}

namespace {
// A GPU name's model token: the first run of capital letters followed by digits ("H100",
// "B200", "GB200", "A100"); "" when the name has none.
std::string gpuModelToken(const std::string& name)
{
    for (size_t i = 0; i < name.size(); ++i) {
        if (!std::isupper(static_cast<unsigned char>(name[i])) || (i > 0 && std::isalnum(static_cast<unsigned char>(name[i - 1]))))
            continue;
        size_t j = i;
        while (j < name.size() && std::isupper(static_cast<unsigned char>(name[j])))
            ++j;
        size_t k = j;
        while (k < name.size() && std::isdigit(static_cast<unsigned char>(name[k])))
            ++k;
        if (k - j >= 2)
            return name.substr(i, k - i);
    }
    return {};
}
} // namespace

std::string profileGpuMismatch(const ClusterSpec& c)
{
    if (!c.profile)
        return {};
    const std::string mine = gpuModelToken(c.gpu.name), theirs = gpuModelToken(c.profile->gpu);
    if (mine.empty() || theirs.empty() || mine == theirs)
        return {};
    return "kernel profile '" + displayText(c.profile->name) + "' was measured on " + displayText(c.profile->gpu)
        + ", the cluster's GPU is " + displayText(c.gpu.name) + ": its kernel tables and knobs price this " + mine
        + " as the " + theirs + " they were measured on";
}

Parsed<KernelProfile> loadProfileArg(const std::string& v)
{
    if (namesAFile(v)) // a profile file without ".json" is a file too, as a scenario's is
        return loadProfileFile(v);
    return profilePreset(v);
}

std::shared_ptr<const KernelProfile> readScenarioProfile(const std::string& jsonText, const std::string& where,
                                                         FieldErrors& errors)
{
    json v;
    FieldError perr;
    if (!io::parseJsonText(jsonText, v, perr)) {
        errors.push_back({{}, where, perr.reason});
        return nullptr;
    }
    Parsed<KernelProfile> p;
    if (v.is_string())
        p = profilePreset(v.get<std::string>());
    else if (v.is_object())
        p = parseProfile(jsonText, "");
    else {
        errors.push_back({{}, where, "must be a profile preset name or a profile object, got " + io::jsonTypeName(v)});
        return nullptr;
    }
    if (!p.ok()) {
        for (FieldError e : p.errors) {
            e.file.clear();
            e.where = e.where.empty() ? where : where + "." + e.where;
            errors.push_back(std::move(e));
        }
        return nullptr;
    }
    return std::make_shared<const KernelProfile>(std::move(p.value));
}

std::string scenarioProfileJson(const ClusterSpec& c)
{
    if (!c.profile)
        return {};
    KernelProfile p = *c.profile;
    const Efficiency& e = c.gpu.efficiency;
    const bool edited = p.knobs.compute != e.compute || p.knobs.hbm != e.hbm || p.knobs.nvlink != e.nvlink
        || p.knobs.interNode != e.interNode || p.kernelOverheadUs != c.gpu.kernelOverheadUs;
    if (!edited) {
        if (isShippedProfile(p))
            return json(p.name).dump();
    } else {
        p.knobs = e;
        p.kernelOverheadUs = c.gpu.kernelOverheadUs;
        for (const char* k : {"knobs.compute", "knobs.hbm", "knobs.nvlink", "knobs.inter_node", "knobs.kernel_overhead_us"})
            p.sources[k] = "set in the scenario's cluster (profile " + p.name + ")";
    }
    return profileToJson(p);
}

} // namespace shardlab

#include "io/presets.h"

#include "io/input_file.h"

#include "presets_data.h"

namespace shardlab {

namespace {
std::vector<PresetFile> collect(const embedded::File* files, int count)
{
    std::vector<PresetFile> out;
    for (int i = 0; i < count; ++i)
        out.push_back({files[i].name, files[i].text});
    return out;
}

const PresetFile* find(const std::vector<PresetFile>& files, const std::string& name)
{
    for (const PresetFile& f : files)
        if (f.name == name)
            return &f;
    return nullptr;
}

template <typename T>
Parsed<T> unknown(const char* kind, const std::string& name, const std::vector<PresetFile>& files)
{
    Parsed<T> r;
    r.errors.push_back({{}, {}, std::string("unknown ") + kind + " preset '" + name + "' (known: "
                                    + knownNames(files) + ")"});
    return r;
}
} // namespace

const std::vector<PresetFile>& modelPresetFiles()
{
    static const std::vector<PresetFile> f = collect(embedded::kModels, embedded::kModelCount);
    return f;
}
const std::vector<PresetFile>& clusterPresetFiles()
{
    static const std::vector<PresetFile> f = collect(embedded::kClusters, embedded::kClusterCount);
    return f;
}
const std::vector<PresetFile>& scenarioPresetFiles()
{
    static const std::vector<PresetFile> f = collect(embedded::kScenarios, embedded::kScenarioCount);
    return f;
}

const std::vector<PresetFile>& profilePresetFiles()
{
    static const std::vector<PresetFile> f = collect(embedded::kProfiles, embedded::kProfileCount);
    return f;
}

std::string knownNames(const std::vector<PresetFile>& files)
{
    std::string out;
    for (const PresetFile& f : files)
        out += (out.empty() ? "" : ", ") + f.name;
    return out;
}

Parsed<ModelSpec> modelPreset(const std::string& name)
{
    const PresetFile* f = find(modelPresetFiles(), name);
    if (!f)
        return unknown<ModelSpec>("model", name, modelPresetFiles());
    return parseModel(f->text, "resources/models/" + name + ".json");
}

Parsed<ClusterSpec> clusterPreset(const std::string& name)
{
    const PresetFile* f = find(clusterPresetFiles(), name);
    if (!f)
        return unknown<ClusterSpec>("cluster", name, clusterPresetFiles());
    return parseCluster(f->text, "resources/clusters/" + name + ".json");
}

Parsed<Scenario> scenarioPreset(const std::string& name)
{
    const PresetFile* f = find(scenarioPresetFiles(), name);
    if (!f)
        return unknown<Scenario>("scenario", name, scenarioPresetFiles());
    return parseScenario(f->text, "resources/scenarios/" + name + ".json");
}

ScenarioArg classifyScenarioArg(const std::string& arg)
{
    if (namesAFile(arg))
        return ScenarioArg::File;
    return find(scenarioPresetFiles(), arg) ? ScenarioArg::Preset : ScenarioArg::Unknown;
}

std::string shownScenarioName(const Scenario& s)
{
    if (!find(scenarioPresetFiles(), s.name))
        return s.name;
    const Parsed<Scenario> shipped = scenarioPreset(s.name);
    return shipped.ok() && !scenarioDifferences(shipped.value, s).empty() ? s.name + " (edited)" : s.name;
}

std::string describeCluster(const ClusterSpec& c)
{
    return c.gpu.name + " x " + std::to_string(c.totalGpus()) + " (" + std::to_string(c.nodes)
        + (c.nodes == 1 ? " node of " : " nodes of ") + std::to_string(c.gpusPerNode) + ")";
}

std::string followClusterName(const ClusterSpec& before, const ClusterSpec& after)
{
    // The shipped clusters by the name they carry, parsed once.
    static const std::vector<ClusterSpec> shipped = [] {
        std::vector<ClusterSpec> out;
        for (const PresetFile& f : clusterPresetFiles())
            if (Parsed<ClusterSpec> p = parseCluster(f.text, f.name); p.ok())
                out.push_back(p.value);
        return out;
    }();
    auto shippedNamed = [&](const std::string& name) -> const ClusterSpec* {
        for (const ClusterSpec& c : shipped)
            if (c.name == name)
                return &c;
        return nullptr;
    };
    const std::string described = describeCluster(before);
    const bool generated = shippedNamed(before.name) || before.name == described || before.name == described + " (edited)";
    if (!generated || after.name != before.name)
        return after.name;
    ClusterSpec unnamed = after;
    for (const ClusterSpec& c : shipped) {
        unnamed.name = c.name;
        if (clusterToJson(unnamed) == clusterToJson(c))
            return c.name; // back on a shipped cluster
    }
    const std::string now = describeCluster(after);
    return shippedNamed(now) ? now + " (edited)" : now;
}

} // namespace shardlab

// Presets shipped in resources/ (models, clusters, benchmark scenarios), compiled into the
// core library so the CLI and GUI work from any directory.
#pragma once

#include <string>
#include <vector>

#include "io/scenario_json.h"

namespace shardlab {

struct PresetFile {
    std::string name; // file stem, e.g. "llama3-70b"
    std::string text; // the JSON as shipped
};

const std::vector<PresetFile>& modelPresetFiles();
const std::vector<PresetFile>& clusterPresetFiles();
const std::vector<PresetFile>& scenarioPresetFiles();
const std::vector<PresetFile>& profilePresetFiles(); // kernel profiles (io/profile_json.h)

// Unknown names give an error that lists the known ones.
Parsed<ModelSpec> modelPreset(const std::string& name);
Parsed<ClusterSpec> clusterPreset(const std::string& name);
Parsed<Scenario> scenarioPreset(const std::string& name);
// What a `--scenario` argument names. Something that exists or is spelled like a path ("-",
// a '/', a ".json" ending) is a file, so that its error names the file ("cannot open: no such
// file") rather than the presets; otherwise a shipped scenario's name, or nothing known.
enum class ScenarioArg { File, Preset, Unknown };
ScenarioArg classifyScenarioArg(const std::string& arg);

std::string knownNames(const std::vector<PresetFile>& files);

// The name a scenario is shown, saved as and exported under: its own, with " (edited)" when
// it is a shipped scenario's name and the scenario no longer matches that preset, so an
// edited preset never travels under the shipped name (`--scenario NAME` would pick the
// shipped one and disagree).
std::string shownScenarioName(const Scenario& s);
// What a cluster's shape says: "H100 SXM5 80GB x 16 (2 nodes of 8)".
std::string describeCluster(const ClusterSpec& c);
// The name `after` carries once a cluster edit turned `before` into it. A name that only
// described `before` (a shipped cluster's name, or describeCluster of it) follows the edit:
// the matching preset's name, else the new shape's description (" (edited)" added when that
// is a shipped cluster's name it no longer matches). A name the user chose is kept.
std::string followClusterName(const ClusterSpec& before, const ClusterSpec& after);

} // namespace shardlab

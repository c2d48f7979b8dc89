// Kernel profiles as data (docs/profiles.md): reading and writing "shardlab-profile" files,
// the shipped presets (resources/profiles/*.json) and the built-in profile.
#pragma once

#include <memory>
#include <string>

#include "io/scenario_json.h"
#include "model/profile.h"

namespace shardlab {

// Every number is {"value": x, "source": "..."}: a value without its source is refused.
Parsed<KernelProfile> parseProfile(const std::string& text, const std::string& file);
Parsed<KernelProfile> loadProfileFile(const std::string& path);
// The profile as a "shardlab-profile" document (sources kept: a profile read from a file
// writes back what it read; fitted knobs carry the source given by whoever set them).
std::string profileToJson(const KernelProfile& p);

// A shipped profile by name ("h100-sxm"); unknown names list the known ones.
Parsed<KernelProfile> profilePreset(const std::string& name);
std::string knownProfileNames();
// A shipped profile by name, parsed once and shared by every cluster naming it; null when no
// profile of that name is shipped.
std::shared_ptr<const KernelProfile> shippedProfile(const std::string& name);
// Whether `p` is a shipped profile exactly as shipped (its name, numbers and sources), so a
// file may name it instead of writing it out.
bool isShippedProfile(const KernelProfile& p);
// The profile every cluster without one uses: resources/profiles/h100-sxm.json, parsed once.
const KernelProfile& builtinProfile();
// The cluster's profile, or the built-in one.
const KernelProfile& profileOf(const ClusterSpec& c);

// Names `p` as the cluster's profile and applies its scalar knobs to the cluster's GPU
// (efficiency, kernel overhead): what a scenario's "profile" field and the window's
// "Load profile" do.
void applyProfile(ClusterSpec& c, std::shared_ptr<const KernelProfile> p);

// A warning when the cluster's profile was measured on another GPU model than the cluster's
// (their names' first model token differ: "H200 SXM 141GB" against "H100 SXM5 80GB"): its
// kernel tables and knobs then price this GPU as that one. Empty when they agree, or when
// either name carries no model token.
std::string profileGpuMismatch(const ClusterSpec& c);

// A profile given by a preset name or a file path ("-" or anything with '/' or ".json" is a
// file): the CLI's --profile and the window's "Load profile".
Parsed<KernelProfile> loadProfileArg(const std::string& nameOrPath);

// A scenario's "profile" field, as JSON text: a preset name (a string) or an inline profile
// object. Errors are reported at `where` (e.g. "profile.gemm.stream_fp8").
std::shared_ptr<const KernelProfile> readScenarioProfile(const std::string& jsonText, const std::string& where,
                                                         FieldErrors& errors);
// What a scenario file says of its cluster's profile: "" (none), a quoted preset name, or an
// inline object whose knobs are the cluster's own (so a knob edited after loading is kept).
std::string scenarioProfileJson(const ClusterSpec& c);

} // namespace shardlab

// What the JSON file formats share (io/scenario_json.cpp, io/plan_json.cpp): every format
// tag, the format/version check, parsing with the file named in every error, and the
// scenario object a plan file embeds.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "io/json_reader.h"
#include "io/scenario_json.h"

namespace shardlab::io {

// The "format" tag of each ShardLab file, and the kind of file it names (detectFileKind).
namespace formats {
inline constexpr const char* kScenarioFormat = "shardlab-scenario";
inline constexpr const char* kPlanFormat = "shardlab-plan";
inline constexpr const char* kModelFormat = "shardlab-model";
inline constexpr const char* kClusterFormat = "shardlab-cluster";
inline constexpr const char* kProfileFormat = "shardlab-profile";           // io/profile_json.h
inline constexpr const char* kMeasurementsFormat = "shardlab-measurements"; // report/measurements.h

struct FileFormat {
    const char* tag;
    FileKind kind;
};
inline constexpr FileFormat kFileFormats[] = {
    {kScenarioFormat, FileKind::Scenario}, {kPlanFormat, FileKind::Plan},
    {kModelFormat, FileKind::Model},       {kClusterFormat, FileKind::Cluster},
    {kProfileFormat, FileKind::Profile},   {kMeasurementsFormat, FileKind::Measurements}};
} // namespace formats

// Names `file` in every error that does not name one yet.
void withFile(FieldErrors& errors, const std::string& file);

// "format" must be `expected` when present (and present when `required`); "version" at most
// kFormatVersion. False when the file names another format: a file of another kind, whose
// fields say nothing more, so the caller reads no further and that is the one error.
bool checkFormat(JsonReader& r, const char* expected, bool required);

// Parses `text` as JSON and runs body(doc, out) on it; a syntax error or the body's errors
// name `file`.
template <typename T, typename Fn>
Parsed<T> parseWith(const std::string& text, const std::string& file, Fn&& body)
{
    Parsed<T> out;
    nlohmann::json doc;
    FieldError perr;
    if (!parseJsonText(text, doc, perr)) {
        perr.file = file;
        out.errors.push_back(perr);
        return out;
    }
    body(doc, out);
    withFile(out.errors, file);
    return out;
}

// Reads the file at `path` and parses it with parse(text, label) (label: the name errors
// give the file); a file that cannot be read is the one error.
template <typename T>
Parsed<T> loadWith(const std::string& path, Parsed<T> (*parse)(const std::string&, const std::string&))
{
    auto text = readTextFile(path);
    if (!text.ok()) {
        Parsed<T> r;
        r.errors.push_back(text.error());
        return r;
    }
    return parse(text.value(), inputLabel(path));
}

// The scenario as its file's object (format tag excluded): scenario files and the scenario
// a plan file embeds.
nlohmann::ordered_json scenarioJson(const Scenario& s);

} // namespace shardlab::io

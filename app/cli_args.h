// Strict command-line parsing for shardlab-cli: every flag is declared per command, an
// unknown or malformed flag is an error that names it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shardlab::cli {

struct OptionSpec {
    std::string name;      // "--scenario"
    std::string valueName; // empty for a boolean flag
    std::string help;
};

struct CommandSpec {
    std::string name;
    std::string usage;   // after "shardlab-cli <name>"
    std::string summary; // one line
    std::string details; // paragraph for --help
    std::vector<OptionSpec> options;
    int minPositional = 0;
    int maxPositional = 0;
};

struct Args {
    std::vector<std::string> positional;
    std::map<std::string, std::string> values;
    std::vector<std::string> flags;

    bool flag(const std::string& name) const;
    bool has(const std::string& name) const { return values.count(name) > 0; }
    std::string value(const std::string& name, const std::string& fallback = {}) const;
};

// Returns false and sets error ("--budget: expects a value") on bad input.
bool parseArgs(const CommandSpec& spec, const std::vector<std::string>& argv, Args& out, std::string& error);

// Integer/number flag values with range checks; error names the flag.
// False, with `error` ("FLAG: PATH is the input IN, ..."), when writing `path` would replace
// a file the command reads (a positional argument or a flag's value, by any path to it).
bool outputApartFromInputs(const Args& a, const std::string& flag, const std::string& path, std::string& error);
// The same against a list of files the command reads, such as the files a measurements
// file names: shardlab::outputApartFrom (io/output_apart.h).
bool intValue(const Args& a, const std::string& flag, long long lo, long long hi, long long& out, std::string& error);
bool numberValue(const Args& a, const std::string& flag, double lo, double hi, double& out, std::string& error);
// A name a flag gives that goes into text, JSON or a script (--model, --name): why it is
// refused ("FLAG: must be UTF-8 text without control characters (got '...')", or the rule
// every reader of a name applies), nothing when it is acceptable.
std::optional<std::string> nameFlagProblem(const std::string& flag, const std::string& value);

std::string helpText(const CommandSpec& spec);

} // namespace shardlab::cli

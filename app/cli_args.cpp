#include "cli_args.h"

#include "model/error.h"
#include "model/names.h"
#include "model/printf_text.h"
#include "io/output_apart.h"

#include <cerrno>
#include <optional>
#include <cmath>
#include <cstdlib>

namespace shardlab::cli {

namespace {

// An output file (--out, --out-cluster) never replaces a file the same command reads (a
// positional argument or another flag's value naming the same existing file), nor the
// other output, nor a file ShardLab did not write (io/output_apart.h). It is never "-": that means standard input wherever a
// file is read, so as an output it would be taken for standard output, where the report
// goes, not for a file of that name.
// What a command's output flag writes (none for a directory, gen-scenarios' --out): the
// kind of ShardLab file it may replace.
std::optional<OutputKind> outputKind(const std::string& command, const std::string& flag)
{
    if (command == "search" || command == "megatron")
        return OutputKind::Plan;
    if (command == "import-hf")
        return OutputKind::Model;
    if (command == "calibrate")
        return flag == "--out-cluster" ? OutputKind::Cluster : OutputKind::Profile;
    if (command == "export")
        return OutputKind::LaunchScript;
    return std::nullopt;
}

bool outputsApart(const std::string& command, const Args& a, std::string& error)
{
    for (const char* o : {"--out", "--out-cluster"}) {
        if (!a.has(o))
            continue;
        const std::string path = a.value(o);
        if (path == "-") {
            error = std::string(o) + ": - names no file here (an output is always a file; standard output carries "
                                     "the command's report, or its --json); write ./- for a file named '-'";
            return false;
        }
        for (const char* other : {"--out", "--out-cluster"})
            if (std::string(other) != o && a.has(other) && (a.value(other) == path || sameExistingFile(a.value(other), path))) {
                error = std::string(o) + ": names the same file as " + other + "; give each output its own file";
                return false;
            }
        if (!outputApartFromInputs(a, o, path, error))
            return false;
        if (const std::optional<OutputKind> kind = outputKind(command, o); kind && !replaceableOutput(o, path, *kind, error))
            return false;
    }
    return true;
}

} // namespace

bool outputApartFromInputs(const Args& a, const std::string& flag, const std::string& path, std::string& error)
{
    std::vector<std::string> inputs = a.positional;
    for (const auto& [name, value] : a.values)
        if (name != "--out" && name != "--out-cluster")
            inputs.push_back(value);
    return outputApartFrom(inputs, flag, path, error);
}

bool Args::flag(const std::string& name) const
{
    for (const std::string& f : flags)
        if (f == name)
            return true;
    return false;
}

std::string Args::value(const std::string& name, const std::string& fallback) const
{
    auto it = values.find(name);
    return it == values.end() ? fallback : it->second;
}

bool parseArgs(const CommandSpec& spec, const std::vector<std::string>& argv, Args& out, std::string& error)
{
    for (size_t i = 0; i < argv.size(); ++i) {
        std::string a = argv[i];
        if (a.size() > 1 && a[0] == '-' && a != "-") {
            std::string value;
            bool inlineValue = false;
            const auto eq = a.find('=');
            if (eq != std::string::npos) {
                value = a.substr(eq + 1);
                a = a.substr(0, eq);
                inlineValue = true;
            }
            const OptionSpec* opt = nullptr;
            for (const OptionSpec& o : spec.options)
                if (o.name == a)
                    opt = &o;
            if (!opt) {
                error = a + ": unknown option for '" + spec.name + "' (see shardlab-cli " + spec.name + " --help)";
                return false;
            }
            if (opt->valueName.empty()) {
                if (inlineValue) {
                    error = a + ": takes no value";
                    return false;
                }
                out.flags.push_back(a);
                continue;
            }
            if (!inlineValue) {
                if (i + 1 >= argv.size()) {
                    error = a + ": expects a value (" + opt->valueName + ")";
                    return false;
                }
                value = argv[++i];
                // "--out --json": the option the user meant to give, not a file name. A value
                // that begins with "--" goes with '=' (--name=--x).
                if (value.size() > 2 && value.compare(0, 2, "--") == 0) {
                    error = a + ": expects a value (" + opt->valueName + "), got the option " + value
                        + " (write " + a + "=" + value + " for a value that begins with --)";
                    return false;
                }
            }
            if (out.values.count(a)) {
                error = a + ": given more than once";
                return false;
            }
            out.values[a] = value;
        } else {
            out.positional.push_back(a);
        }
    }
    // stdout carries one document: a table, --json or --csv, never two at once.
    if (out.flag("--json") && out.flag("--csv")) {
        error = "--json, --csv: choose one output format";
        return false;
    }
    if (!outputsApart(spec.name, out, error))
        return false;
    const int n = static_cast<int>(out.positional.size());
    if (n < spec.minPositional) {
        error = "missing argument: usage: shardlab-cli " + spec.name + " " + spec.usage;
        return false;
    }
    if (n > spec.maxPositional) {
        error = "unexpected argument '" + out.positional[spec.maxPositional] + "': usage: shardlab-cli " + spec.name
            + " " + spec.usage;
        return false;
    }
    return true;
}

bool intValue(const Args& a, const std::string& flag, long long lo, long long hi, long long& out, std::string& error)
{
    if (!a.has(flag))
        return true;
    const std::string s = a.value(flag);
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0') {
        error = flag + ": expects an integer, got '" + s + "'";
        return false;
    }
    // An integer too large for any count is out of range like any other, not malformed.
    if (errno == ERANGE || v < lo || v > hi) {
        error = flag + ": must be between " + std::to_string(lo) + " and " + std::to_string(hi) + " (got " + s + ")";
        return false;
    }
    out = v;
    return true;
}

std::optional<std::string> nameFlagProblem(const std::string& flag, const std::string& value)
{
    if (displayText(value) != value)
        return flag + ": must be UTF-8 text without control or bidirectional formatting characters (got '"
            + excerpt(displayText(value)) + "')";
    if (auto why = nameProblem(value))
        return flag + ": " + *why;
    return std::nullopt;
}

bool numberValue(const Args& a, const std::string& flag, double lo, double hi, double& out, std::string& error)
{
    if (!a.has(flag))
        return true;
    const std::string s = a.value(flag);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    // strtod also reads hexadecimal ("0x10" is 16): a decimal number is what is asked for.
    const bool hex = s.find_first_of("xX") != std::string::npos;
    if (s.empty() || *end != '\0' || !std::isfinite(v) || hex) {
        error = flag + ": expects a number, got '" + s + "'";
        return false;
    }
    if (v < lo || v > hi) {
        // Bounds as the user would write them (1e-09, 0.05, 1e+09), not std::to_string's
        // six decimals, which show a tiny positive bound as 0.000000.
        error = flag + ": must be between " + printfText("%g", lo) + " and " + printfText("%g", hi) + " (got " + s + ")";
        return false;
    }
    out = v;
    return true;
}

std::string helpText(const CommandSpec& spec)
{
    std::string h = "usage: shardlab-cli " + spec.name + " " + spec.usage + "\n\n" + spec.summary + "\n";
    if (!spec.details.empty())
        h += "\n" + spec.details + "\n";
    h += "\noptions:\n";
    for (const OptionSpec& o : spec.options) {
        std::string left = "  " + o.name + (o.valueName.empty() ? "" : " " + o.valueName);
        if (left.size() < 26)
            left.resize(26, ' ');
        else
            left += "  ";
        h += left + o.help + "\n";
    }
    return h;
}

} // namespace shardlab::cli

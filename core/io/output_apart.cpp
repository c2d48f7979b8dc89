#include "io/output_apart.h"

#include "io/format_json.h"
#include "model/error.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <system_error>

#include <sys/stat.h>

namespace shardlab {

namespace {

// Whether `path` is the file standard input reads (by device and inode).
bool isStandardInput(const std::string& path)
{
    struct stat in {}, out {};
    return ::fstat(0, &in) == 0 && ::stat(path.c_str(), &out) == 0 && S_ISREG(in.st_mode) && in.st_dev == out.st_dev
        && in.st_ino == out.st_ino;
}

} // namespace

bool sameExistingFile(const std::string& x, const std::string& y)
{
    std::error_code ec;
    return std::filesystem::exists(x, ec) && std::filesystem::exists(y, ec) && std::filesystem::equivalent(x, y, ec);
}

bool outputApartFrom(const std::vector<std::string>& inputs, const std::string& flag, const std::string& path,
                     std::string& error)
{
    for (const std::string& in : inputs) {
        // "-" reads standard input, which may be the very file (`--scenario - < s.json`).
        const bool same = in == "-" ? isStandardInput(path) : sameExistingFile(in, path);
        if (same) {
            error = flag + ": " + displayText(path) + " is the input "
                + (in == "-" ? "read from standard input" : displayText(in))
                + ", which writing would replace; write the output elsewhere";
            return false;
        }
    }
    return true;
}

namespace {

const char* kindName(OutputKind kind)
{
    switch (kind) {
    case OutputKind::Plan: return "plan";
    case OutputKind::Model: return "model";
    case OutputKind::Profile: return "profile";
    case OutputKind::Cluster: return "cluster";
    case OutputKind::LaunchScript: return "launch script";
    case OutputKind::OptionsFile: return "engine options file";
    }
    return "";
}

// Whether the first bytes of a file carry the mark of ShardLab's output of `kind`.
bool carriesMark(const std::string& head, OutputKind kind)
{
    const char* format = nullptr;
    switch (kind) {
    case OutputKind::LaunchScript: return head.find("written by ShardLab") != std::string::npos;
    case OutputKind::OptionsFile: return head.find("from ShardLab") != std::string::npos;
    case OutputKind::Plan: format = io::formats::kPlanFormat; break;
    case OutputKind::Model: format = io::formats::kModelFormat; break;
    case OutputKind::Profile: format = io::formats::kProfileFormat; break;
    case OutputKind::Cluster: format = io::formats::kClusterFormat; break;
    }
    return std::regex_search(head, std::regex(std::string(R"re("format"\s*:\s*")re") + format + "\""));
}

} // namespace

bool replaceableOutput(const std::string& flag, const std::string& path, OutputKind kind, std::string& error)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return true;
    std::ifstream in(path, std::ios::binary);
    std::string head(4096, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
    if (carriesMark(head, kind))
        return true;
    error = flag + ": " + displayText(path) + " exists and is not a " + kindName(kind)
        + " file ShardLab wrote, which writing would replace; write the output elsewhere, or remove the file first";
    return false;
}

} // namespace shardlab

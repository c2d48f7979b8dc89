#include "io/output_apart.h"

#include "model/error.h"

#include <filesystem>
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

} // namespace shardlab

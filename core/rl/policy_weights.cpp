// The policy's weights file (policy_net.h, docs/ppo.md "The weights file"): a header, the
// metadata JSON, and each parameter by name. Plain C++: the network hands over and takes
// its parameters as named float vectors (Policy::parameters, Policy::assign).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "rl/policy_net.h"

namespace shardlab::rl::net {

namespace {
constexpr const char* kMagic = "SHARDLAB-PPO-WEIGHTS 1\n";
} // namespace

std::string saveWeights(const Policy& net, const std::string& metadataJson)
{
    std::ostringstream out(std::ios::binary);
    out << kMagic;
    auto put32 = [&](std::uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
    put32(static_cast<std::uint32_t>(metadataJson.size()));
    out << metadataJson;
    const std::vector<NamedValues> params = net.parameters();
    put32(static_cast<std::uint32_t>(params.size()));
    for (const NamedValues& p : params) {
        put32(static_cast<std::uint32_t>(p.name.size()));
        out << p.name;
        put32(static_cast<std::uint32_t>(p.values.size()));
        out.write(reinterpret_cast<const char*>(p.values.data()), static_cast<std::streamsize>(p.values.size() * 4));
    }
    return out.str();
}

namespace {

struct Record {
    std::string name;
    std::vector<float> values;
};

// Every parameter record of a weights file, the header skipped; false with `error` when
// the file is not one or is cut short.
bool readRecords(const std::string& bytes, std::vector<Record>& out, std::string& error)
{
    size_t at = 0;
    auto need = [&](size_t n) { return at + n <= bytes.size(); };
    auto get32 = [&](std::uint32_t& v) {
        if (!need(4))
            return false;
        std::memcpy(&v, bytes.data() + at, 4);
        at += 4;
        return true;
    };
    const size_t magic = std::strlen(kMagic);
    if (bytes.compare(0, magic, kMagic) != 0) {
        error = "not a ShardLab policy weights file (bad header)";
        return false;
    }
    at = magic;
    std::uint32_t metaLen = 0, count = 0;
    if (!get32(metaLen) || !need(metaLen)) {
        error = "truncated header";
        return false;
    }
    at += metaLen;
    if (!get32(count)) {
        error = "truncated parameter table";
        return false;
    }
    for (std::uint32_t i = 0; i < count; ++i) {
        std::uint32_t nameLen = 0, numel = 0;
        if (!get32(nameLen) || !need(nameLen)) {
            error = "truncated parameter name";
            return false;
        }
        Record r{bytes.substr(at, nameLen), {}};
        at += nameLen;
        if (!get32(numel) || !need(static_cast<size_t>(numel) * 4)) {
            error = "truncated values of " + r.name;
            return false;
        }
        r.values.resize(numel);
        std::memcpy(r.values.data(), bytes.data() + at, static_cast<size_t>(numel) * 4);
        at += static_cast<size_t>(numel) * 4;
        out.push_back(std::move(r));
    }
    return true;
}

std::string listNames(const char* what, const std::vector<std::string>& names)
{
    std::string s;
    for (size_t i = 0; i < names.size(); ++i)
        s += (i ? ", " : " ") + names[i];
    return names.empty() ? std::string() : what + s;
}

} // namespace

bool loadWeights(Policy& net, const std::string& bytes, std::string& error, std::string* notes)
{
    std::vector<Record> records;
    if (!readRecords(bytes, records, error))
        return false;
    const std::vector<std::pair<std::string, size_t>> params = net.parameterSizes();
    auto find = [&](const std::string& name) -> const size_t* {
        for (const auto& [n, size] : params)
            if (n == name)
                return &size;
        return nullptr;
    };
    // Check everything first: a damaged file changes nothing.
    std::vector<std::string> ignored, seen;
    for (const Record& r : records) {
        const size_t* size = find(r.name);
        if (!size) {
            ignored.push_back(r.name);
            continue;
        }
        if (*size != r.values.size()) {
            error = "parameter " + r.name + " has " + std::to_string(r.values.size()) + " values, the network's "
                + std::to_string(*size);
            return false;
        }
        if (!std::all_of(r.values.begin(), r.values.end(), [](float x) { return std::isfinite(x); })) {
            error = "parameter " + r.name + " holds a value that is not finite (NaN or inf): the weights are damaged";
            return false;
        }
        seen.push_back(r.name);
    }
    for (const Record& r : records)
        net.assign(r.name, r.values);
    std::vector<std::string> fresh;
    for (const auto& p : params)
        if (std::find(seen.begin(), seen.end(), p.first) == seen.end())
            fresh.push_back(p.first);
    if (notes) {
        const std::string a = listNames("kept their initial values (not in the file):", fresh);
        const std::string b = listNames("ignored (not in this network):", ignored);
        *notes = a + (a.empty() || b.empty() ? "" : "; ") + b;
    }
    return true;
}

} // namespace shardlab::rl::net

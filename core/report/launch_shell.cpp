// Shell words for launch scripts (core/report/launch_engines.h): literals no shell expands,
// ShardLab's own expansions ($HEAD_IP, $((NODE_RANK * N))) and the variables they read, and
// a command rendered one flag per line.
#include "report/launch_engines.h"

#include <algorithm>
#include <string>
#include <vector>

namespace shardlab::launch {

const char* shellVarName(ShellVar v)
{
    switch (v) {
    case ShellVar::HeadIp: return "HEAD_IP";
    case ShellVar::PrefillHeadIp: return "PREFILL_HEAD_IP";
    case ShellVar::DecodeHeadIp: return "DECODE_HEAD_IP";
    case ShellVar::NodeRank: return "NODE_RANK";
    case ShellVar::IbDevice: return "IB_DEVICE";
    case ShellVar::PrefillHeadIps: return "PREFILL_HEAD_IPS";
    case ShellVar::DecodeHeadIps: return "DECODE_HEAD_IPS";
    }
    return "";
}

Expansion Expansion::var(ShellVar v) { return Expansion(std::string("$") + shellVarName(v), varBit(v)); }
Expansion Expansion::hostPort(ShellVar host, int port) { return Expansion(var(host).text() + ":" + num(port), varBit(host)); }
Expansion Expansion::url(ShellVar host, int port) { return Expansion("http://" + hostPort(host, port).text(), varBit(host)); }
Expansion Expansion::nodeRankTimes(long long n)
{
    return Expansion(std::string("$((") + shellVarName(ShellVar::NodeRank) + " * " + num(n) + "))",
                     varBit(ShellVar::NodeRank));
}

constexpr ShellVar kShellVars[] = {ShellVar::HeadIp,   ShellVar::PrefillHeadIp, ShellVar::DecodeHeadIp,
                                   ShellVar::NodeRank, ShellVar::IbDevice,      ShellVar::PrefillHeadIps,
                                   ShellVar::DecodeHeadIps};

std::vector<std::string> varNames(unsigned reads)
{
    std::vector<std::string> out;
    for (ShellVar v : kShellVars)
        if (reads & varBit(v))
            out.push_back(shellVarName(v));
    return out;
}

unsigned varsNamed(const std::vector<std::string>& names)
{
    unsigned out = 0;
    for (ShellVar v : kShellVars)
        if (std::find(names.begin(), names.end(), shellVarName(v)) != names.end())
            out |= varBit(v);
    return out;
}

std::string shellWord(const Expansion& e) { return "\"" + e.text() + "\""; }

std::string withEnv(const EngineLayout& L, const std::string& program)
{
    std::string out;
    for (const auto& [name, value] : L.env)
        out += name + "=" + shellWord(value) + " ";
    return out + program;
}

std::string render(const std::string& program, const Args& a)
{
    std::string out = program;
    for (const Arg& arg : a.items) {
        out += " \\\n  " + arg.flag;
        if (!arg.value.empty())
            out += " " + (arg.expands ? "\"" + arg.value + "\"" : shellWord(arg.value));
    }
    return out + "\n";
}

std::string nodeRankBelow(long long nodes)
{
    return "if [ \"$NODE_RANK\" -ge " + num(nodes) + " ]; then echo \"NODE_RANK must be 0.." + num(nodes - 1) + " ("
        + num(nodes) + " nodes)\" >&2; exit 1; fi\n";
}

} // namespace shardlab::launch

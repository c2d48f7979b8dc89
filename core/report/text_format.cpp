#include "report/text_format.h"

#include <cmath>
#include <cstdio>

#include "sim/simulator.h"

namespace shardlab {

namespace {
const char* const kMissing = "\xE2\x80\x94"; // an em dash
bool printable(double v) { return isShownFigure(v); }
} // namespace

std::string groupedNumber(double v, int decimals)
{
    if (!printable(v))
        return kMissing;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(v));
    std::string digits(buf), frac;
    if (const auto dot = digits.find('.'); dot != std::string::npos) {
        frac = digits.substr(dot);
        digits.resize(dot);
    }
    std::string grouped;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            grouped += ',';
        grouped += digits[i];
    }
    const bool negative = v < 0 && (grouped + frac).find_first_not_of("0.,") != std::string::npos;
    return (negative ? "-" : "") + grouped + frac;
}

std::string msText(double ms)
{
    if (!printable(ms))
        return kMissing;
    const double a = std::fabs(ms);
    if (a == 0)
        return "0";
    return groupedNumber(ms, a < 0.1 ? 3 : a < 100 ? 2 : a < 1000 ? 1 : 0);
}

std::string bytesText(double bytes)
{
    if (!printable(bytes))
        return kMissing;
    const double a = std::fabs(bytes);
    if (a >= 1e9)
        return groupedNumber(bytes / 1e9, 2) + " GB";
    if (a >= 1e6)
        return groupedNumber(bytes / 1e6, 2) + " MB";
    if (a >= 1e3)
        return groupedNumber(bytes / 1e3, 1) + " KB";
    return groupedNumber(bytes, 0) + " B";
}

std::string percentText(double fraction, int decimals)
{
    if (!printable(fraction))
        return kMissing;
    return groupedNumber(fraction * 100.0, decimals) + " %";
}

std::string signedText(double v, int decimals)
{
    if (!printable(v))
        return kMissing;
    const std::string body = groupedNumber(std::fabs(v), decimals);
    if (body == groupedNumber(0.0, decimals))
        return body;
    return (v < 0 ? "\xE2\x88\x92" : "+") + body; // U+2212 minus
}

std::string perTokenText(double gpuUs) { return groupedNumber(gpuUs, gpuUs < 10 ? 2 : (gpuUs < 100 ? 1 : 0)); }

std::string withArticle(const std::string& noun)
{
    const bool vowel = !noun.empty() && std::string("aeiouAEIOU").find(noun[0]) != std::string::npos;
    return (vowel ? "an " : "a ") + noun;
}

std::string padRight(std::string s, size_t width)
{
    if (s.size() < width)
        s.resize(width, ' ');
    return s;
}

} // namespace shardlab

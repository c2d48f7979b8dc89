#include "model/error.h"

#include <cstdio>

namespace shardlab {

namespace {

// Length of the valid UTF-8 sequence starting at s[i] (1-4), or 0 if it is not one.
// Overlong forms, surrogates and code points above U+10FFFF are invalid, as in RFC 3629.
size_t utf8Length(const std::string& s, size_t i)
{
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    const size_t n = s.size();
    auto cont = [&](size_t k) { return k < n && (b(k) & 0xC0) == 0x80; };
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return cont(i + 1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (!cont(i + 1) || !cont(i + 2))
            return 0;
        if ((c == 0xE0 && b(i + 1) < 0xA0) || (c == 0xED && b(i + 1) > 0x9F))
            return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3))
            return 0;
        if ((c == 0xF0 && b(i + 1) < 0x90) || (c == 0xF4 && b(i + 1) > 0x8F))
            return 0;
        return 4;
    }
    return 0;
}

// The code point of the valid `len`-byte UTF-8 sequence at s[i].
char32_t codePoint(const std::string& s, size_t i, size_t len)
{
    const auto b = [&](size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k])); };
    if (len == 2)
        return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    if (len == 3)
        return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

// Characters that are valid UTF-8 yet change how the rest of a line reads: C1 controls,
// the bidirectional embeddings, overrides, isolates and marks (U+202E shows "exe.txt" as
// "txt.exe"), and the line and paragraph separators, which break a one-line message.
bool hidesText(char32_t c)
{
    return (c >= 0x80 && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x2028 && c <= 0x202E)
        || (c >= 0x2066 && c <= 0x2069);
}

} // namespace

std::string displayText(const std::string& bytes)
{
    static const char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size());
    for (size_t i = 0; i < bytes.size();) {
        const unsigned char c = static_cast<unsigned char>(bytes[i]);
        const size_t len = utf8Length(bytes, i);
        if (len == 1 && c >= 0x20 && c != 0x7F) {
            out += bytes[i++];
        } else if (len > 1 && hidesText(codePoint(bytes, i, len))) {
            char code[16];
            std::snprintf(code, sizeof code, "\\u{%04X}", static_cast<unsigned>(codePoint(bytes, i, len)));
            out += code;
            i += len;
        } else if (len > 1) {
            out.append(bytes, i, len);
            i += len;
        } else {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
            ++i;
        }
    }
    return out;
}

std::string utf8Prefix(const std::string& bytes, size_t maxBytes)
{
    if (bytes.size() <= maxBytes)
        return bytes;
    size_t cut = maxBytes;
    while (cut > 0 && (static_cast<unsigned char>(bytes[cut]) & 0xC0) == 0x80)
        --cut; // bytes[cut] continues a sequence: cut before the sequence starts
    return bytes.substr(0, cut);
}

std::string excerpt(const std::string& bytes, size_t maxBytes)
{
    if (bytes.size() <= maxBytes)
        return bytes;
    return utf8Prefix(bytes, maxBytes) + "... (" + std::to_string(bytes.size()) + " bytes in all)";
}

std::string FieldError::toString() const
{
    std::string out;
    if (!file.empty())
        out += excerpt(file, kMaxShownBytes) + ": ";
    if (!where.empty())
        out += excerpt(where, kMaxShownBytes) + ": ";
    out += excerpt(reason, 4 * kMaxShownBytes);
    // Line breaks inside a reason read as spaces (one error, one line); other control
    // characters and invalid bytes are escaped by displayText.
    for (char& c : out)
        if (c == '\n' || c == '\r')
            c = ' ';
    return displayText(out);
}

} // namespace shardlab

#include "model/shell_word.h"

#include <cctype>

namespace shardlab {

std::string shellWord(const std::string& literal)
{
    if (literal.empty())
        return "''";
    static const std::string kPlain = "-_./:=+,@%";
    bool plain = true;
    for (char c : literal)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || kPlain.find(c) != std::string::npos))
            plain = false;
    if (plain)
        return literal;
    // Single quotes keep every byte. A literal holding $ or ` is double-quoted instead with
    // those (and " and \) escaped, which keeps every byte too: shellcheck reads $ inside
    // single quotes as a forgotten expansion, and the scripts pass shellcheck as they are.
    if (literal.find_first_of("$`") == std::string::npos) {
        std::string out = "'";
        for (char c : literal)
            out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        return out + "'";
    }
    std::string out = "\"";
    for (char c : literal) {
        if (c == '$' || c == '`' || c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "\"";
}

} // namespace shardlab

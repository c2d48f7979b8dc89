// What the JSON file formats share (io/format_json.h).
#include "io/format_json.h"

namespace shardlab::io {

void withFile(FieldErrors& errors, const std::string& file)
{
    for (FieldError& e : errors)
        if (e.file.empty())
            e.file = file;
}

bool checkFormat(JsonReader& r, const char* expected, bool required)
{
    if (!r.has("format") && !required)
        return true;
    const std::string f = r.string("format");
    if (!f.empty() && f != expected) {
        r.fail(r.path("format"), "expected \"" + std::string(expected) + "\", got \"" + f + "\"");
        return false;
    }
    const int v = r.integer("version", 1, 2147483647LL);
    if (v > kFormatVersion)
        r.fail(r.path("version"), "unsupported version " + std::to_string(v) + " (this build reads up to "
                                      + std::to_string(kFormatVersion) + ")");
    return true;
}

} // namespace shardlab::io

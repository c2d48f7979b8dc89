#include "io/json_reader.h"

#include "model/printf_text.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_set>

namespace shardlab::io {

namespace {
const nlohmann::json kNull;

// A number as the user wrote it, to ten significant digits.
std::string formatNumber(double v) { return printfText("%.10g", v); }
} // namespace

std::string jsonTypeName(const nlohmann::json& v)
{
    if (v.is_number())
        return "a number";
    if (v.is_string())
        return "a string";
    if (v.is_boolean())
        return "a boolean";
    if (v.is_null())
        return "null";
    if (v.is_array())
        return "an array";
    if (v.is_object())
        return "an object";
    return "an unsupported value";
}

namespace {

// Thrown by the parse callback to stop the parser at once; never leaves parseJsonText.
struct ParseStop {
    std::string where;
    std::string reason;
};

// Follows the parser's events to know the JSON path, the keys seen in each open object,
// the depth and the number of values.
class ParseGuard {
public:
    bool operator()(int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed)
    {
        using E = nlohmann::json::parse_event_t;
        switch (event) {
        case E::object_start:
        case E::array_start:
            elementStarts();
            // `depth` counts the containers already open around this one.
            if (depth + 1 > kMaxJsonDepth)
                throw ParseStop{{}, "nested deeper than " + std::to_string(kMaxJsonDepth)
                                            + " levels of [ ] and { } (ShardLab files need 4)"};
            m_frames.push_back({event == E::object_start, {}, -1, {}});
            break;
        case E::key: {
            Frame& f = m_frames.back();
            f.key = parsed.get<std::string>();
            if (!f.keys.insert(f.key).second)
                throw ParseStop{path(), "duplicate key (given twice in one object; remove one)"};
            break;
        }
        case E::value:
            elementStarts();
            break;
        case E::object_end:
        case E::array_end:
            if (!m_frames.empty())
                m_frames.pop_back();
            break;
        }
        return true;
    }

    // Where the value being read sits, for an error raised inside it (a number's
    // overflow) before its own event: an object's current key, an array's next element.
    std::string pendingPath() const { return path(1); }

private:
    struct Frame {
        bool object;
        std::string key;               // current member of an object
        long long index;               // current element of an array
        std::unordered_set<std::string> keys;
    };

    void elementStarts()
    {
        if (++m_values > kMaxJsonValues)
            throw ParseStop{{}, "more than " + std::to_string(kMaxJsonValues)
                                    + " values (ShardLab files have a few hundred)"};
        if (!m_frames.empty() && !m_frames.back().object)
            ++m_frames.back().index;
    }

    // The path of the open containers; `nextElement` is added to the innermost array's index.
    std::string path(long long nextElement = 0) const
    {
        std::string p;
        for (size_t i = 0; i < m_frames.size(); ++i) {
            const Frame& f = m_frames[i];
            if (f.object)
                p += (p.empty() ? "" : ".") + f.key;
            else
                p += "[" + std::to_string(std::max(0LL, f.index + (i + 1 == m_frames.size() ? nextElement : 0))) + "]";
        }
        return p;
    }

    std::vector<Frame> m_frames;
    long long m_values = 0;
};

} // namespace

bool parseJsonText(const std::string& text, nlohmann::json& out, FieldError& error)
{
    // The parser takes a NUL byte for the end of the input, so whatever follows one would
    // be dropped unread (or a document cut short reported as ending early).
    if (const size_t nul = text.find('\0'); nul != std::string::npos) {
        const long long line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
        error.where = "";
        error.reason = "malformed JSON: a NUL byte at line " + std::to_string(line) + " (byte " + std::to_string(nul)
            + "); JSON text has none";
        return false;
    }
    ParseGuard guard;
    try {
        out = nlohmann::json::parse(text, std::ref(guard));
        return true;
    } catch (const ParseStop& stop) {
        error.where = stop.where;
        error.reason = stop.reason;
        return false;
    } catch (const nlohmann::json::parse_error& e) {
        std::string what = e.what();
        // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..."
        const auto pos = what.find("parse error");
        std::string text = pos == std::string::npos ? what : what.substr(pos);
        // "...; last read: '<the token>'" would echo the file's own bytes (a /proc file's,
        // a secret's): the line and column say where.
        if (const auto last = text.find("; last read:"); last != std::string::npos)
            text.erase(last);
        error.where = "";
        error.reason = "malformed JSON: " + text;
        return false;
    } catch (const std::exception& e) {
        // e.g. "[json.exception.out_of_range.406] number overflow parsing '1e400'": drop the tag.
        std::string what = e.what();
        if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos)
            what.erase(0, what.find("] ") + 2);
        error.where = guard.pendingPath();
        error.reason = "malformed JSON: " + excerpt(what, 128);
        return false;
    }
}

std::string JsonReader::path(const char* key) const
{
    return m_path.empty() ? std::string(key) : m_path + "." + key;
}

bool JsonReader::requireObject() const
{
    if (m_value.is_object())
        return true;
    fail(m_path.empty() ? "(root)" : m_path, "must be an object, got " + jsonTypeName(m_value));
    return false;
}

JsonReader JsonReader::child(const char* key) const
{
    const nlohmann::json* v = find(key, false);
    return JsonReader(v ? *v : kNull, path(key), m_errors);
}

const nlohmann::json* JsonReader::find(const char* key, bool required) const
{
    if (!m_value.is_object())
        return nullptr;
    auto it = m_value.find(key);
    if (it == m_value.end()) {
        if (required)
            fail(path(key), "missing required field");
        return nullptr;
    }
    return &*it;
}

int JsonReader::integer(const char* key, long long lo, long long hi)
{
    const nlohmann::json* v = find(key, true);
    if (!v)
        return 0;
    return integerOr(key, 0, lo, hi);
}

int JsonReader::integerOr(const char* key, int fallback, long long lo, long long hi)
{
    const nlohmann::json* v = find(key, false);
    if (!v)
        return fallback;
    if (!v->is_number()) {
        fail(path(key), "must be an integer, got " + jsonTypeName(*v));
        return fallback;
    }
    const double d = v->get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) {
        fail(path(key), "must be an integer, got " + formatNumber(d));
        return fallback;
    }
    if (d < double(lo) || d > double(hi)) {
        failRange(path(key), "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + " (got "
                            + formatNumber(d) + ")");
        return fallback;
    }
    return static_cast<int>(d);
}

double JsonReader::number(const char* key, double lo, double hi)
{
    const nlohmann::json* v = find(key, true);
    if (!v)
        return 0;
    return numberOr(key, 0, lo, hi);
}

double JsonReader::numberOr(const char* key, double fallback, double lo, double hi)
{
    const nlohmann::json* v = find(key, false);
    if (!v)
        return fallback;
    if (!v->is_number()) {
        fail(path(key), "must be a number, got " + jsonTypeName(*v));
        return fallback;
    }
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < lo || d > hi) {
        failRange(path(key), "must be between " + formatNumber(lo) + " and " + formatNumber(hi) + " (got "
                            + formatNumber(d) + ")");
        return fallback;
    }
    return d + 0.0; // -0 read as 0, so it is never shown or written as "-0"
}

std::string JsonReader::string(const char* key)
{
    const nlohmann::json* v = find(key, true);
    if (!v)
        return {};
    return stringOr(key, {});
}

std::string JsonReader::stringOr(const char* key, const std::string& fallback)
{
    const nlohmann::json* v = find(key, false);
    if (!v)
        return fallback;
    if (!v->is_string()) {
        fail(path(key), "must be a string, got " + jsonTypeName(*v));
        return fallback;
    }
    return v->get<std::string>();
}

bool JsonReader::boolean(const char* key)
{
    const nlohmann::json* v = find(key, true);
    if (!v)
        return false;
    return booleanOr(key, false);
}

bool JsonReader::booleanOr(const char* key, bool fallback)
{
    const nlohmann::json* v = find(key, false);
    if (!v)
        return fallback;
    if (!v->is_boolean()) {
        fail(path(key), "must be true or false, got " + jsonTypeName(*v));
        return fallback;
    }
    return v->get<bool>();
}

void JsonReader::rejectUnknownKeys(const std::vector<const char*>& known)
{
    if (!m_value.is_object())
        return;
    for (auto it = m_value.begin(); it != m_value.end(); ++it) {
        bool ok = false;
        for (const char* k : known)
            ok = ok || it.key() == k;
        if (!ok)
            fail(path(excerpt(it.key(), 64).c_str()), "unknown field (check the spelling)");
    }
}

} // namespace shardlab::io

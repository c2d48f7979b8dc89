#include "io/json_reader.h"

#include <cmath>
#include <cstdio>

namespace shardlab::io {

namespace {
const nlohmann::json kNull;

std::string formatNumber(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
}
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

bool parseJsonText(const std::string& text, nlohmann::json& out, FieldError& error)
{
    try {
        out = nlohmann::json::parse(text);
        return true;
    } catch (const nlohmann::json::parse_error& e) {
        std::string what = e.what();
        // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..."
        const auto pos = what.find("parse error");
        error.where = "";
        error.reason = "malformed JSON: " + (pos == std::string::npos ? what : what.substr(pos));
        return false;
    } catch (const std::exception& e) {
        // e.g. "[json.exception.out_of_range.406] number overflow parsing '1e400'": drop the tag.
        std::string what = e.what();
        if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos)
            what.erase(0, what.find("] ") + 2);
        error.where = "";
        error.reason = "malformed JSON: " + what;
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
        fail(path(key), "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + " (got "
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
        fail(path(key), "must be between " + formatNumber(lo) + " and " + formatNumber(hi) + " (got "
                            + formatNumber(d) + ")");
        return fallback;
    }
    return d;
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
            fail(path(it.key().c_str()), "unknown field (check the spelling)");
    }
}

} // namespace shardlab::io

// Path-aware reading of nlohmann::json values: every error names the JSON path and the
// reason. Internal to core/io; nlohmann exceptions never leave these functions.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "model/error.h"
#include "model/model_limits.h"

namespace shardlab::io {

using shardlab::IntRange; // the whole numbers a field accepts, lo..hi inclusive

class JsonReader {
public:
    JsonReader(const nlohmann::json& value, std::string path, FieldErrors& errors)
        : m_value(value), m_path(std::move(path)), m_errors(errors)
    {
    }

    bool isObject() const { return m_value.is_object(); }
    // Reports an error unless the value is an object.
    bool requireObject() const;
    bool has(const char* key) const { return m_value.is_object() && m_value.contains(key); }
    JsonReader child(const char* key) const;
    const nlohmann::json& json() const { return m_value; }
    std::string path(const char* key) const;

    // Required fields: missing or wrong type or out of range -> error, fallback returned.
    int integer(const char* key, long long lo, long long hi);
    int integer(const char* key, IntRange r) { return integer(key, r.lo, r.hi); }
    double number(const char* key, double lo, double hi);
    std::string string(const char* key);
    bool boolean(const char* key);

    // Optional fields: absent -> fallback without error; present but bad -> error.
    int integerOr(const char* key, int fallback, long long lo, long long hi);
    int integerOr(const char* key, int fallback, IntRange r) { return integerOr(key, fallback, r.lo, r.hi); }
    double numberOr(const char* key, double fallback, double lo, double hi);
    std::string stringOr(const char* key, const std::string& fallback);
    bool booleanOr(const char* key, bool fallback);

    // Warn about keys not in `known` (typos would otherwise be silently ignored).
    void rejectUnknownKeys(const std::vector<const char*>& known);

    void fail(const std::string& where, const std::string& reason) const
    {
        m_errors.push_back({{}, where, reason});
    }
    // A value of the right type outside its range (FieldError::outOfRange).
    void failRange(const std::string& where, const std::string& reason) const
    {
        m_errors.push_back({{}, where, reason, true});
    }

private:
    const nlohmann::json* find(const char* key, bool required) const;

    const nlohmann::json& m_value;
    std::string m_path;
    FieldErrors& m_errors;
};

// Limits checked while parsing, before the parser builds anything deeper or bigger: a
// ShardLab file nests 4 levels and has a few hundred values.
constexpr int kMaxJsonDepth = 128;
constexpr long long kMaxJsonValues = 1'000'000;

// Parses text; on failure returns an error with the parser's position and reason. Also
// refused, with the JSON path where it applies: a key given twice in one object ("model.layers:
// duplicate key"; nlohmann would silently keep the last), nesting deeper than kMaxJsonDepth,
// more than kMaxJsonValues values.
bool parseJsonText(const std::string& text, nlohmann::json& out, FieldError& error);

std::string jsonTypeName(const nlohmann::json& v);

} // namespace shardlab::io

// Errors for user input: where (file, JSON path or flag) and why, never an exception
// crossing a layer boundary.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace shardlab {

// One problem with user input. `where` is a JSON path ("model.layers"), a CLI flag
// ("--budget") or empty; `file` is empty for in-memory values.
struct FieldError {
    std::string file;
    std::string where;
    std::string reason;
    // The value is of the right type but outside its range: a reader that keeps a draft
    // (the window's editor) may hold it while the user corrects it.
    bool outOfRange = false;
    // The document is well-formed and this value is of the right type, but the values break
    // a rule the scenario's validation checks (a range, one field against another, or a
    // constraint the cluster cannot meet): a draft may hold it too.
    bool invalidValue = false;

    // "file: where: reason" with empty parts left out; always one line, passed through
    // displayText (newlines become spaces).
    std::string toString() const;
};

using FieldErrors = std::vector<FieldError>;

// `bytes` made safe to show in one line of text: valid UTF-8 is kept, every byte that is not
// part of valid UTF-8 and every ASCII control character becomes "\xNN" (a file name with
// byte 0xff reads "\xff"), so a message is always valid UTF-8 (nlohmann can serialize it, a
// terminal shows it) and still tells the user which file was meant. Valid characters that
// would change how the line reads (C1 controls, bidirectional overrides, embeddings,
// isolates and marks, line and paragraph separators) become their code point, "\u{202E}".
std::string displayText(const std::string& bytes);

// How much of a file name, JSON path or value a message shows: a 1 MB key or value in a
// file is named by its first bytes and its length, never echoed whole.
inline constexpr size_t kMaxShownBytes = 256;
// `bytes` cut to at most maxBytes (at a UTF-8 boundary) plus "... (N bytes in all)" when
// longer; as is otherwise.
std::string excerpt(const std::string& bytes, size_t maxBytes = kMaxShownBytes);
// The longest prefix of `bytes` of at most maxBytes that does not end inside a UTF-8
// sequence (`bytes` itself when it is no longer).
std::string utf8Prefix(const std::string& bytes, size_t maxBytes);

// A value or the first error that prevented it. Small on purpose: no exceptions in the
// core's public API.
template <typename T>
class Result {
public:
    Result(T value) : m_value(std::move(value)) {}
    Result(FieldError error) : m_value(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(m_value); }
    explicit operator bool() const { return ok(); }
    const T& value() const { return std::get<T>(m_value); }
    T& value() { return std::get<T>(m_value); }
    const FieldError& error() const { return std::get<FieldError>(m_value); }

private:
    std::variant<T, FieldError> m_value;
};

// Result for operations that produce nothing but may fail.
struct Status {
    std::optional<FieldError> error;
    bool ok() const { return !error.has_value(); }
    static Status success() { return {}; }
    static Status failure(FieldError e) { return Status{std::move(e)}; }
};

} // namespace shardlab

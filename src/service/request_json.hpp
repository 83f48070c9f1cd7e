// A request body read as JSON, with limits a hostile body cannot get past:
// at most kMaxJsonDepth arrays and objects in one another (checked while
// parsing, so nothing deeper is ever built), numbers a double can hold, and
// each key once in its object (a proxy or another parser may read the first
// of two, this one would take the last).
// And values quoted back in messages without walking them: short, and
// flattened below two levels.
// No LibTorch here.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tula::service {

// A request the API answers with 400; the message names the problem.
class BadRequest : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A number too large for a double (1e400): `field` is the object key it
// was the value of ("" at the top level), for a message that names the range.
class NumberOutOfRange : public BadRequest {
 public:
  NumberOutOfRange(const std::string& message, std::string field) : BadRequest(message), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// Eight times the deepest body the API takes (POST /v1/plan with a profile nests 8).
inline constexpr int kMaxJsonDepth = 64;

// Throws BadRequest: malformed JSON, too deep, a number out of range, a key twice in one object.
nlohmann::json parse_request_json(const std::string& text);

// `v` as JSON text for a message: at most `max_chars` characters (then "..."),
// containers two levels down shown as [...] and {...}. Walks with a stack of
// its own, so no value is too deep to quote.
std::string quote_json(const nlohmann::json& v, size_t max_chars = 60);

// `text` cut to `max_chars` characters (then "..."), its control bytes
// escaped, for a message.
std::string quote_text(const std::string& text, size_t max_chars = 60);

// `text` with every control byte (NUL, CR, LF, ESC, DEL) written as \xNN: a
// message quoting it is whole (a NUL would end it where it is read as a C
// string) and stays on its line.
std::string escape_controls(std::string_view text);

}  // namespace tula::service

#include "service/request_head.hpp"

#include <strings.h>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "service/request_json.hpp"

namespace tula::service {
namespace {

// tchar of RFC 9110, 5.6.2.
bool is_token_char(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return is_token_char(static_cast<unsigned char>(c)); });
}

// A byte no field value holds: controls but HTAB, and DEL.
bool is_bad_value_byte(unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; }

// A byte no request target holds: controls, space, DEL.
bool is_bad_target_byte(unsigned char c) { return c <= 0x20 || c == 0x7f; }

std::string quoted(std::string_view s) { return "'" + escape_controls(s.substr(0, 80)) + (s.size() > 80 ? "...'" : "'"); }

HeadProblem bad(std::string message) { return {400, std::move(message)}; }

std::optional<HeadProblem> check_request_line(std::string_view line) {
  const auto first = line.find(' ');
  const auto second = first == std::string_view::npos ? first : line.find(' ', first + 1);
  if (second == std::string_view::npos || line.find(' ', second + 1) != std::string_view::npos) {
    return bad("malformed request line " + quoted(line) + ": it must be METHOD SP TARGET SP HTTP/1.1, single spaces");
  }
  const auto method = line.substr(0, first);
  const auto target = line.substr(first + 1, second - first - 1);
  const auto version = line.substr(second + 1);
  if (!is_token(method)) return bad("malformed request line " + quoted(line) + ": the method is not a token");
  if (target.empty() || std::any_of(target.begin(), target.end(), [](char c) { return is_bad_target_byte(c); })) {
    return bad("malformed request line " + quoted(line) + ": the target is empty or holds a control byte");
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return bad("malformed request line " + quoted(line) + ": the version must be HTTP/1.1 or HTTP/1.0");
  }
  return std::nullopt;
}

struct Framing {
  int lengths = 0, encodings = 0;
};

std::optional<HeadProblem> check_field_line(std::string_view line, Framing& framing) {
  if (line.front() == ' ' || line.front() == '\t') {
    return bad("header line " + quoted(line) + " continues the one before it (obs-fold), which RFC 9112 refuses");
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return bad("header line " + quoted(line) + " has no colon");
  const auto name = line.substr(0, colon);
  if (!name.empty() && (name.back() == ' ' || name.back() == '\t')) {
    return bad("header line " + quoted(line) + " has whitespace before its colon, which RFC 9112 refuses");
  }
  if (!is_token(name)) return bad("header name " + quoted(name) + " is not a token");
  const auto value = line.substr(colon + 1);
  if (std::any_of(value.begin(), value.end(), [](char c) { return is_bad_value_byte(static_cast<unsigned char>(c)); })) {
    return bad("header " + quoted(name) + " holds a control byte in its value " + quoted(value));
  }
  const auto is = [&name](std::string_view field) {
    return name.size() == field.size() && ::strncasecmp(name.data(), field.data(), field.size()) == 0;
  };
  if (is("content-length")) ++framing.lengths;
  if (is("transfer-encoding")) ++framing.encodings;
  return std::nullopt;
}

std::optional<HeadProblem> check_framing(const Framing& f) {
  if (f.lengths > 1) return bad(fmt::format("the request has {} Content-Length headers; at most one is read", f.lengths));
  if (f.encodings > 1) {
    return bad(fmt::format("the request has {} Transfer-Encoding headers; at most one is read", f.encodings));
  }
  if (f.lengths == 1 && f.encodings == 1) {
    return bad("the request has both Content-Length and Transfer-Encoding; send one of them");
  }
  return std::nullopt;
}

// The lines of `head` without their CRLFs (the last, empty one left out),
// or the problem of a CR or LF that is not part of a CRLF.
std::optional<HeadProblem> split_lines(std::string_view head, std::vector<std::string_view>& lines) {
  size_t at = 0;
  while (at < head.size()) {
    const auto end = head.find_first_of("\r\n", at);
    if (end == std::string_view::npos || head[end] == '\n' || end + 1 >= head.size() || head[end + 1] != '\n') {
      const auto line = head.substr(at, end == std::string_view::npos ? head.npos : end - at);
      return bad(end != std::string_view::npos && head[end] == '\n'
                     ? "the line " + quoted(line) + " ends in LF without CR; lines end in CRLF"
                     : "the line " + quoted(line) + " holds a CR that no LF follows (a bare CR)");
    }
    if (end == at) return std::nullopt;  // the empty line: the head's end
    lines.push_back(head.substr(at, end - at));
    at = end + 2;
  }
  return bad("the head has no empty line at its end");
}

}  // namespace

std::optional<size_t> head_end(std::string_view bytes) {
  const auto at = bytes.find("\r\n\r\n");
  if (at != std::string_view::npos) return at + 4;
  return std::nullopt;
}

BodyFraming body_framing(std::string_view head) {
  // Every request's head goes through here: no copies, no allocation.
  const auto named = [](std::string_view line, std::string_view name) {
    return line.size() > name.size() && line[name.size()] == ':' &&
           ::strncasecmp(line.data(), name.data(), name.size()) == 0;
  };
  const auto value_of = [](std::string_view line, size_t name_size) {
    std::string_view v = line.substr(name_size + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
  };
  const auto contains_nocase = [](std::string_view text, std::string_view word) {
    for (size_t i = 0; i + word.size() <= text.size(); ++i) {
      if (::strncasecmp(text.data() + i, word.data(), word.size()) == 0) return true;
    }
    return false;
  };
  BodyFraming f;
  size_t at = head.find("\r\n");  // past the request line
  while (at != std::string_view::npos && at + 2 < head.size()) {
    at += 2;
    const size_t eol = head.find("\r\n", at);
    if (eol == std::string_view::npos || eol == at) break;  // the empty line: the head's end
    const std::string_view line = head.substr(at, eol - at);
    if (named(line, "content-length")) {
      const auto v = value_of(line, 14);
      if (!v.empty() && v.size() <= 18 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        uint64_t n = 0;
        for (const char c : v) n = n * 10 + static_cast<uint64_t>(c - '0');
        f.length = n;
      }
    } else if (named(line, "transfer-encoding")) {
      f.chunked = contains_nocase(value_of(line, 17), "chunked");
    } else if (named(line, "expect")) {
      const auto v = value_of(line, 6);
      f.expects_continue = v.size() == 12 && ::strncasecmp(v.data(), "100-continue", 12) == 0;
    }
    at = eol;
  }
  return f;
}

HeadProblem head_too_large(const HeadLimits& limits) {
  return {431, fmt::format("the request's head is larger than {} bytes", limits.max_bytes)};
}

std::optional<HeadProblem> check_head(std::string_view head, const HeadLimits& limits) {
  if (head.size() > limits.max_bytes) return head_too_large(limits);
  std::vector<std::string_view> lines;
  if (auto problem = split_lines(head, lines)) return problem;
  if (lines.empty()) return bad("the request line is missing");
  if (auto problem = check_request_line(lines.front())) return problem;
  if (lines.size() - 1 > limits.max_fields) {
    return HeadProblem{431, fmt::format("the request has {} header lines; at most {} are read", lines.size() - 1,
                                        limits.max_fields)};
  }
  Framing framing;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (auto problem = check_field_line(lines[i], framing)) return problem;
  }
  return check_framing(framing);
}

}  // namespace tula::service

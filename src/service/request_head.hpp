// A request's head (request line and header lines, up to the empty line)
// checked to RFC 9112 before the HTTP library reads it, so that no proxy in
// front can read the same bytes as another request than this server does
// (request smuggling): one space-separated request line of three parts, each
// header line a token, a colon at once (no whitespace before it) and a value
// without control bytes; no line folded onto the one before (obs-fold), no
// CR that is not followed by LF, no LF without its CR; at most one
// Content-Length, at most one Transfer-Encoding, never both. Anything else is
// answered 400 and ends the connection: what follows in it cannot be told
// apart from the rest of this request. No LibTorch here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tula::service {

struct HeadLimits {
  size_t max_bytes = 64 << 10;  // the whole head, CRLFs included
  size_t max_fields = 100;      // header lines
};

struct HeadProblem {
  int status;  // 400, or 431 (too large)
  std::string message;
};

// Where the head in `bytes` ends (just past its empty line), or nothing
// while it has not all come; bytes past the limit before it ends make it
// too large (see check_head).
std::optional<size_t> head_end(std::string_view bytes);

// `head` (through its empty line) checked as above; nothing when it is well formed.
std::optional<HeadProblem> check_head(std::string_view head, const HeadLimits& limits);

// The problem of a head that has not ended within `limits.max_bytes`.
HeadProblem head_too_large(const HeadLimits& limits);

// How the body of a head that check_head passed is framed: its
// Content-Length (none where absent or not a plain decimal number, which the
// library then refuses), or chunked; and whether the client waits for
// "100 Continue" before sending it.
struct BodyFraming {
  std::optional<uint64_t> length;
  bool chunked = false;
  bool expects_continue = false;
};
BodyFraming body_framing(std::string_view head);

}  // namespace tula::service

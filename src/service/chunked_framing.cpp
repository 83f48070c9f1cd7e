#include "service/chunked_framing.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace tula::service {
namespace {

int hex_value(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
  return -1;
}

// Bytes an extension or a trailer line may hold: no controls but HTAB.
bool is_line_byte(unsigned char c) { return c >= 0x20 ? c != 0x7f : c == '\t'; }

}  // namespace

bool ChunkedFraming::fail(std::string why) {
  state_ = State::Bad;
  problem_ = "malformed chunked body: " + std::move(why);
  return false;
}

bool ChunkedFraming::take(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (state_ == State::Data) {  // the data itself, whole runs at once
      const size_t run = static_cast<size_t>(std::min<uint64_t>(left_, bytes.size() - i));
      left_ -= run;
      i += run - 1;
      if (left_ == 0) state_ = State::DataCr;
      continue;
    }
    if (!take(static_cast<unsigned char>(bytes[i]))) return false;
  }
  return state_ != State::Bad;
}

bool ChunkedFraming::take(unsigned char c) {
  switch (state_) {
    case State::Size: {
      const int v = hex_value(c);
      if (v >= 0) {
        if (++digits_ > 15) return fail("a chunk size of more than 15 hex digits");
        size_ = size_ * 16 + static_cast<uint64_t>(v);
        return true;
      }
      if (digits_ == 0) return fail(fmt::format("a chunk size must start with a hex digit (got byte 0x{:02x})", c));
      if (c == ';') return state_ = State::Extension, true;
      if (c == '\r') return state_ = State::SizeLf, true;
      return fail(fmt::format("byte 0x{:02x} after a chunk size (expected CRLF or ';')", c));
    }
    case State::Extension:
      if (c == '\r') return state_ = State::SizeLf, true;
      if (!is_line_byte(c)) return fail(fmt::format("control byte 0x{:02x} in a chunk extension", c));
      return true;
    case State::SizeLf:
      if (c != '\n') return fail("a chunk size line must end in CRLF (a bare CR)");
      left_ = size_;
      state_ = size_ == 0 ? State::TrailerStart : State::Data;
      size_ = 0;
      digits_ = 0;
      return true;
    case State::DataCr:
      if (c != '\r') return fail(fmt::format("a chunk's data must be followed by CRLF (got byte 0x{:02x})", c));
      return state_ = State::DataLf, true;
    case State::DataLf:
      if (c != '\n') return fail("a chunk's data must be followed by CRLF (a bare CR)");
      return state_ = State::Size, true;
    case State::TrailerStart:
      if (c == '\r') return state_ = State::FinalLf, true;
      [[fallthrough]];
    case State::Trailer:
      if (c == '\r') return state_ = State::TrailerLf, true;
      if (!is_line_byte(c)) return fail(fmt::format("control byte 0x{:02x} in a trailer line", c));
      state_ = State::Trailer;
      return true;
    case State::TrailerLf:
      if (c != '\n') return fail("a trailer line must end in CRLF (a bare CR)");
      return state_ = State::TrailerStart, true;
    case State::FinalLf:
      if (c != '\n') return fail("the body must end in CRLF after its last chunk (a bare CR)");
      return state_ = State::End, true;
    case State::End: return fail("bytes after the last chunk (a body ends with its 0-size chunk)");
    case State::Data:
    case State::Bad: break;
  }
  return false;
}

}  // namespace tula::service

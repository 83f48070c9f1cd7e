// The chunked framing of a request body (RFC 9112, 7.1) checked byte by byte
// as the body arrives, before the HTTP library decodes it: the library takes
// a chunk whose data is not followed by CRLF as the body's end, so a body cut
// short or followed by something else would pass as whole. Each chunk is a
// hex size (an extension after ';' allowed), CRLF, that many bytes, CRLF; the
// last has size 0 and is followed by trailer lines and an empty line. No
// LibTorch here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tula::service {

class ChunkedFraming {
 public:
  // Takes the next bytes of the body; false (and problem() says why) at the
  // first one the framing does not allow; bytes after the end are refused too.
  bool take(std::string_view bytes);
  // The body's last chunk and its trailers have all come.
  bool complete() const { return state_ == State::End; }
  const std::string& problem() const { return problem_; }

 private:
  enum class State { Size, Extension, SizeLf, Data, DataCr, DataLf, TrailerStart, Trailer, TrailerLf, FinalLf, End, Bad };
  bool take(unsigned char c);
  bool fail(std::string why);

  State state_ = State::Size;
  uint64_t size_ = 0;
  int digits_ = 0;
  uint64_t left_ = 0;
  std::string problem_;
};

}  // namespace tula::service

// Who may change things: with a token configured, every mutating request
// carries it as "Authorization: Bearer TOKEN", compared in constant time.
// No LibTorch here.
#pragma once
#include <string>

namespace tula::service {

// Equal strings, in time that depends on the lengths only, not on where they differ.
bool constant_time_equal(const std::string& a, const std::string& b);

// The token in `path` (surrounding whitespace dropped); throws
// std::invalid_argument naming the file when it is missing, empty, or
// readable by other users.
std::string read_token_file(const std::string& path);

// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback(const std::string& host);

// The token an "Authorization" header carries ("" when it is not "Bearer ...").
std::string bearer_token(const std::string& authorization);

}  // namespace tula::service

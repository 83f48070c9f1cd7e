// Who may use the server: with a token configured, every request but the
// health check and the pages' code carries it as "Authorization: Bearer
// TOKEN", compared in constant time. No LibTorch here.
#pragma once
#include <string>

namespace tula::service {

// Equal strings, in time that depends on the lengths only, not on where they differ.
bool constant_time_equal(const std::string& a, const std::string& b);

// The token in `path` (surrounding whitespace dropped); throws
// std::invalid_argument naming the file when it is missing, readable by
// other users, shorter than 16 characters, or holds anything but printable
// ASCII (a NUL byte, a control character, a space inside the token).
std::string read_token_file(const std::string& path);

// The token an "Authorization" header carries ("" when it is not "Bearer ...").
std::string bearer_token(const std::string& authorization);

}  // namespace tula::service

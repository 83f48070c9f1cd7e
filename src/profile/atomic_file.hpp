// Files written whole or not at all: a reader (or a crash) never sees half a
// profile, plan or result. No LibTorch.
#pragma once
#include <string>

namespace tula::profile {

// Writes `text` to a temporary file beside `path` (creating the directory),
// then renames it over `path`. Throws std::runtime_error naming the file.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace tula::profile

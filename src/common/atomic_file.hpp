// Files written whole or not at all: a reader, or a crash at any moment, sees
// either the old file or the new one, never half of one. No LibTorch, so the
// models, the planner and the engine share this one writer.
#pragma once
#include <functional>
#include <string>

namespace tula::common {

// Calls `write` with a temporary path beside `path` (creating the directory),
// then flushes that file to disk, renames it over `path` and flushes the
// directory, so the rename itself survives a power loss. `write` must create
// the file at the path it is given. Throws std::runtime_error naming `path`;
// the temporary file never outlives a failure.
void write_atomically(const std::string& path, const std::function<void(const std::string& temporary)>& write);

// write_atomically with `text` as the whole content.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace tula::common

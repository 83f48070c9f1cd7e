// Removing a folder and everything under it, as std::filesystem::remove_all
// does, through the C library's file tree walk instead.
//
// Why not remove_all: a pip wheel's libtorch.so (torch 2.11) exports a copy
// of std::filesystem::remove_all(path, error_code&) from its toolchain's
// static part of libstdc++, and a program linked against it can bind to
// that copy, which jumped to address 0 (the profiler's and the tests'
// temporary folders, on a GPU machine). Nothing here depends on which
// libstdc++ a LibTorch was built with.
#pragma once
#include <filesystem>
#include <string>

namespace tula::common {

// Removes `path` (a file, a symbolic link itself, or a folder with all it
// holds; links are not followed). A path that does not exist is not an error.
// Returns "" on success, else what failed, naming the entry.
std::string remove_tree(const std::filesystem::path& path);

}  // namespace tula::common

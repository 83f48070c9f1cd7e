// The data roots a process reads its inputs under (the data set's files),
// when it runs a job of `tula serve`: `tula tune --data-root` passes them to
// every process it starts (profile, launch, the workers) in TULA_DATA_ROOTS,
// and each input file is then opened beneath its root's directory
// descriptor (open_beneath.hpp), so a symlink in the data folder that leads
// out of the root, or a folder swapped for one after the server checked it,
// is refused with its path named rather than read. Without roots (a user's
// own run) paths are opened as given, symlinks followed. No LibTorch here.
#pragma once
#include <string>
#include <vector>

#include "common/confined_path.hpp"
#include "common/fd.hpp"

namespace tula::common {

// The environment variable, ':'-separated absolute directories.
inline constexpr const char* kDataRootsVariable = "TULA_DATA_ROOTS";

// The roots this process reads under, as the environment gave them (empty: none).
std::vector<std::string> input_roots();

// Sets TULA_DATA_ROOTS for the processes this one starts from now on (none: unset).
void pass_input_roots(const std::vector<std::string>& roots);

// Opens `path` with `flags`: beneath the deepest root it lies under (throws
// PathOutsideRoots naming the path when it leads out of that root on the
// way); as given when there are no roots, or it lies under none (a data
// set's usual place, which the engine chose: every path of a job's own lies
// under a root, the server checked that) (-1 and errno on failure).
Fd open_input(const std::string& path, int flags);

// Throws PathOutsideRoots when there are roots and `path` (a directory or
// a file of a listing) does not open beneath one of them.
void require_beneath_roots(const std::string& path);

}  // namespace tula::common

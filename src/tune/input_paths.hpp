// The files and directories a tune job reads (--data-dir, --profile,
// --resources), looked up right before each use. With --data-root (as
// `tula serve` starts it) each path is resolved against the roots again and
// opened from its root without following a symlink, so a link that changed
// since the job was accepted fails the job, naming the path, before anything
// outside the roots is read. Without roots (a job run by hand) a path is
// used as given, a directory made absolute for the children.
// No LibTorch here.
#pragma once
#include <string>

#include "tune/tune_options.hpp"

namespace tula::tune {

// The directory to hand to a child process (the engine opens the data set
// files in it): checked, and resolved so the child follows no link of the
// job's; absolute, since the child runs in the job's directory. Throws
// std::invalid_argument naming `flag` and the path.
std::string input_directory(const TuneOptions& o, const std::string& flag, const std::string& path);

// The whole file at `path`, read through a descriptor opened under the roots.
// Throws std::invalid_argument naming `flag` and the path.
std::string read_input_file(const TuneOptions& o, const std::string& flag, const std::string& path);

}  // namespace tula::tune

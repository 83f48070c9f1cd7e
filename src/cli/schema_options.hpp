// `tula tune`'s flags, registered from the option schema (tune/option_schema.hpp):
// one CLI11 option per entry, with its help and, where it has one, its default.
#pragma once
#include <CLI/CLI.hpp>

#include "tune/tune_options.hpp"

namespace tula::cli {

// Every option of the schema that has a flag, bound to its field of `o`.
void add_schema_options(CLI::App& sub, tune::TuneOptions& o);

}  // namespace tula::cli

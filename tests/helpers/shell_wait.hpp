// Waiting inside the shell scripts that tests run, with the same patience as
// helpers/wait.hpp: a polling loop that gives up, saying what it waited for.
#pragma once
#include <string>

namespace tula::testing {

// Exit status of a script that gave up waiting.
inline constexpr int kShellGaveUp = 97;

// Shell code that polls `condition` (a shell command list) every 50 ms until
// it succeeds; after 1200 tries (a minute or more) it prints "gave up waiting
// for WHAT" on stderr and exits 97. Neither argument may hold a single quote
// (scripts go through run_command's sh -c '...'); `what` no double quote.
inline std::string shell_wait_until(const std::string& condition, const std::string& what) {
  return "tries=0; until " + condition + "; do tries=$((tries + 1)); if [ $tries -gt 1200 ]; then " +
         "echo \"gave up waiting for " + what + "\" >&2; exit " + std::to_string(kShellGaveUp) +
         "; fi; sleep 0.05; done; ";
}

}  // namespace tula::testing

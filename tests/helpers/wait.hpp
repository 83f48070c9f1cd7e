// Waiting for what another thread or process does, on a machine that may be
// busy: poll until it has happened, with a deadline far beyond the time it
// normally takes, so that only a real hang fails, and the failure names what
// never happened.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

namespace tula::testing {

// What every test waits for takes milliseconds on an idle machine; on a
// loaded two-core one it can take seconds, never a minute.
inline constexpr std::chrono::seconds kPatience{60};

// Success as soon as condition() holds; failure, naming `what`, once
// `patience` has passed without it.
template <class Condition>
::testing::AssertionResult eventually(Condition condition, const std::string& what,
                                      std::chrono::milliseconds patience = kPatience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return ::testing::AssertionFailure()
             << "gave up after " << std::chrono::duration<double>(patience).count()
             << " s waiting for " << what;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tula::testing

// Checks on the errors that the code under test throws.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tula::testing {

// What the E that fn() throws says, or "" when it throws none. Any other
// exception passes through (and fails the test as unexpected).
template <class E, class Fn>
std::string error_message(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

// Expects fn() to throw an E whose message holds every one of `parts`.
template <class E = std::runtime_error>
void expect_error(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
  } catch (const E& e) {
    const std::string message = e.what();
    for (const auto& part : parts) {
      EXPECT_NE(message.find(part), std::string::npos) << "message \"" << message << "\" lacks \"" << part << "\"";
    }
    return;
  }
  std::string wanted;
  for (const auto& part : parts) wanted += " \"" + part + "\"";
  ADD_FAILURE() << "no exception thrown; expected one naming" << wanted;
}

}  // namespace tula::testing

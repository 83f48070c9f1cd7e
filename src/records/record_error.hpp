// The error every record reader throws: the file (and line) and the key that
// is wrong, so a user can find it. No LibTorch here.
#pragma once
#include <stdexcept>

namespace tula::records {

class RecordError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tula::records

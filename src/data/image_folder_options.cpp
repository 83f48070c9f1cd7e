#include "data/image_folder_options.hpp"

#include <stdexcept>

namespace tula::data {

OnBadImage parse_on_bad_image(const std::string& word) {
  if (word == "skip") return OnBadImage::kSkip;
  if (word == "fail") return OnBadImage::kFail;
  throw std::invalid_argument("unknown on_bad_image '" + word + "' (skip, fail)");
}

std::string on_bad_image_name(OnBadImage value) { return value == OnBadImage::kSkip ? "skip" : "fail"; }

}  // namespace tula::data

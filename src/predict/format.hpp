// Human-readable numbers for reports: seconds as "1.2 ms"/"3.4 h", bytes as
// "1.5 GiB", money as "$12.34", significant digits for the rest.
#pragma once
#include <string>

namespace tula::predict {

std::string format_seconds(double s);
std::string format_bytes(double bytes);
std::string format_money(double usd);
std::string format_number(double v, int significant = 3);

}  // namespace tula::predict

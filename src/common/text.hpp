// Numbers and times as Tula prints them in messages, notes and reports.
// No LibTorch here.
#pragma once
#include <string>

namespace tula::common {

// Seconds as "1.2 ms"/"3.4 h", bytes as "1.5 GiB", money as "$12.34", and
// significant digits for the rest.
std::string format_seconds(double s);
std::string format_bytes(double bytes);
std::string format_money(double usd);
std::string format_number(double v, int significant = 3);

// 0.1234 -> "12.3%" (with `decimals` = 1).
std::string percent(double fraction, int decimals = 1);
// 0.1234 -> "+12.3%", -0.05 -> "-5.0%".
std::string signed_percent(double fraction, int decimals = 1);

// Seconds since the Unix epoch, now.
double unix_now();
// A wall-clock span as a progress display shows it: "1h02m", "3m05s", "42s";
// "?" for a negative or non-finite span.
std::string format_duration(double seconds);

// How a command shows its progress on stderr: --progress auto (a bar on a
// terminal, else lines), bar, lines or none. Throws std::invalid_argument
// naming the text for anything else.
enum class ProgressMode { Bar, Lines, None };
ProgressMode progress_mode(const std::string& text, bool stderr_is_terminal);
// "2026-11-25T17:30:00Z" for a Unix time.
std::string iso_utc(double unix_seconds);

}  // namespace tula::common

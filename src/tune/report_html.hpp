// The tune job's report for people: one self-contained HTML5 page (inline CSS
// and SVG, no script, no URL: it opens offline) written next to report.json.
// Sections: the job and how it ended; the bill (predicted against measured
// time and cost, accuracy, phases); the choice (the time/cost front with the
// knee and the chosen configuration, the plan's explanation); along the run
// (predicted against measured over elapsed time, accuracy, noise scale, with
// the resizes marked); the re-plans; the remaining-time error; notes.
// Every string from the report is escaped. Any optional part may be missing
// (a job that failed before planning still gets a page); the plan's part is
// the planner's JSON, read defensively, and a part that cannot be drawn says
// so instead of failing the page. Drawn with src/render. The page is also
// well-formed XML. No LibTorch here.
#pragma once
#include <string>

#include "records/tune_report.hpp"

namespace tula::tune {

// `report` as read from report.json (records::read_tune_report).
std::string render_report_html(const records::TuneReport& report);
// The page's content without the document around it (its header and
// sections), for a page that shows it inside its own; styled by report_css().
std::string render_report_body(const records::TuneReport& report);
const char* report_css();

}  // namespace tula::tune

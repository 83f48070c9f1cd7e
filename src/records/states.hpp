// The states a tune job and a service job move through, as enums with one
// string table each (what tune.json, report.json, the job store and the API
// write), and the moves allowed between them, written once here. No LibTorch.
//
//   tune phase (tune.json)   new -> profiled -> planned -> training -> done
//   tune outcome (report)    running -> succeeded | stopped | failed
//   job state (service)      queued -> profiling -> planning -> training ->
//                            succeeded | failed | cancelled
//   attempt end (service)    how one start of a job's tune process ended
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tula::records {

// Where `tula tune` is in a job; tune.json records it so --resume continues there.
enum class TunePhase { New, Profiled, Planned, Training, Done };

// How a tune job stands in report.json (and what `tula tune` exits with).
enum class TuneOutcome { Running, Succeeded, Stopped, Failed };

// A service job's state.
enum class JobState { Queued, Profiling, Planning, Training, Succeeded, Failed, Cancelled };

// How one start (attempt) of a job's tune process ended.
enum class AttemptEnd {
  Succeeded,          // its report says succeeded
  Stopped,            // stopped cleanly with a checkpoint (a signal, or the goal out of reach)
  Failed,             // its report says failed
  EndedWithoutReport, // exited or was killed before writing a final report
  StoppedWithServer,  // the server stopped it on the way down; resumes at the next start
  NotStarted,         // its tune process was running already (started by an earlier server)
  CouldNotStart,      // the process could not be started
};

std::string_view to_string(TunePhase phase);
std::string_view to_string(TuneOutcome outcome);
std::string_view to_string(JobState state);
std::string_view to_string(AttemptEnd end);

// As JSON: the same strings (found by nlohmann::json through ADL).
inline void to_json(nlohmann::json& j, TunePhase v) { j = to_string(v); }
inline void to_json(nlohmann::json& j, TuneOutcome v) { j = to_string(v); }
inline void to_json(nlohmann::json& j, JobState v) { j = to_string(v); }
inline void to_json(nlohmann::json& j, AttemptEnd v) { j = to_string(v); }

// nullopt for a string that names none.
std::optional<TunePhase> tune_phase_from_string(std::string_view text);
std::optional<TuneOutcome> tune_outcome_from_string(std::string_view text);
std::optional<JobState> job_state_from_string(std::string_view text);
std::optional<AttemptEnd> attempt_end_from_string(std::string_view text);

// Every job state, in the order of a job's life.
inline constexpr JobState kAllJobStates[] = {JobState::Queued,    JobState::Profiling, JobState::Planning,
                                             JobState::Training,  JobState::Succeeded, JobState::Failed,
                                             JobState::Cancelled};
inline constexpr TunePhase kAllTunePhases[] = {TunePhase::New, TunePhase::Profiled, TunePhase::Planned,
                                               TunePhase::Training, TunePhase::Done};
inline constexpr AttemptEnd kAllAttemptEnds[] = {AttemptEnd::Succeeded,         AttemptEnd::Stopped,
                                                 AttemptEnd::Failed,            AttemptEnd::EndedWithoutReport,
                                                 AttemptEnd::StoppedWithServer, AttemptEnd::NotStarted,
                                                 AttemptEnd::CouldNotStart};

// Forward only: a phase may be skipped (a job given a profile plans at once) but
// never revisited; tune's phases move the same way.
bool can_move(TunePhase from, TunePhase to);
// Forward only as well; any unfinished job may fail or be cancelled; a final
// state never changes.
bool can_move(JobState from, JobState to);

bool is_final(JobState state);
bool is_running(JobState state);  // profiling, planning or training: a tune process works on it
bool is_final(TuneOutcome outcome);

// The service state that shows a tune phase. The end (succeeded, failed,
// cancelled) is decided when the process exits, never from the phase.
JobState job_state_of(TunePhase phase);

// Whether an attempt that ended so counts against the resumes a job may use:
// it died, rather than stopped cleanly or never started.
bool counts_as_death(AttemptEnd end);

}  // namespace tula::records

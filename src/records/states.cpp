#include "records/states.hpp"

#include <array>
#include <utility>

namespace tula::records {

namespace {

// One table per enum: the only place its strings are written.
template <typename E, size_t N>
using Table = std::array<std::pair<E, std::string_view>, N>;

constexpr Table<TunePhase, 5> kTunePhases = {{{TunePhase::New, "new"},
                                              {TunePhase::Profiled, "profiled"},
                                              {TunePhase::Planned, "planned"},
                                              {TunePhase::Training, "training"},
                                              {TunePhase::Done, "done"}}};

constexpr Table<TuneOutcome, 4> kTuneOutcomes = {{{TuneOutcome::Running, "running"},
                                                  {TuneOutcome::Succeeded, "succeeded"},
                                                  {TuneOutcome::Stopped, "stopped"},
                                                  {TuneOutcome::Failed, "failed"}}};

constexpr Table<JobState, 7> kJobStates = {{{JobState::Queued, "queued"},
                                            {JobState::Profiling, "profiling"},
                                            {JobState::Planning, "planning"},
                                            {JobState::Training, "training"},
                                            {JobState::Succeeded, "succeeded"},
                                            {JobState::Failed, "failed"},
                                            {JobState::Cancelled, "cancelled"}}};

constexpr Table<AttemptEnd, 7> kAttemptEnds = {{{AttemptEnd::Succeeded, "succeeded"},
                                                {AttemptEnd::Stopped, "stopped"},
                                                {AttemptEnd::Failed, "failed"},
                                                {AttemptEnd::EndedWithoutReport, "ended_without_report"},
                                                {AttemptEnd::StoppedWithServer, "stopped_with_server"},
                                                {AttemptEnd::NotStarted, "not_started"},
                                                {AttemptEnd::CouldNotStart, "could_not_start"}}};

template <typename E, size_t N>
std::string_view name_in(const Table<E, N>& table, E value) {
  for (const auto& [e, name] : table)
    if (e == value) return name;
  return "unknown";
}

template <typename E, size_t N>
std::optional<E> value_in(const Table<E, N>& table, std::string_view text) {
  for (const auto& [e, name] : table)
    if (name == text) return e;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(TunePhase phase) { return name_in(kTunePhases, phase); }
std::string_view to_string(TuneOutcome outcome) { return name_in(kTuneOutcomes, outcome); }
std::string_view to_string(JobState state) { return name_in(kJobStates, state); }
std::string_view to_string(AttemptEnd end) { return name_in(kAttemptEnds, end); }

std::optional<TunePhase> tune_phase_from_string(std::string_view text) { return value_in(kTunePhases, text); }
std::optional<TuneOutcome> tune_outcome_from_string(std::string_view text) { return value_in(kTuneOutcomes, text); }
std::optional<JobState> job_state_from_string(std::string_view text) { return value_in(kJobStates, text); }
std::optional<AttemptEnd> attempt_end_from_string(std::string_view text) { return value_in(kAttemptEnds, text); }

bool can_move(TunePhase from, TunePhase to) { return static_cast<int>(to) > static_cast<int>(from); }

bool is_final(JobState s) { return s == JobState::Succeeded || s == JobState::Failed || s == JobState::Cancelled; }

bool is_running(JobState s) { return s == JobState::Profiling || s == JobState::Planning || s == JobState::Training; }

bool is_final(TuneOutcome outcome) { return outcome != TuneOutcome::Running; }

bool can_move(JobState from, JobState to) {
  if (is_final(from) || from == to) return false;
  if (to == JobState::Failed || to == JobState::Cancelled) return true;
  if (to == JobState::Succeeded) return is_running(from);  // only a job whose process ran can succeed
  return static_cast<int>(to) > static_cast<int>(from);
}

JobState job_state_of(TunePhase phase) {
  switch (phase) {
    case TunePhase::New:
      return JobState::Profiling;
    case TunePhase::Profiled:
      return JobState::Planning;
    case TunePhase::Planned:
    case TunePhase::Training:
    case TunePhase::Done:
      return JobState::Training;
  }
  return JobState::Training;
}

bool counts_as_death(AttemptEnd end) {
  return end == AttemptEnd::Failed || end == AttemptEnd::EndedWithoutReport || end == AttemptEnd::CouldNotStart;
}

}  // namespace tula::records

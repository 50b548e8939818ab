#pragma once
// Leveled logging to stderr, in the spirit of kube's klog:
//
//   E1126 06:39:12.123456 scheduler] informer "pods" not synced after 10s: ...
//   I1126 06:39:12.123456 grove] create PodClique default/pcs-0-prefill
//
// Errors and warnings always print. Info lines carry a verbosity level and
// print when the level is <= the process's verbosity (`-v N` on the command
// line, SetLogVerbosity): 0 what an operator always wants to see (start,
// leadership, missing APIs), 1 actions (creates, deletes, evictions,
// gang terminations), 2 per-object reconcile and scheduling details,
// 3+ debugging.
//
// Thread-safety: all functions are thread-safe; each line is written with
// one write, so lines from several threads never interleave.

#include <string_view>

namespace copse {

void SetLogVerbosity(int level);
int LogVerbosity();
// Whether Log(level, ...) would print: guard lines that are costly to build.
bool LogEnabled(int level);

void Log(int level, std::string_view component, std::string_view message);
void LogWarning(std::string_view component, std::string_view message);
void LogError(std::string_view component, std::string_view message);

}  // namespace copse

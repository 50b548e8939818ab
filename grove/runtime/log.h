#pragma once
// Minimal leveled logging of the Grove backend to stderr:
//   0 errors (always), 1 actions (creates, deletes, gang terminations),
//   2 reconcile details. The level is process-wide (SetLogLevel).
//
// Thread-safety: thread-safe; each line is written atomically.

#include <string_view>

namespace copse::grove::runtime {

void SetLogLevel(int level);
int LogLevel();
void Log(int level, std::string_view component, std::string_view message);

}  // namespace copse::grove::runtime

#pragma once
// The comparison of one trace replayed under several configurations
// (replay/replayer.h): JSON for machines, a self-contained HTML page with
// inline SVG charts for people.
//
// Compare() names, per figure, the configuration that did best (null on a
// tie): more gangs and pods placed, lower overall wait p50/p99, higher mean
// GPU utilization, fewer mean stranded GPUs, more gangs inside one rack, fewer
// victims. Decisions differ when a pod went to another node, or was placed
// in one configuration and not in another, or at another time.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "replay/replayer.h"
#include "replay/trace.h"

namespace copse::replay {

struct DecisionDiff {
  std::string pod;
  std::vector<Decision> per_config;  // in configuration order
};

struct Comparison {
  std::vector<ConfigResult> results;
  // figure -> configuration name; absent when tied or only one configuration.
  std::map<std::string, std::string> best;
  int64_t differing = 0;                  // pods whose decisions differ
  std::vector<DecisionDiff> differences;  // the first `max_differences`
};

Comparison Compare(std::vector<ConfigResult> results, size_t max_differences = 1000);

std::string ReportJson(const TraceHeader& header, const Comparison& comparison);
std::string ReportHtml(const TraceHeader& header, const Comparison& comparison);

}  // namespace copse::replay

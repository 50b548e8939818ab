#pragma once
// The two configurations shipped with the example trace,
// deploy/examples/traces/pack.yaml and spread.yaml, embedded at build time
// (bench/CMakeLists.txt) so that `copse bench replay` runs anywhere.
#include <string_view>

namespace copse::bench {

extern const std::string_view kReplayPackYaml;
extern const std::string_view kReplaySpreadYaml;

}  // namespace copse::bench

// The Grove codecs (grove/api/types.h): the first byte picks the kind, the
// rest is the JSON; the property is tests/fuzz/round_trip.h's.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "grove/api/types.h"
#include "tests/fuzz/round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view json(reinterpret_cast<const char*>(data) + 1, size - 1);
  namespace grove = copse::grove::api;
  using copse::fuzz::RoundTrip;
  // Offset so that the digits pick the kinds in order: '0' is a PodCliqueSet.
  switch ((data[0] + 2) % 5) {
    case 0:
      RoundTrip<grove::PodCliqueSet>(json);
      break;
    case 1:
      RoundTrip<grove::PodClique>(json);
      break;
    case 2:
      RoundTrip<grove::PodCliqueScalingGroup>(json);
      break;
    case 3:
      RoundTrip<grove::ClusterTopologyBinding>(json);
      break;
    case 4:
      RoundTrip<grove::PodGang>(json);
      break;
  }
  return 0;
}

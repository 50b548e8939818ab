// The typed codecs of kube/ (Pod, Node, PodGroup, CopsePodGroup, Workload;
// grove_codec_fuzz.cc has the Grove types): the first byte picks the kind,
// the rest is the JSON; the property is tests/fuzz/round_trip.h's.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kube/node.h"
#include "kube/pod.h"
#include "kube/pod_group.h"
#include "kube/workload.h"
#include "tests/fuzz/round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view json(reinterpret_cast<const char*>(data) + 1, size - 1);
  namespace kube = copse::kube;
  using copse::fuzz::RoundTrip;
  // Offset so that the digits pick the kinds in order: '0' is a Pod.
  switch ((data[0] + 2) % 5) {
    case 0:
      RoundTrip<kube::Pod>(json);
      break;
    case 1:
      RoundTrip<kube::Node>(json);
      break;
    case 2:
      RoundTrip<kube::PodGroup>(json);
      break;
    case 3:
      RoundTrip<kube::CopsePodGroup>(json);
      break;
    case 4:
      RoundTrip<kube::Workload>(json);
      break;
  }
  return 0;
}

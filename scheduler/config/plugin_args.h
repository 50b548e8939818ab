#pragma once
// Decoders for `pluginConfig[].args`: one per plugin, turning the YAML args
// into the plugin's Args struct (plugins::FitArgs, ...) carried in a
// std::any, which the plugin's factory then validates.
//
// Decoding starts from the Args struct's defaults and overrides only the
// fields present, as kube-scheduler's defaulting does (e.g. a scoringStrategy
// without resources scores cpu:1, memory:1). Field names are the
// kubescheduler.config.k8s.io/v1 ones:
//
//   NodeResourcesFitArgs        ignoredResources, ignoredResourceGroups,
//                               scoringStrategy{type, resources[{name, weight}],
//                               requestedToCapacityRatio{shape[{utilization, score}]}},
//                               copse: acceleratorStrategy{type (MostAllocated |
//                               LeastAllocated | None), resources[{name, weight}]}
//   NodeResourcesBalancedAllocationArgs  resources[{name, weight}],
//                               copse: skipAcceleratorPods
//   DomainPackingArgs (copse)   levels[] (node label keys, outermost first),
//                               resources[{name, weight}]
//   DefaultPreemptionArgs       minCandidateNodesPercentage, minCandidateNodesAbsolute
//   InterPodAffinityArgs        hardPodAffinityWeight, ignorePreferredTermsOfExistingPods
//   NodeAffinityArgs            addedAffinity{requiredDuringSchedulingIgnoredDuringExecution
//                               {nodeSelectorTerms},
//                               preferredDuringSchedulingIgnoredDuringExecution}
//   PodTopologySpreadArgs       defaultConstraints[...], defaultingType (System | List;
//                               absent: List, copse's default -- kube defaults to System)
//
// `args` may carry its own apiVersion (kubescheduler.config.k8s.io/v1 or
// copse.dev/v1alpha1) and kind (which must be the decoder's kind).
//
// Plugins without a decoder take no arguments: empty args are accepted,
// anything else is an error naming the field.
//
// Thread-safety: fill a set once, then read it from any thread.

#include <any>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "core/result.h"
#include "scheduler/config/yaml_reader.h"

namespace copse::scheduler::config {

// Decodes the fields of one plugin's args (apiVersion and kind already
// consumed). Errors go to `args.errors()` with paths under `args.path()`; the
// caller calls args.Finish() afterwards.
using ArgsDecoder = std::function<std::any(MapReader& args)>;

class ArgsDecoders {
 public:
  struct Entry {
    std::string kind;  // e.g. "NodeResourcesFitArgs"
    ArgsDecoder decode;
  };

  // kAlreadyExists when the plugin already has a decoder.
  copse::Status Register(std::string plugin_name, std::string kind, ArgsDecoder decoder);
  const Entry* Find(std::string_view plugin_name) const noexcept;

 private:
  std::map<std::string, Entry, std::less<>> decoders_;
};

// Decoders for every in-tree plugin that takes arguments.
copse::Status RegisterDefaultArgsDecoders(ArgsDecoders& decoders);
// A set holding the in-tree decoders.
const ArgsDecoders& DefaultArgsDecoders();

}  // namespace copse::scheduler::config

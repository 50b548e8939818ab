#include "scheduler/config/plugin_args.h"

#include <utility>
#include <vector>

#include "core/labels.h"
#include "core/pod_info.h"
#include "plugins/balanced_allocation/balanced_allocation.h"
#include "plugins/default_preemption/default_preemption.h"
#include "plugins/domain_packing/domain_packing.h"
#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/node_affinity/node_affinity.h"
#include "plugins/node_resources_fit/fit.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"

namespace copse::scheduler::config {
namespace {

using plugins::ResourceSpec;

// [{name, weight}]; a missing or zero weight is 1 (kube's defaulting).
std::vector<ResourceSpec> DecodeResources(const YAML::Node& node, const std::string& path,
                                          FieldErrors& errors) {
  std::vector<ResourceSpec> out;
  const std::vector<YAML::Node> items = ReadList(node, path, errors);
  for (size_t i = 0; i < items.size(); ++i) {
    MapReader r(items[i], IndexPath(path, i), errors);
    ResourceSpec spec;
    if (!r.String("name", spec.name) || spec.name.empty()) r.errors().Required(r.Path("name"));
    int64_t weight = 0;
    if (r.Int64("weight", weight)) spec.weight = weight == 0 ? 1 : weight;
    r.Finish();
    out.push_back(std::move(spec));
  }
  return out;
}

std::vector<Requirement> DecodeRequirements(const YAML::Node& node, const std::string& path,
                                            FieldErrors& errors) {
  std::vector<Requirement> out;
  const std::vector<YAML::Node> items = ReadList(node, path, errors);
  for (size_t i = 0; i < items.size(); ++i) {
    MapReader r(items[i], IndexPath(path, i), errors);
    Requirement req;
    r.String("key", req.key);
    std::string op;
    if (r.String("operator", op)) {
      Result<SelectorOp> parsed = ParseSelectorOp(op);
      if (parsed.ok()) {
        req.op = *parsed;
      } else {
        errors.NotSupported(r.Path("operator"), Quote(op),
                            {"DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"});
      }
    } else {
      errors.Required(r.Path("operator"));
    }
    r.StringList("values", req.values);
    r.Finish();
    out.push_back(std::move(req));
  }
  return out;
}

NodeSelectorTerm DecodeNodeSelectorTerm(const YAML::Node& node, const std::string& path,
                                        FieldErrors& errors) {
  MapReader r(node, path, errors);
  NodeSelectorTerm term;
  if (std::optional<YAML::Node> n = r.Get("matchExpressions"))
    term.match_expressions = DecodeRequirements(*n, r.Path("matchExpressions"), errors);
  if (std::optional<YAML::Node> n = r.Get("matchFields"))
    term.match_fields = DecodeRequirements(*n, r.Path("matchFields"), errors);
  r.Finish();
  return term;
}

std::optional<LabelSelector> DecodeLabelSelector(const YAML::Node& node, const std::string& path,
                                                 FieldErrors& errors) {
  MapReader r(node, path, errors);
  const size_t before = errors.size();
  Labels match_labels;
  if (std::optional<YAML::Node> n = r.Get("matchLabels")) {
    MapReader labels(*n, r.Path("matchLabels"), errors);
    if (n->IsMap()) {
      for (auto it = n->begin(); it != n->end(); ++it) {
        const std::string key = it->first.Scalar();
        std::string value;
        if (labels.String(key, value)) match_labels[key] = value;
      }
    }
    labels.Finish();
  }
  std::vector<Requirement> expressions;
  if (std::optional<YAML::Node> n = r.Get("matchExpressions"))
    expressions = DecodeRequirements(*n, r.Path("matchExpressions"), errors);
  r.Finish();
  if (errors.size() != before) return std::nullopt;
  Result<LabelSelector> selector = LabelSelector::FromParts(match_labels, std::move(expressions));
  if (!selector.ok()) {
    errors.Invalid(path, "object", selector.error().message);
    return std::nullopt;
  }
  return *selector;
}

std::any DecodeFitArgs(MapReader& r) {
  plugins::FitArgs args;
  r.StringList("ignoredResources", args.ignored_resources);
  r.StringList("ignoredResourceGroups", args.ignored_resource_groups);
  if (std::optional<YAML::Node> n = r.Get("scoringStrategy")) {
    MapReader s(*n, r.Path("scoringStrategy"), r.errors());
    plugins::ScoringStrategy strategy;
    std::string type;
    s.String("type", type);
    if (type == "LeastAllocated") {
      strategy.type = plugins::ScoringStrategyType::kLeastAllocated;
    } else if (type == "MostAllocated") {
      strategy.type = plugins::ScoringStrategyType::kMostAllocated;
    } else if (type == "RequestedToCapacityRatio") {
      strategy.type = plugins::ScoringStrategyType::kRequestedToCapacityRatio;
    } else {
      s.errors().NotSupported(s.Path("type"), Quote(type),
                              {"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"});
    }
    if (std::optional<YAML::Node> res = s.Get("resources")) {
      std::vector<ResourceSpec> resources = DecodeResources(*res, s.Path("resources"), s.errors());
      if (!resources.empty()) strategy.resources = std::move(resources);
    }
    if (std::optional<YAML::Node> ratio = s.Get("requestedToCapacityRatio")) {
      MapReader rr(*ratio, s.Path("requestedToCapacityRatio"), s.errors());
      if (std::optional<YAML::Node> shape = rr.Get("shape")) {
        const std::string path = rr.Path("shape");
        const std::vector<YAML::Node> points = ReadList(*shape, path, rr.errors());
        for (size_t i = 0; i < points.size(); ++i) {
          MapReader p(points[i], IndexPath(path, i), rr.errors());
          plugins::UtilizationShapePoint point;
          p.Int32("utilization", point.utilization);
          p.Int32("score", point.score);
          p.Finish();
          strategy.shape.push_back(point);
        }
      }
      rr.Finish();
      if (strategy.type != plugins::ScoringStrategyType::kRequestedToCapacityRatio) {
        s.errors().Forbidden(s.Path("requestedToCapacityRatio"),
                             "only allowed with type RequestedToCapacityRatio");
      }
    }
    s.Finish();
    args.scoring_strategy = std::move(strategy);
  }
  if (std::optional<YAML::Node> n = r.Get("acceleratorStrategy")) {
    MapReader a(*n, r.Path("acceleratorStrategy"), r.errors());
    plugins::AcceleratorStrategy strategy;
    std::string type;
    if (a.String("type", type)) {
      if (type == "MostAllocated") {
        strategy.type = plugins::ScoringStrategyType::kMostAllocated;
      } else if (type == "LeastAllocated") {
        strategy.type = plugins::ScoringStrategyType::kLeastAllocated;
      } else if (type == "None") {
        strategy.enabled = false;
      } else {
        a.errors().NotSupported(a.Path("type"), Quote(type),
                                {"LeastAllocated", "MostAllocated", "None"});
      }
    }
    if (std::optional<YAML::Node> res = a.Get("resources")) {
      strategy.resources = DecodeResources(*res, a.Path("resources"), a.errors());
    }
    a.Finish();
    args.accelerator_strategy = std::move(strategy);
  }
  return args;
}

std::any DecodeBalancedAllocationArgs(MapReader& r) {
  plugins::BalancedAllocationArgs args;
  if (std::optional<YAML::Node> n = r.Get("resources")) {
    std::vector<ResourceSpec> resources = DecodeResources(*n, r.Path("resources"), r.errors());
    if (!resources.empty()) args.resources = std::move(resources);
  }
  r.Bool("skipAcceleratorPods", args.skip_accelerator_pods);
  return args;
}

std::any DecodeDomainPackingArgs(MapReader& r) {
  plugins::DomainPackingArgs args;
  r.StringList("levels", args.levels);
  if (std::optional<YAML::Node> n = r.Get("resources")) {
    args.resources = DecodeResources(*n, r.Path("resources"), r.errors());
  }
  return args;
}

std::any DecodeDefaultPreemptionArgs(MapReader& r) {
  plugins::DefaultPreemptionArgs args;
  r.Int32("minCandidateNodesPercentage", args.min_candidate_nodes_percentage);
  r.Int32("minCandidateNodesAbsolute", args.min_candidate_nodes_absolute);
  return args;
}

std::any DecodeInterPodAffinityArgs(MapReader& r) {
  plugins::InterPodAffinityArgs args;
  r.Int32("hardPodAffinityWeight", args.hard_pod_affinity_weight);
  r.Bool("ignorePreferredTermsOfExistingPods", args.ignore_preferred_terms_of_existing_pods);
  return args;
}

std::any DecodeNodeAffinityArgs(MapReader& r) {
  plugins::NodeAffinityArgs args;
  if (std::optional<YAML::Node> n = r.Get("addedAffinity")) {
    MapReader a(*n, r.Path("addedAffinity"), r.errors());
    if (std::optional<YAML::Node> req = a.Get("requiredDuringSchedulingIgnoredDuringExecution")) {
      MapReader sel(*req, a.Path("requiredDuringSchedulingIgnoredDuringExecution"), a.errors());
      NodeSelector selector;
      if (std::optional<YAML::Node> terms = sel.Get("nodeSelectorTerms")) {
        const std::string path = sel.Path("nodeSelectorTerms");
        const std::vector<YAML::Node> items = ReadList(*terms, path, sel.errors());
        for (size_t i = 0; i < items.size(); ++i) {
          selector.terms.push_back(
              DecodeNodeSelectorTerm(items[i], IndexPath(path, i), sel.errors()));
        }
      }
      sel.Finish();
      args.added_required = std::move(selector);
    }
    if (std::optional<YAML::Node> pref = a.Get("preferredDuringSchedulingIgnoredDuringExecution")) {
      const std::string path = a.Path("preferredDuringSchedulingIgnoredDuringExecution");
      const std::vector<YAML::Node> items = ReadList(*pref, path, a.errors());
      for (size_t i = 0; i < items.size(); ++i) {
        MapReader t(items[i], IndexPath(path, i), a.errors());
        PreferredSchedulingTerm term;
        t.Int32("weight", term.weight);
        if (std::optional<YAML::Node> p = t.Get("preference")) {
          term.term = DecodeNodeSelectorTerm(*p, t.Path("preference"), t.errors());
        }
        t.Finish();
        args.added_preferred.push_back(std::move(term));
      }
    }
    a.Finish();
  }
  return args;
}

bool DecodePolicy(MapReader& r, std::string_view key, NodeInclusionPolicy& out) {
  std::string v;
  if (!r.String(key, v)) return false;
  if (v == "Honor") {
    out = NodeInclusionPolicy::kHonor;
  } else if (v == "Ignore") {
    out = NodeInclusionPolicy::kIgnore;
  } else {
    r.errors().NotSupported(r.Path(key), Quote(v), {"Honor", "Ignore"});
    return false;
  }
  return true;
}

std::any DecodePodTopologySpreadArgs(MapReader& r) {
  plugins::PodTopologySpreadArgs args;
  if (std::optional<YAML::Node> n = r.Get("defaultConstraints")) {
    const std::string path = r.Path("defaultConstraints");
    const std::vector<YAML::Node> items = ReadList(*n, path, r.errors());
    for (size_t i = 0; i < items.size(); ++i) {
      MapReader c(items[i], IndexPath(path, i), r.errors());
      TopologySpreadConstraint constraint;
      c.Int32("maxSkew", constraint.max_skew);
      c.String("topologyKey", constraint.topology_key);
      std::string when;
      c.String("whenUnsatisfiable", when);
      if (when == "DoNotSchedule") {
        constraint.when_unsatisfiable = UnsatisfiableConstraintAction::kDoNotSchedule;
      } else if (when == "ScheduleAnyway") {
        constraint.when_unsatisfiable = UnsatisfiableConstraintAction::kScheduleAnyway;
      } else {
        c.errors().NotSupported(c.Path("whenUnsatisfiable"), Quote(when),
                                {"DoNotSchedule", "ScheduleAnyway"});
      }
      if (std::optional<YAML::Node> sel = c.Get("labelSelector")) {
        constraint.label_selector = DecodeLabelSelector(*sel, c.Path("labelSelector"), c.errors());
      }
      c.Int32("minDomains", constraint.min_domains);
      DecodePolicy(c, "nodeAffinityPolicy", constraint.node_affinity_policy);
      DecodePolicy(c, "nodeTaintsPolicy", constraint.node_taints_policy);
      c.StringList("matchLabelKeys", constraint.match_label_keys);
      c.Finish();
      // kube's validateConstraintNotRepeat: a {topologyKey, whenUnsatisfiable} pair once.
      for (size_t j = 0; j < args.default_constraints.size(); ++j) {
        const TopologySpreadConstraint& prev = args.default_constraints[j];
        if (prev.topology_key == constraint.topology_key &&
            prev.when_unsatisfiable == constraint.when_unsatisfiable) {
          r.errors().Duplicate(IndexPath(path, i),
                               "{" + Quote(constraint.topology_key) + ", " + Quote(when) + "}");
          break;
        }
      }
      args.default_constraints.push_back(std::move(constraint));
    }
  }
  std::string type;
  if (r.String("defaultingType", type)) {
    if (type == "System") {
      args.defaulting_type = plugins::SpreadDefaultingType::kSystem;
    } else if (type == "List") {
      args.defaulting_type = plugins::SpreadDefaultingType::kList;
    } else {
      r.errors().NotSupported(r.Path("defaultingType"), Quote(type), {"List", "System"});
    }
  }
  return args;
}

}  // namespace

copse::Status ArgsDecoders::Register(std::string plugin_name, std::string kind,
                                     ArgsDecoder decoder) {
  if (decoders_.count(plugin_name) != 0) {
    return MakeError(ErrorCode::kAlreadyExists,
                     "plugin \"" + plugin_name + "\" already has an argument decoder");
  }
  decoders_.emplace(std::move(plugin_name), Entry{std::move(kind), std::move(decoder)});
  return copse::Status::Ok();
}

const ArgsDecoders::Entry* ArgsDecoders::Find(std::string_view plugin_name) const noexcept {
  auto it = decoders_.find(plugin_name);
  return it == decoders_.end() ? nullptr : &it->second;
}

copse::Status RegisterDefaultArgsDecoders(ArgsDecoders& decoders) {
  const std::tuple<std::string_view, std::string_view, ArgsDecoder> entries[] = {
      {plugins::kNodeResourcesFitName, "NodeResourcesFitArgs", &DecodeFitArgs},
      {plugins::kBalancedAllocationName, "NodeResourcesBalancedAllocationArgs",
       &DecodeBalancedAllocationArgs},
      {plugins::kDefaultPreemptionName, "DefaultPreemptionArgs", &DecodeDefaultPreemptionArgs},
      {plugins::kDomainPackingName, "DomainPackingArgs", &DecodeDomainPackingArgs},
      {plugins::kInterPodAffinityName, "InterPodAffinityArgs", &DecodeInterPodAffinityArgs},
      {plugins::kNodeAffinityName, "NodeAffinityArgs", &DecodeNodeAffinityArgs},
      {plugins::kPodTopologySpreadName, "PodTopologySpreadArgs", &DecodePodTopologySpreadArgs},
  };
  for (const auto& [name, kind, decoder] : entries) {
    copse::Status s = decoders.Register(std::string(name), std::string(kind), decoder);
    if (!s.ok()) return s;
  }
  return copse::Status::Ok();
}

const ArgsDecoders& DefaultArgsDecoders() {
  static const ArgsDecoders* const decoders = [] {
    auto* d = new ArgsDecoders();
    copse::Status s = RegisterDefaultArgsDecoders(*d);
    (void)s;  // a fresh set cannot hold duplicates
    return d;
  }();
  return *decoders;
}

}  // namespace copse::scheduler::config

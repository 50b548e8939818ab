#include "apiserver/disruption.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace copse::apiserver {

using nlohmann::json;

namespace {

// IntOrString scaled against `total` ("50%" -> ceil(total / 2)).
int64_t ScaledValue(const json& v, int64_t total) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (!s.empty() && s.back() == '%') {
      s.pop_back();
      const double pct = std::atof(s.c_str());
      return static_cast<int64_t>(std::ceil(pct * static_cast<double>(total) / 100.0));
    }
    return std::atoll(s.c_str());
  }
  return 0;
}

}  // namespace

Result<std::optional<LabelSelectorExpr>> LabelSelectorFromJson(const json* sel) {
  if (sel == nullptr || sel->is_null()) return std::optional<LabelSelectorExpr>();
  if (!sel->is_object()) return BadRequest("selector: expected an object");
  std::vector<LabelRequirement> reqs;
  if (auto it = sel->find("matchLabels"); it != sel->end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      if (!v.is_string()) continue;
      reqs.push_back(LabelRequirement{k, LabelRequirement::Op::kEquals, {v.get<std::string>()}});
    }
  }
  if (auto it = sel->find("matchExpressions"); it != sel->end() && it->is_array()) {
    for (const auto& e : *it) {
      if (!e.is_object()) continue;
      LabelRequirement req;
      req.key = e.value("key", "");
      const std::string op = e.value("operator", "");
      if (op == "In") {
        req.op = LabelRequirement::Op::kIn;
      } else if (op == "NotIn") {
        req.op = LabelRequirement::Op::kNotIn;
      } else if (op == "Exists") {
        req.op = LabelRequirement::Op::kExists;
      } else if (op == "DoesNotExist") {
        req.op = LabelRequirement::Op::kDoesNotExist;
      } else {
        return BadRequest("selector: unsupported operator " + op);
      }
      if (auto vals = e.find("values"); vals != e.end() && vals->is_array()) {
        for (const auto& v : *vals) {
          if (v.is_string()) req.values.push_back(v.get<std::string>());
        }
      }
      reqs.push_back(std::move(req));
    }
  }
  return std::optional<LabelSelectorExpr>(LabelSelectorExpr(std::move(reqs)));
}

std::optional<DisruptionStatus> ComputeDisruption(const json& pdb,
                                                  const std::vector<ObjectPtr>& pods) {
  auto sel = LabelSelectorFromJson(FindPath(pdb, "spec.selector"));
  if (!sel.ok() || !sel->has_value()) return std::nullopt;
  const LabelSelectorExpr& selector = **sel;
  DisruptionStatus out;
  for (const auto& p : pods) {
    if (p->pod_terminal || !selector.Matches(p->labels)) continue;
    ++out.expected_pods;
    if (p->pod_ready && !p->deleting) ++out.current_healthy;
  }
  if (const json* min = FindPath(pdb, "spec.minAvailable"); min != nullptr && !min->is_null()) {
    out.desired_healthy = ScaledValue(*min, out.expected_pods);
  } else if (const json* max = FindPath(pdb, "spec.maxUnavailable");
             max != nullptr && !max->is_null()) {
    out.desired_healthy =
        std::max<int64_t>(0, out.expected_pods - ScaledValue(*max, out.expected_pods));
  }
  out.disruptions_allowed = std::max<int64_t>(0, out.current_healthy - out.desired_healthy);
  return out;
}

}  // namespace copse::apiserver

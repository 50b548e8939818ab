#include "kube/pod_disruption_budget.h"

#include "kube/codec_json.h"

namespace copse::kube {

using codec::Element;
using codec::Emit;
using codec::ForEachField;
using codec::Json;
using codec::Prev;
using codec::Put;
using codec::PutOpt;
using codec::Read;
using codec::Reader;

namespace {

bool ReadSpec(Reader& r, Element e, PodDisruptionBudgetSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "minAvailable") return Read(r, v, out.min_available);
    if (key == "maxUnavailable") return Read(r, v, out.max_unavailable);
    if (key == "selector") return Read(r, v, out.selector);
    if (key == "unhealthyPodEvictionPolicy") return Read(r, v, out.unhealthy_pod_eviction_policy);
    return true;
  });
}

bool ReadStatus(Reader& r, Element e, PodDisruptionBudgetStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "observedGeneration") return Read(r, v, out.observed_generation);
    if (key == "disruptedPods") return Read(r, v, out.disrupted_pods);
    if (key == "disruptionsAllowed") return Read(r, v, out.disruptions_allowed);
    if (key == "currentHealthy") return Read(r, v, out.current_healthy);
    if (key == "desiredHealthy") return Read(r, v, out.desired_healthy);
    if (key == "expectedPods") return Read(r, v, out.expected_pods);
    if (key == "conditions") return Read(r, v, out.conditions);
    return true;
  });
}

void OverlaySpec(Json& j, const PodDisruptionBudgetSpec& now,
                 const PodDisruptionBudgetSpec* before) {
  using S = PodDisruptionBudgetSpec;
  PutOpt(j, "minAvailable", now.min_available, Prev(before, &S::min_available));
  PutOpt(j, "selector", now.selector, Prev(before, &S::selector));
  PutOpt(j, "maxUnavailable", now.max_unavailable, Prev(before, &S::max_unavailable));
  PutOpt(j, "unhealthyPodEvictionPolicy", now.unhealthy_pod_eviction_policy,
         Prev(before, &S::unhealthy_pod_eviction_policy));
}

void OverlayStatus(Json& j, const PodDisruptionBudgetStatus& now,
                   const PodDisruptionBudgetStatus* before) {
  using S = PodDisruptionBudgetStatus;
  Put(j, "observedGeneration", now.observed_generation, Prev(before, &S::observed_generation));
  Put(j, "disruptedPods", now.disrupted_pods, Prev(before, &S::disrupted_pods));
  Put(j, "disruptionsAllowed", now.disruptions_allowed, Prev(before, &S::disruptions_allowed),
      Emit::kAlways);
  Put(j, "currentHealthy", now.current_healthy, Prev(before, &S::current_healthy), Emit::kAlways);
  Put(j, "desiredHealthy", now.desired_healthy, Prev(before, &S::desired_healthy), Emit::kAlways);
  Put(j, "expectedPods", now.expected_pods, Prev(before, &S::expected_pods), Emit::kAlways);
  codec::PutConditions(j, "conditions", now.conditions, Prev(before, &S::conditions));
}

}  // namespace

Result<int32_t> PodDisruptionBudget::DesiredHealthy(int32_t expected_pods) const {
  if (spec.max_unavailable.has_value()) {
    Result<int32_t> unavailable = spec.max_unavailable->ScaledValue(expected_pods, true);
    if (!unavailable.ok()) {
      return MakeError(ErrorCode::kInvalid, "spec.maxUnavailable: " + unavailable.error().message);
    }
    int32_t desired = expected_pods - *unavailable;
    return desired > 0 ? desired : 0;
  }
  if (spec.min_available.has_value()) {
    Result<int32_t> available = spec.min_available->ScaledValue(expected_pods, true);
    if (!available.ok()) {
      return MakeError(ErrorCode::kInvalid, "spec.minAvailable: " + available.error().message);
    }
    return *available;
  }
  return 0;
}

Result<PodDisruptionBudget> PodDisruptionBudget::Decode(std::string_view json) {
  Result<PodDisruptionBudget> pdb = codec::DecodeObject<PodDisruptionBudget>(
      json, kKind, [](Reader& r, std::string_view key, Element v, PodDisruptionBudget& out) {
        if (key == "spec") return ReadSpec(r, v, out.spec);
        if (key == "status") return ReadStatus(r, v, out.status);
        return true;
      });
  // policy/v1beta1 (the only version up to v1.20): an empty selector selects
  // no pod, where policy/v1's selects every pod in the namespace.
  if (pdb.ok() && pdb->api_version == kApiVersionV1beta1 && pdb->spec.selector &&
      pdb->spec.selector->Empty()) {
    pdb->spec.selector.reset();
  }
  return pdb;
}

std::string PodDisruptionBudget::Encode() const {
  return codec::EncodeObject(
      *this, kApiVersion, kKind,
      [this](const PodDisruptionBudget& before) {
        return spec == before.spec && status == before.status;
      },
      [this](Json& root, const PodDisruptionBudget* before) {
        codec::PutObject(root, "spec", [&](Json& j) {
          OverlaySpec(j, spec, Prev(before, &PodDisruptionBudget::spec));
        });
        codec::PutObject(root, "status", [&](Json& j) {
          OverlayStatus(j, status, Prev(before, &PodDisruptionBudget::status));
        });
      });
}

}  // namespace copse::kube

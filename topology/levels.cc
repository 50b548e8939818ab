#include "topology/levels.h"

#include <utility>

#include "core/labels.h"
#include "core/scheduling_types.h"

namespace copse::topology {
namespace {

std::string FieldAt(const LevelFieldNames& fields, size_t i, std::string_view leaf) {
  std::string out(fields.levels);
  out += '[';
  out += std::to_string(i);
  out += "].";
  out += leaf;
  return out;
}

std::string_view DerivedName(std::string_view key) {
  const size_t slash = key.rfind('/');
  return slash == std::string_view::npos ? key : key.substr(slash + 1);
}

Error Invalid(std::string message) { return MakeError(ErrorCode::kInvalid, std::move(message)); }

}  // namespace

Result<TopologyLevels> TopologyLevels::Create(std::vector<TopologyLevel> levels,
                                              const LevelFieldNames& fields) {
  if (levels.empty()) {
    return Invalid(std::string(fields.levels) + ": must have at least one level");
  }
  if (levels.size() > kMaxLevels) {
    return Invalid(std::string(fields.levels) + ": must have at most " +
                   std::to_string(kMaxLevels) + " levels, got " + std::to_string(levels.size()));
  }
  for (size_t i = 0; i < levels.size(); ++i) {
    const std::string& key = levels[i].node_label;
    if (key.empty()) return Invalid(FieldAt(fields, i, fields.node_label) + ": must not be empty");
    if (Status s = ValidateLabelKey(key); !s.ok()) {
      return Invalid(FieldAt(fields, i, fields.node_label) + ": " + s.error().message);
    }
    for (size_t j = 0; j < i; ++j) {
      if (levels[j].node_label == key) {
        return Invalid(FieldAt(fields, i, fields.node_label) + ": duplicate label key \"" + key +
                       "\" (also " + FieldAt(fields, j, fields.node_label) + ")");
      }
    }
  }
  // Explicit names first: they win over derived ones.
  for (size_t i = 0; i < levels.size(); ++i) {
    const std::string& name = levels[i].name;
    if (name.empty()) continue;
    if (Status s = ValidateLabelValue(name); !s.ok()) {
      return Invalid(FieldAt(fields, i, fields.name) + ": " + s.error().message);
    }
    for (size_t j = 0; j < levels.size(); ++j) {
      if (j < i && levels[j].name == name) {
        return Invalid(FieldAt(fields, i, fields.name) + ": duplicate name \"" + name +
                       "\" (also " + FieldAt(fields, j, fields.name) + ")");
      }
      if (j != i && levels[j].node_label == name) {
        return Invalid(FieldAt(fields, i, fields.name) + ": \"" + name + "\" is the label key of " +
                       FieldAt(fields, j, fields.node_label));
      }
    }
  }
  // Derived names: the key's last segment when no other level could be meant by
  // it, else the full key (always unique, see the checks above).
  std::vector<bool> derived(levels.size(), false);
  for (size_t i = 0; i < levels.size(); ++i) derived[i] = levels[i].name.empty();
  for (size_t i = 0; i < levels.size(); ++i) {
    if (!derived[i]) continue;
    const std::string_view candidate = DerivedName(levels[i].node_label);
    bool clash = false;
    for (size_t j = 0; j < levels.size() && !clash; ++j) {
      if (j == i) continue;
      if (levels[j].node_label == candidate) clash = true;
      if (!derived[j] && levels[j].name == candidate) clash = true;
      if (derived[j] && DerivedName(levels[j].node_label) == candidate) clash = true;
    }
    levels[i].name = std::string(clash ? std::string_view(levels[i].node_label) : candidate);
  }
  return TopologyLevels(std::move(levels));
}

Result<TopologyLevels> TopologyLevels::FromTopologyKey(std::string_view key,
                                                       std::string_view field) {
  if (key.empty()) return Invalid(std::string(field) + ": must not be empty");
  if (Status s = ValidateLabelKey(key); !s.ok()) {
    return Invalid(std::string(field) + ": " + s.error().message);
  }
  std::vector<TopologyLevel> levels{{"", std::string(key)}};
  return Create(std::move(levels));
}

TopologyLevels TopologyLevels::Default() {
  return TopologyLevels({{"zone", std::string(kLabelTopologyZone)},
                         {"block", std::string(kLabelBlock)},
                         {"rack", std::string(kLabelRack)},
                         {"host", std::string(kLabelHostname)}});
}

std::optional<uint32_t> TopologyLevels::FindByName(std::string_view name) const noexcept {
  for (size_t i = 0; i < levels_.size(); ++i) {
    if (levels_[i].name == name) return static_cast<uint32_t>(i);
  }
  return std::nullopt;
}

std::optional<uint32_t> TopologyLevels::FindByLabel(std::string_view node_label) const noexcept {
  for (size_t i = 0; i < levels_.size(); ++i) {
    if (levels_[i].node_label == node_label) return static_cast<uint32_t>(i);
  }
  return std::nullopt;
}

std::optional<uint32_t> TopologyLevels::Find(std::string_view name_or_label) const noexcept {
  if (auto i = FindByName(name_or_label)) return i;
  return FindByLabel(name_or_label);
}

Result<uint32_t> TopologyLevels::Resolve(std::string_view name_or_label,
                                         std::string_view field) const {
  if (auto i = Find(name_or_label)) return *i;
  std::string message(field);
  if (name_or_label.empty()) {
    message += ": must not be empty";
  } else {
    message += ": unknown topology level \"";
    message += name_or_label;
    message += "\" (levels: ";
    for (size_t i = 0; i < levels_.size(); ++i) {
      if (i > 0) message += ", ";
      message += levels_[i].name;
    }
    message += ")";
  }
  return Invalid(std::move(message));
}

}  // namespace copse::topology

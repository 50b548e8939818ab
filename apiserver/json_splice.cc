#include "apiserver/json_splice.h"

#include <algorithm>
#include <array>

namespace copse::apiserver::splice {
namespace {

// One past the string starting at `pos` ('"'), or kNpos. Keys and most
// values are short: a byte loop beats a memchr call per string.
size_t SkipString(std::string_view text, size_t pos) noexcept {
  const char* data = text.data();
  const size_t size = text.size();
  for (size_t i = pos + 1; i < size; ++i) {
    const char c = data[i];
    if (c == '\\') {
      ++i;  // the escaped character, whatever it is
    } else if (c == '"') {
      return i + 1;
    }
  }
  return kNpos;
}

}  // namespace

namespace {

// Byte classes for scanning containers: 1 quote, 2 opening, 3 closing bracket.
constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> t{};
  t['"'] = 1;
  t['{'] = 2;
  t['['] = 2;
  t['}'] = 3;
  t[']'] = 3;
  return t;
}();

}  // namespace

size_t SkipValue(std::string_view text, size_t pos) noexcept {
  const size_t size = text.size();
  if (pos >= size) return kNpos;
  const char c = text[pos];
  if (c == '"') return SkipString(text, pos);
  if (c == '{' || c == '[') {
    const char* data = text.data();
    size_t depth = 0;
    for (size_t i = pos; i < size; ++i) {
      switch (kByteClass[static_cast<unsigned char>(data[i])]) {
        case 0:
          break;
        case 1:
          i = SkipString(text, i);
          if (i == kNpos) return kNpos;
          --i;  // the loop steps past the closing quote
          break;
        case 2:
          ++depth;
          break;
        default:
          if (--depth == 0) return i + 1;
          break;
      }
    }
    return kNpos;
  }
  // Number or literal: up to the next delimiter.
  size_t i = pos;
  while (i < size && text[i] != ',' && text[i] != '}' && text[i] != ']') {
    const char d = text[i];
    if (d == ' ' || d == '\n' || d == '\t' || d == '\r' || d == '"' || d == ':') return kNpos;
    ++i;
  }
  return i == pos ? kNpos : i;
}

size_t AfterMember(std::string_view text, const Member& member) noexcept {
  if (member.value_end >= text.size()) return kNpos;
  if (text[member.value_end] == ',') return member.value_end + 1;
  if (text[member.value_end] == '}') return member.value_end;
  return kNpos;
}

Lookup FindMember(std::string_view text, size_t object_pos, std::string_view key,
                  size_t from) noexcept {
  Lookup out;
  const size_t size = text.size();
  if (object_pos >= size || text[object_pos] != '{') return out;
  size_t i = object_pos + 1;
  if (from != kNpos) {
    if (from <= object_pos || from >= size) return out;
    if (text[from] == '}') {  // resumed after the last member
      out.ok = true;
      out.insert_pos = from;
      out.insert_at_end = true;
      out.object_end = from + 1;
      return out;
    }
    if (text[from] != '"') return out;
    i = from;
  }
  if (i < size && text[i] == '}') {
    out.ok = true;
    out.insert_pos = i;
    out.insert_at_end = true;
    out.empty_object = true;
    out.object_end = i + 1;
    return out;
  }
  std::string_view prev;
  bool first = true;
  while (i < size) {
    if (text[i] != '"') return out;
    const size_t key_end = SkipString(text, i);
    if (key_end == kNpos || key_end >= size || text[key_end] != ':') return out;
    const std::string_view k = text.substr(i + 1, key_end - i - 2);
    if (k.find('\\') != std::string_view::npos) return out;
    // nlohmann dumps std::map objects: keys strictly increasing.
    if (!first && !(prev < k)) return out;
    first = false;
    prev = k;
    const size_t value_pos = key_end + 1;
    const size_t value_end = SkipValue(text, value_pos);
    if (value_end == kNpos || value_end >= size) return out;
    if (k == key) {
      out.ok = true;
      out.member = Member{k, i, value_pos, value_end};
      return out;
    }
    if (key < k) {
      out.ok = true;
      out.insert_pos = i;
      return out;
    }
    if (text[value_end] == '}') {
      out.ok = true;
      out.insert_pos = value_end;
      out.insert_at_end = true;
      out.object_end = value_end + 1;
      return out;
    }
    if (text[value_end] != ',') return out;
    i = value_end + 1;
  }
  return out;
}

std::optional<std::string_view> RawString(std::string_view text, const Member& member) noexcept {
  if (member.value_end - member.value_pos < 2 || text[member.value_pos] != '"' ||
      text[member.value_end - 1] != '"') {
    return std::nullopt;
  }
  std::string_view s = text.substr(member.value_pos + 1, member.value_end - member.value_pos - 2);
  if (s.find('\\') != std::string_view::npos) return std::nullopt;
  return s;
}

bool IsPlainString(std::string_view s) noexcept {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') return false;
  }
  return true;
}

std::string Apply(std::string_view text, std::vector<Edit> edits, std::string_view placeholder) {
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.pos < b.pos; });
  size_t size = text.size();
  for (const Edit& e : edits) {
    size = size - e.erase + (e.placeholder ? placeholder.size() : e.insert.size());
  }
  std::string out;
  out.reserve(size);
  size_t at = 0;
  for (const Edit& e : edits) {
    out.append(text.substr(at, e.pos - at));
    out.append(e.placeholder ? placeholder : std::string_view(e.insert));
    at = e.pos + e.erase;
  }
  out.append(text.substr(at));
  return out;
}

namespace {

// The PodScheduled=True condition a binding adds, as nlohmann dumps it.
std::string ScheduledCondition(std::string_view now) {
  std::string out = R"({"lastProbeTime":null,"lastTransitionTime":")";
  out += now;
  out += R"(","status":"True","type":"PodScheduled"})";
  return out;
}

// Inserts `"key":value` into the object scanned by `at`, keeping keys sorted.
Edit InsertMember(const Lookup& at, std::string_view key, std::string_view value) {
  Edit e;
  e.pos = at.insert_pos;
  if (at.insert_at_end && !at.empty_object) e.insert += ',';
  e.insert += '"';
  e.insert += key;
  e.insert += "\":";
  e.insert += value;
  if (!at.insert_at_end) e.insert += ',';
  return e;
}

}  // namespace

std::optional<std::vector<Edit>> PlanPodBinding(std::string_view text, std::string_view target,
                                                std::string_view now) {
  std::vector<Edit> edits;
  edits.reserve(3);
  // metadata.resourceVersion: replaced by the new version under the lock.
  const Lookup meta = FindMember(text, 0, "metadata");
  if (!meta.ok || !meta.member || text[meta.member->value_pos] != '{') return std::nullopt;
  const Lookup rv = FindMember(text, meta.member->value_pos, "resourceVersion");
  if (!rv.ok || !rv.member) return std::nullopt;
  Edit rv_edit;
  rv_edit.pos = rv.member->value_pos;
  rv_edit.erase = rv.member->value_end - rv.member->value_pos;
  rv_edit.placeholder = true;
  edits.push_back(std::move(rv_edit));

  // spec.nodeName.
  std::string quoted_target = "\"";
  quoted_target += target;
  quoted_target += '"';
  const Lookup spec = FindMember(text, 0, "spec", AfterMember(text, *meta.member));
  if (!spec.ok || !spec.member || text[spec.member->value_pos] != '{') return std::nullopt;
  const Lookup node = FindMember(text, spec.member->value_pos, "nodeName");
  if (!node.ok) return std::nullopt;
  if (node.member) {
    Edit e;
    e.pos = node.member->value_pos;
    e.erase = node.member->value_end - node.member->value_pos;
    e.insert = quoted_target;
    edits.push_back(std::move(e));
  } else {
    edits.push_back(InsertMember(node, "nodeName", quoted_target));
  }

  // status.conditions += PodScheduled=True.
  const std::string condition = ScheduledCondition(now);
  const Lookup status = FindMember(text, 0, "status", AfterMember(text, *spec.member));
  if (!status.ok) return std::nullopt;
  if (!status.member) {
    edits.push_back(InsertMember(status, "status", "{\"conditions\":[" + condition + "]}"));
    return edits;
  }
  if (text[status.member->value_pos] != '{') return std::nullopt;
  const Lookup conds = FindMember(text, status.member->value_pos, "conditions");
  if (!conds.ok) return std::nullopt;
  if (!conds.member) {
    edits.push_back(InsertMember(conds, "conditions", "[" + condition + "]"));
    return edits;
  }
  bool covered = true;
  size_t array_end = 0;
  size_t count = 0;
  const bool scanned = ForEachElement(
      text, conds.member->value_pos,
      [&](size_t pos, size_t) {
        if (!covered) return;
        if (text[pos] != '{') {
          covered = false;
          return;
        }
        const Lookup type = FindMember(text, pos, "type");
        if (!type.ok) {
          covered = false;
        } else if (type.member) {
          // An existing PodScheduled condition is updated in place: JSON edit.
          const auto value = RawString(text, *type.member);
          if (!value || *value == "PodScheduled") covered = false;
        }
      },
      &array_end, &count);
  if (!scanned || !covered) return std::nullopt;
  Edit e;
  e.pos = array_end - 1;  // the closing bracket
  if (count > 0) e.insert += ',';
  e.insert += condition;
  edits.push_back(std::move(e));
  return edits;
}

}  // namespace copse::apiserver::splice

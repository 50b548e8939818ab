#pragma once
// Edits of stored JSON text without parsing it into a tree: the Store keeps
// every object as nlohmann's compact dump (keys sorted, no whitespace), so a
// small write such as a binding can locate the members it changes, splice new
// text in at the right (sorted) place, and get exactly the bytes a full
// parse + edit + dump would produce, at a fraction of the cost.
//
// The scanner accepts only what nlohmann's compact dump writes; anything else
// (whitespace, escaped keys, malformed text) makes it report failure, and the
// caller falls back to the full parse. Positions are byte offsets into the
// scanned text.
//
// Thread-safety: pure functions over immutable text.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace copse::apiserver::splice {

inline constexpr size_t kNpos = std::string_view::npos;

// One end past the JSON value starting at `pos`, or kNpos when malformed.
size_t SkipValue(std::string_view text, size_t pos) noexcept;

struct Member {
  std::string_view key;  // raw key text (no escapes: see FindMember)
  size_t key_pos = 0;    // the key's opening quote
  size_t value_pos = 0;  // first byte of the value
  size_t value_end = 0;  // one past the value
};

// Looks up `key` in the object that starts at `object_pos` ('{').
struct Lookup {
  bool ok = false;  // false: not an object, malformed, or an escaped key
  std::optional<Member> member;
  // Where `"key":value` goes to keep keys sorted (byte order, as std::map):
  // before the first larger key (insert `"key":value,` at insert_pos), or,
  // when no key is larger, at the closing brace (insert `,"key":value`, or
  // without the comma when the object is empty).
  size_t insert_pos = 0;
  bool insert_at_end = false;
  bool empty_object = false;
  size_t object_end = 0;  // one past the closing brace
};
// `from`: resume there instead of at the first member: at a key of this
// object sorting before `key` (Member::key_pos), or at AfterMember of an
// earlier lookup's member whose key sorts before `key`.
Lookup FindMember(std::string_view text, size_t object_pos, std::string_view key,
                  size_t from = kNpos) noexcept;

// Where the member after `member` starts (its key's quote), the closing
// brace when `member` is the last one, or kNpos when malformed.
size_t AfterMember(std::string_view text, const Member& member) noexcept;

// Calls fn(value_pos, value_end) for each element of the array at
// `array_pos` ('['); false when malformed. `count` gets the element count.
template <typename Fn>
bool ForEachElement(std::string_view text, size_t array_pos, Fn&& fn, size_t* array_end,
                    size_t* count);

// The value of a string member as raw text (without quotes) when it has no
// escapes; nullopt otherwise.
std::optional<std::string_view> RawString(std::string_view text, const Member& member) noexcept;

// True when nlohmann's dump writes `s` verbatim between quotes (printable
// ASCII without '"' and '\').
bool IsPlainString(std::string_view s) noexcept;

// Text edits applied in one pass: each replaces [pos, pos + erase) with
// `insert` (or, for a placeholder edit, with the text given to Apply).
struct Edit {
  size_t pos = 0;
  size_t erase = 0;
  std::string insert;
  bool placeholder = false;
};

// Applies non-overlapping `edits` (any order) to `text`; placeholder edits
// insert `placeholder`.
std::string Apply(std::string_view text, std::vector<Edit> edits, std::string_view placeholder);

// The edits of a pods/binding to `node` at time `now` (RFC 3339) on the
// stored text of an unbound pod: spec.nodeName set, a PodScheduled=True
// condition appended, and a placeholder edit for the value of
// metadata.resourceVersion (apply with the quoted new version). Together
// they produce the same bytes as editing the parsed pod and dumping it.
// nullopt when the pod has a shape this does not cover (an existing
// PodScheduled condition, a status or conditions that are not an object /
// array, ...): the caller edits the parsed pod instead. `node` and `now`
// must be IsPlainString.
std::optional<std::vector<Edit>> PlanPodBinding(std::string_view pod_json, std::string_view node,
                                                std::string_view now);

// --- template implementation ---

template <typename Fn>
bool ForEachElement(std::string_view text, size_t array_pos, Fn&& fn, size_t* array_end,
                    size_t* count) {
  *count = 0;
  if (array_pos >= text.size() || text[array_pos] != '[') return false;
  size_t pos = array_pos + 1;
  if (pos < text.size() && text[pos] == ']') {
    *array_end = pos + 1;
    return true;
  }
  while (pos < text.size()) {
    const size_t end = SkipValue(text, pos);
    if (end == kNpos) return false;
    fn(pos, end);
    ++*count;
    if (end >= text.size()) return false;
    if (text[end] == ']') {
      *array_end = end + 1;
      return true;
    }
    if (text[end] != ',') return false;
    pos = end + 1;
  }
  return false;
}

}  // namespace copse::apiserver::splice

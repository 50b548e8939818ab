// Transcoder between Kubernetes' protobuf wire form and JSON, driven by the
// schema table (kube/protobuf/schema.h). Wire reading goes through
// libprotobuf's CodedInputStream (bounds, varints, skipping unknown fields);
// JSON is read with simdjson and written as text.
//
//   protobuf -> JSON: a message's wire entries are collected, grouped by
//     field, and written in the Go struct's field order. Inline fields write
//     their message into the same JSON object; repeated occurrences of a
//     singular message merge (their bytes concatenate), as protobuf defines.
//   JSON -> protobuf: fields in ascending number; a nested message is written
//     after a 5-byte gap for its length, then the gap is shrunk to the varint.

#include "kube/protobuf/codec.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/json_text.h"
#include "kube/codec_json.h"
#include "kube/kubeconfig.h"
#include "kube/protobuf/schema.h"

namespace copse::kube::protobuf {

namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;

constexpr int kMaxDepth = 64;
// Envelopes inside RawExtensions decode recursively: bounded per thread.
thread_local int t_embedded_depth = 0;
// Go's zero time.Time and the last second of year 9999: the range RFC 3339 covers.
constexpr int64_t kMinSeconds = -62135596800;
constexpr int64_t kMaxSeconds = 253402300799;

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

Error BadRequest(std::string message) {
  Error error = MakeError(ErrorCode::kInvalid, std::move(message));
  error.http_status = 400;
  error.reason = "BadRequest";
  return error;
}

Error Unsupported(std::string_view api_version, std::string_view kind) {
  Error error = MakeError(ErrorCode::kInvalid,
                          "the body of the request was in an unknown format - " +
                              std::string(api_version) + ", Kind=" + std::string(kind) +
                              " has no protobuf form here; accepted media types include: "
                              "application/json, application/yaml");
  error.http_status = 415;
  error.reason = "UnsupportedMediaType";
  return error;
}

const uint8_t* Bytes(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// ---------------------------------------------------------------- time

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

// RFC 3339 ("2024-01-02T03:04:05Z", "...05.123456+02:00") to Unix seconds and nanos.
bool ParseRfc3339(std::string_view s, int64_t* seconds, int32_t* nanos) {
  int year, month, day, hour, minute, second;
  if (!Digits(s, 0, 4, &year) || s.size() < 20 || s[4] != '-' || !Digits(s, 5, 2, &month) ||
      s[7] != '-' || !Digits(s, 8, 2, &day) || (s[10] != 'T' && s[10] != 't') ||
      !Digits(s, 11, 2, &hour) || s[13] != ':' || !Digits(s, 14, 2, &minute) || s[16] != ':' ||
      !Digits(s, 17, 2, &second)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return false;
  }
  size_t pos = 19;
  int64_t frac = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 9) {
        frac = frac * 10 + (s[pos] - '0');
        ++digits;
      }
      ++pos;
    }
    if (digits == 0) return false;
    for (; digits < 9; ++digits) frac *= 10;
  }
  int64_t offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!Digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, &om)) {
      return false;
    }
    offset = (oh * 3600 + om * 60) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return false;
  }
  if (pos != s.size()) return false;
  *seconds = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
             hour * 3600 + minute * 60 + second - offset;
  *nanos = static_cast<int32_t>(frac);
  return true;
}

std::string FormatTime(int64_t seconds, int32_t nanos, bool micro) {
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(seconds)) +
                 std::chrono::duration_cast<std::chrono::system_clock::duration>(
                     std::chrono::nanoseconds(micro ? nanos : 0));
  return micro ? FormatRfc3339Micro(t) : FormatRfc3339(t);
}

// ---------------------------------------------------------------- wire writing

void PutVarint(std::string& out, uint64_t value) {
  uint8_t buf[10];
  uint8_t* end = CodedOutputStream::WriteVarint64ToArray(value, buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(end - buf));
}

void PutTag(std::string& out, uint32_t number, WireType type) {
  PutVarint(out, (static_cast<uint64_t>(number) << 3) | type);
}

void PutBytes(std::string& out, uint32_t number, std::string_view data) {
  PutTag(out, number, kLengthDelimited);
  PutVarint(out, data.size());
  out.append(data);
}

// A length-delimited field whose content is appended after Open() and sized by Close().
class Nested {
 public:
  Nested(std::string& out, uint32_t number) : out_(out) {
    PutTag(out, number, kLengthDelimited);
    gap_ = out.size();
    out.append(5, '\0');
  }
  void Close() {
    const size_t length = out_.size() - gap_ - 5;
    uint8_t buf[5];
    uint8_t* end = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(length), buf);
    out_.replace(gap_, 5, reinterpret_cast<const char*>(buf), static_cast<size_t>(end - buf));
  }

 private:
  std::string& out_;
  size_t gap_;
};

// ---------------------------------------------------------------- wire reading

struct Entry {
  uint32_t order;  // index of the field in its message's declaration order
  uint32_t seq;    // position on the wire
  uint32_t wire;
  uint64_t varint;
  std::string_view bytes;
};

// Reads the next field of `in` over `data`: false at the end (`*done`) or on
// malformed input (`*error`).
bool NextField(CodedInputStream& in, std::string_view data, uint32_t* number, uint32_t* wire,
               uint64_t* varint, std::string_view* bytes, std::string* error) {
  if (in.CurrentPosition() >= static_cast<int>(data.size())) return false;
  const uint32_t tag = in.ReadTag();
  if (tag == 0) {
    *error = "malformed field tag at byte " + std::to_string(in.CurrentPosition());
    return false;
  }
  *number = tag >> 3;
  *wire = tag & 7;
  switch (*wire) {
    case kVarint:
      if (!in.ReadVarint64(varint)) *error = "truncated varint";
      break;
    case kFixed64:
      if (!in.ReadLittleEndian64(varint)) *error = "truncated fixed64";
      break;
    case kFixed32: {
      uint32_t v = 0;
      if (!in.ReadLittleEndian32(&v)) *error = "truncated fixed32";
      *varint = v;
      break;
    }
    case kLengthDelimited: {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length)) {
        *error = "truncated length";
        break;
      }
      const int start = in.CurrentPosition();
      if (length > data.size() - static_cast<size_t>(start) || !in.Skip(static_cast<int>(length))) {
        *error = "length " + std::to_string(length) + " runs past the end of the message";
        break;
      }
      *bytes = data.substr(static_cast<size_t>(start), length);
      break;
    }
    default:
      *error = "unsupported wire type " + std::to_string(*wire);
  }
  return error->empty();
}

bool ValidUtf8(std::string_view s) { return simdjson::validate_utf8(s.data(), s.size()); }

const char* WireName(uint32_t wire) {
  switch (wire) {
    case kVarint:
      return "varint";
    case kFixed64:
      return "fixed64";
    case kLengthDelimited:
      return "length-delimited";
    case kFixed32:
      return "fixed32";
    default:
      return "group";
  }
}

// ---------------------------------------------------------------- paths

// The JSON path being worked on ("spec.containers[0].ports[1].name"), kept as
// segments; the text is built only when an error is recorded (while the
// segments' names are still alive).
class Path {
 public:
  size_t size() const { return segments_.size(); }
  void Resize(size_t n) { segments_.resize(n); }
  void Field(std::string_view name) { segments_.push_back({name, 0, false}); }
  void Index(size_t index) { segments_.push_back({{}, index, true}); }
  void Key(std::string_view key) { segments_.push_back({key, 0, true}); }
  std::string Text() const {
    std::string out;
    for (const Segment& s : segments_) {
      if (!s.bracket) {
        if (!out.empty()) out += '.';
        out += s.name;
      } else if (s.name.data() != nullptr) {
        out += "[" + std::string(s.name) + "]";
      } else {
        out += "[" + std::to_string(s.index) + "]";
      }
    }
    return out;
  }

 private:
  struct Segment {
    std::string_view name;
    size_t index;
    bool bracket;
  };
  std::vector<Segment> segments_;
};

// ---------------------------------------------------------------- protobuf -> JSON

class ToJson {
 public:
  // Writes the members of message `m` held in `data` into `out` (an open
  // JSON object; `first` says whether a comma is due).
  bool Members(const Message& m, std::string_view data, std::string& out, bool& first) {
    if (++depth_ > kMaxDepth)
      return Fail("messages nested deeper than " + std::to_string(kMaxDepth));
    // One entry buffer per nesting level, reused across messages.
    if (pool_.size() < static_cast<size_t>(depth_)) pool_.resize(static_cast<size_t>(depth_));
    std::vector<Entry> entries = std::move(pool_[static_cast<size_t>(depth_ - 1)]);
    entries.clear();
    CodedInputStream in(Bytes(data), static_cast<int>(data.size()));
    uint32_t number, wire;
    uint64_t varint = 0;
    std::string_view bytes;
    std::string error;
    while (NextField(in, data, &number, &wire, &varint, &bytes, &error)) {
      const Field* f = m.FindNumber(number);
      if (f == nullptr) continue;  // unknown fields are skipped, as Go's decoder does
      entries.push_back(Entry{static_cast<uint32_t>(f - m.fields.data()),
                              static_cast<uint32_t>(entries.size()), wire, varint, bytes});
    }
    if (!error.empty()) return Fail(error);
    // By declaration order; a field's occurrences keep their wire order.
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return a.order != b.order ? a.order < b.order : a.seq < b.seq;
    });
    for (size_t i = 0; i < entries.size();) {
      size_t j = i;
      while (j < entries.size() && entries[j].order == entries[i].order) ++j;
      const Field& f = m.fields[entries[i].order];
      const size_t path_size = path_.size();
      path_.Field(f.json_name);
      if (!WriteField(f, std::span<const Entry>(entries.data() + i, j - i), out, first)) {
        return false;
      }
      path_.Resize(path_size);
      i = j;
    }
    pool_[static_cast<size_t>(depth_ - 1)] = std::move(entries);
    --depth_;
    return true;
  }

  bool Object(const Message& m, std::string_view data, std::string& out) {
    out += '{';
    bool first = true;
    if (!Members(m, data, out, first)) return false;
    out += '}';
    return true;
  }

  Error TakeError() {
    return BadRequest(
        "protobuf body: " + (error_path_.empty() ? std::string() : error_path_ + ": ") + error_);
  }

 private:
  bool Fail(std::string message) {
    if (error_.empty()) {
      error_ = std::move(message);
      error_path_ = path_.Text();
    }
    return false;
  }
  static void Key(std::string& out, bool& first, std::string_view name) {
    if (!first) out += ',';
    first = false;
    AppendJsonString(out, name);
    out += ':';
  }
  bool WantWire(const Entry& e, uint32_t want, const char* what) {
    if (e.wire == want) return true;
    return Fail(std::string("wrong wire type ") + WireName(e.wire) + " for " + what);
  }

  static bool IsZero(FieldType type, const Entry& e) {
    switch (type) {
      case FieldType::kString:
      case FieldType::kBytes:
        return e.bytes.empty();
      case FieldType::kBool:
      case FieldType::kInt32:
      case FieldType::kInt64:
        return e.varint == 0;
      default:
        return false;
    }
  }

  bool WriteField(const Field& f, std::span<const Entry> entries, std::string& out, bool& first) {
    if (f.inline_) {
      std::string merged;
      for (const Entry& e : entries) {
        if (!WantWire(e, kLengthDelimited, "an embedded message")) return false;
        merged.append(e.bytes);
      }
      return Members(*f.message, merged, out, first);
    }
    if (f.map) {
      // As Go: entries land in a map (a repeated key keeps its last value)
      // and encoding/json writes the keys sorted, whatever the wire order.
      std::vector<std::pair<std::string_view, std::string>> members;
      members.reserve(entries.size());
      for (const Entry& e : entries) {
        if (!WantWire(e, kLengthDelimited, "a map entry")) return false;
        auto& [key, member] = members.emplace_back();
        if (!MapEntry(f, e.bytes, &key, member)) return false;
      }
      std::stable_sort(members.begin(), members.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      Key(out, first, f.json_name);
      out += '{';
      bool first_entry = true;
      for (size_t i = 0; i < members.size(); ++i) {
        if (i + 1 < members.size() && members[i + 1].first == members[i].first) continue;
        if (!first_entry) out += ',';
        first_entry = false;
        out += members[i].second;
      }
      out += '}';
      return true;
    }
    if (f.repeated) {
      Key(out, first, f.json_name);
      out += '[';
      size_t index = 0;
      const size_t path_size = path_.size();
      for (const Entry& e : entries) {
        const bool packable = f.type == FieldType::kBool || f.type == FieldType::kInt32 ||
                              f.type == FieldType::kInt64;
        if (packable && e.wire == kLengthDelimited) {  // packed
          CodedInputStream in(Bytes(e.bytes), static_cast<int>(e.bytes.size()));
          while (in.CurrentPosition() < static_cast<int>(e.bytes.size())) {
            Entry item{0, 0, kVarint, 0, {}};
            if (!in.ReadVarint64(&item.varint)) return Fail("truncated packed varint");
            if (index++ > 0) out += ',';
            if (!Value(f.type, f.message, item, out)) return false;
          }
          continue;
        }
        path_.Index(index);
        if (index++ > 0) out += ',';
        if (!Value(f.type, f.message, e, out)) return false;
        path_.Resize(path_size);
      }
      out += ']';
      return true;
    }
    if (f.type == FieldType::kMessage || f.type >= FieldType::kTime) {
      // Repeated occurrences of a singular message merge: their bytes concatenate.
      Entry merged = entries.back();
      std::string joined;
      if (entries.size() > 1) {
        for (const Entry& e : entries) {
          if (!WantWire(e, kLengthDelimited, "an embedded message")) return false;
          joined.append(e.bytes);
        }
        merged.bytes = joined;
      }
      Key(out, first, f.json_name);
      return Value(f.type, f.message, merged, out);
    }
    const Entry& last = entries.back();  // a repeated scalar: the last one wins
    if (!f.emit && IsZero(f.type, last)) {
      // Go's JSON leaves a zero omitempty field out; check the wire type all the same.
      return WantWire(
          last,
          f.type == FieldType::kString || f.type == FieldType::kBytes ? kLengthDelimited : kVarint,
          "this field");
    }
    Key(out, first, f.json_name);
    return Value(f.type, f.message, last, out);
  }

  // Writes one map entry as `"key":value` to `out` and its key to `*key_out`.
  bool MapEntry(const Field& f, std::string_view data, std::string_view* key_out,
                std::string& out) {
    CodedInputStream in(Bytes(data), static_cast<int>(data.size()));
    uint32_t number, wire;
    uint64_t varint = 0;
    std::string_view bytes;
    std::string error;
    std::string_view key;
    Entry value{0, 0, kLengthDelimited, 0, {}};
    bool has_value = false;
    while (NextField(in, data, &number, &wire, &varint, &bytes, &error)) {
      if (number == 1) {
        if (wire != kLengthDelimited) return Fail("wrong wire type for a map key");
        key = bytes;
      } else if (number == 2) {
        value = Entry{0, 0, wire, varint, bytes};
        has_value = true;
      }
    }
    if (!error.empty()) return Fail(error);
    if (!ValidUtf8(key)) return Fail("map key is not UTF-8");
    const size_t path_size = path_.size();
    path_.Key(key);
    *key_out = key;
    AppendJsonString(out, key);
    out += ':';
    if (!has_value) {  // an absent value is the zero value
      switch (f.type) {
        case FieldType::kString:
        case FieldType::kBytes:
          out += "\"\"";
          break;
        case FieldType::kQuantity:
          out += "\"0\"";
          break;
        case FieldType::kMessage:
          out += "{}";
          break;
        default:
          out += "null";
          break;
      }
    } else if (!Value(f.type, f.message, value, out)) {
      return false;
    }
    path_.Resize(path_size);
    return true;
  }

  // Reads {1: int64/string, 2: int32, 3: string}-like small messages.
  bool SmallFields(std::string_view data, std::array<Entry, 4>& fields) {
    CodedInputStream in(Bytes(data), static_cast<int>(data.size()));
    uint32_t number, wire;
    uint64_t varint = 0;
    std::string_view bytes;
    std::string error;
    while (NextField(in, data, &number, &wire, &varint, &bytes, &error)) {
      if (number >= 1 && number <= 3) fields[number] = Entry{1, 0, wire, varint, bytes};
    }
    if (!error.empty()) return Fail(error);
    return true;
  }

  bool Value(FieldType type, const Message* message, const Entry& e, std::string& out) {
    switch (type) {
      case FieldType::kString:
        if (!WantWire(e, kLengthDelimited, "a string")) return false;
        if (!ValidUtf8(e.bytes)) return Fail("string is not UTF-8");
        AppendJsonString(out, e.bytes);
        return true;
      case FieldType::kBytes:
        if (!WantWire(e, kLengthDelimited, "bytes")) return false;
        out += '"';
        out += EncodeBase64(e.bytes);
        out += '"';
        return true;
      case FieldType::kBool:
        if (!WantWire(e, kVarint, "a bool")) return false;
        out += e.varint != 0 ? "true" : "false";
        return true;
      case FieldType::kInt32:
        if (!WantWire(e, kVarint, "an int32")) return false;
        out += std::to_string(static_cast<int32_t>(e.varint));
        return true;
      case FieldType::kInt64:
        if (!WantWire(e, kVarint, "an int64")) return false;
        out += std::to_string(static_cast<int64_t>(e.varint));
        return true;
      case FieldType::kMessage:
        if (!WantWire(e, kLengthDelimited, "an embedded message")) return false;
        return Object(*message, e.bytes, out);
      default:
        break;
    }
    if (!WantWire(e, kLengthDelimited, "an embedded message")) return false;
    std::array<Entry, 4> f{};
    switch (type) {
      case FieldType::kTime:
      case FieldType::kMicroTime: {
        if (e.bytes.empty()) {  // Go's zero time.Time
          out += "null";
          return true;
        }
        if (!SmallFields(e.bytes, f)) return false;
        if ((f[1].order && f[1].wire != kVarint) || (f[2].order && f[2].wire != kVarint)) {
          return Fail("wrong wire type in a Time");
        }
        const int64_t seconds = static_cast<int64_t>(f[1].varint);
        const int32_t nanos = static_cast<int32_t>(f[2].varint);
        if (seconds < kMinSeconds || seconds > kMaxSeconds || nanos < 0 || nanos > 999'999'999) {
          return Fail("time out of range: " + std::to_string(seconds) + "s");
        }
        AppendJsonString(out, FormatTime(seconds, nanos, type == FieldType::kMicroTime));
        return true;
      }
      case FieldType::kQuantity:
        if (!SmallFields(e.bytes, f)) return false;
        if (f[1].order && f[1].wire != kLengthDelimited) {
          return Fail("wrong wire type in a Quantity");
        }
        if (!ValidUtf8(f[1].bytes)) return Fail("quantity is not UTF-8");
        AppendJsonString(out, f[1].bytes.empty() ? std::string_view("0") : f[1].bytes);
        return true;
      case FieldType::kIntOrString:
        if (!SmallFields(e.bytes, f)) return false;
        if ((f[1].order && f[1].wire != kVarint) || (f[2].order && f[2].wire != kVarint) ||
            (f[3].order && f[3].wire != kLengthDelimited)) {
          return Fail("wrong wire type in an IntOrString");
        }
        if (f[1].varint == 1) {
          if (!ValidUtf8(f[3].bytes)) return Fail("strVal is not UTF-8");
          AppendJsonString(out, f[3].bytes);
        } else {
          out += std::to_string(static_cast<int32_t>(f[2].varint));
        }
        return true;
      case FieldType::kRawExtension:
      case FieldType::kFieldsV1: {
        if (!SmallFields(e.bytes, f)) return false;
        if (f[1].order && f[1].wire != kLengthDelimited) return Fail("wrong wire type in raw");
        const std::string_view raw = f[1].bytes;
        if (raw.empty()) {
          out += "null";
          return true;
        }
        if (raw.starts_with(kMagic)) {  // an embedded protobuf object
          if (t_embedded_depth >= kMaxDepth) {
            return Fail("objects embedded deeper than " + std::to_string(kMaxDepth));
          }
          ++t_embedded_depth;
          auto object = DecodeObject(raw);
          --t_embedded_depth;
          if (!object.ok()) return Fail(object.error().message);
          out += *object;
          return true;
        }
        codec::ParserLease lease;
        codec::Element root;
        if (!codec::ParseDocument(lease, raw, root).ok()) return Fail("raw is not JSON");
        out.append(raw);
        return true;
      }
      default:
        return Fail("unknown field type");
    }
  }

  std::vector<std::vector<Entry>> pool_;
  Path path_;
  std::string error_path_;
  std::string error_;
  int depth_ = 0;
};

// ---------------------------------------------------------------- JSON -> protobuf

using codec::Element;
namespace dom = simdjson::dom;

class FromJson {
 public:
  bool Body(const Message& m, dom::object obj, std::string& out) {
    if (++depth_ > kMaxDepth)
      return Fail("objects nested deeper than " + std::to_string(kMaxDepth));
    for (const Field* f : m.by_number) {
      if (f->inline_) {
        Nested nested(out, f->number);
        if (!Body(*f->message, obj, out)) return false;
        nested.Close();
        continue;
      }
      Element value;
      if (obj.at_key(f->json_name).get(value) != simdjson::SUCCESS) continue;
      const size_t path_size = path_.size();
      path_.Field(f->json_name);
      if (!WriteField(*f, value, out)) return false;
      path_.Resize(path_size);
    }
    --depth_;
    return true;
  }

  Error TakeError() {
    return BadRequest((error_path_.empty() ? std::string() : error_path_ + ": ") + error_);
  }

  bool Fail(std::string message) {
    if (error_.empty()) {
      error_ = std::move(message);
      error_path_ = path_.Text();
    }
    return false;
  }

 private:
  bool TypeError(Element v, std::string_view expected) {
    return Fail("expected " + std::string(expected) + ", got " + std::string(codec::TypeName(v)));
  }

  bool WriteField(const Field& f, Element value, std::string& out) {
    if (value.is_null()) {
      // Go's zero Time is written as an empty message (and reads back as null).
      if (!f.repeated && !f.map &&
          (f.type == FieldType::kTime || f.type == FieldType::kMicroTime)) {
        PutBytes(out, f.number, {});
      }
      return true;
    }
    if (f.map) {
      dom::object obj;
      if (value.get(obj) != simdjson::SUCCESS) return TypeError(value, "object");
      std::vector<std::pair<std::string_view, Element>> items;
      for (auto [key, v] : obj) items.emplace_back(key, v);
      // Go writes map entries in key order.
      std::sort(items.begin(), items.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [key, v] : items) {
        const size_t path_size = path_.size();
        path_.Key(key);
        Nested entry(out, f.number);
        PutBytes(out, 1, key);
        if (!v.is_null() && !Value(f.type, f.message, 2, v, out)) return false;
        entry.Close();
        path_.Resize(path_size);
      }
      return true;
    }
    if (f.repeated) {
      dom::array array;
      if (value.get(array) != simdjson::SUCCESS) return TypeError(value, "array");
      size_t index = 0;
      const size_t path_size = path_.size();
      for (Element item : array) {
        path_.Index(index++);
        if (item.is_null()) {
          if (f.type == FieldType::kMessage) {
            PutBytes(out, f.number, {});
          } else if (f.type == FieldType::kString || f.type == FieldType::kBytes) {
            PutBytes(out, f.number, {});
          } else {
            PutTag(out, f.number, kVarint);
            PutVarint(out, 0);
          }
        } else if (!Value(f.type, f.message, f.number, item, out)) {
          return false;
        }
        path_.Resize(path_size);
      }
      return true;
    }
    return Value(f.type, f.message, f.number, value, out);
  }

  bool Integer(Element v, int64_t min, int64_t max, int64_t* out) {
    int64_t i = 0;
    uint64_t u = 0;
    double d = 0;
    if (v.get(i) == simdjson::SUCCESS) {
    } else if (v.get(u) == simdjson::SUCCESS) {
      return Fail("integer out of range");
    } else if (v.get(d) == simdjson::SUCCESS && d == std::floor(d) && std::abs(d) < 9.2e18) {
      i = static_cast<int64_t>(d);
    } else {
      return TypeError(v, "integer");
    }
    if (i < min || i > max) return Fail("integer out of range: " + std::to_string(i));
    *out = i;
    return true;
  }

  bool String(Element v, std::string_view* out) {
    if (v.get(*out) != simdjson::SUCCESS) return TypeError(v, "string");
    return true;
  }

  bool Value(FieldType type, const Message* message, uint32_t number, Element v, std::string& out) {
    std::string_view s;
    int64_t i = 0;
    switch (type) {
      case FieldType::kString:
        if (!String(v, &s)) return false;
        PutBytes(out, number, s);
        return true;
      case FieldType::kBytes: {
        if (!String(v, &s)) return false;
        auto decoded = DecodeBase64(s);
        if (!decoded.ok()) return Fail("illegal base64 data");
        PutBytes(out, number, *decoded);
        return true;
      }
      case FieldType::kBool: {
        bool b = false;
        if (v.get(b) != simdjson::SUCCESS) return TypeError(v, "boolean");
        PutTag(out, number, kVarint);
        PutVarint(out, b ? 1 : 0);
        return true;
      }
      case FieldType::kInt32:
      case FieldType::kInt64:
        if (!Integer(v, type == FieldType::kInt32 ? INT32_MIN : INT64_MIN,
                     type == FieldType::kInt32 ? INT32_MAX : INT64_MAX, &i)) {
          return false;
        }
        PutTag(out, number, kVarint);
        PutVarint(out, static_cast<uint64_t>(i));
        return true;
      case FieldType::kMessage: {
        dom::object obj;
        if (v.get(obj) != simdjson::SUCCESS) return TypeError(v, "object");
        Nested nested(out, number);
        if (!Body(*message, obj, out)) return false;
        nested.Close();
        return true;
      }
      case FieldType::kTime:
      case FieldType::kMicroTime: {
        if (!String(v, &s)) return false;
        int64_t seconds = 0;
        int32_t nanos = 0;
        if (!ParseRfc3339(s, &seconds, &nanos)) {
          return Fail("parsing time \"" + std::string(s) + "\": not RFC 3339");
        }
        Nested nested(out, number);
        PutTag(out, 1, kVarint);
        PutVarint(out, static_cast<uint64_t>(seconds));
        PutTag(out, 2, kVarint);
        PutVarint(out, static_cast<uint64_t>(static_cast<int64_t>(nanos)));
        nested.Close();
        return true;
      }
      case FieldType::kQuantity: {
        std::string text;
        if (v.get(s) == simdjson::SUCCESS) {
          text = s;
        } else if (v.is_number()) {  // Quantity's JSON also takes a bare number
          text = simdjson::minify(v);
        } else {
          return TypeError(v, "quantity string");
        }
        Nested nested(out, number);
        PutBytes(out, 1, text);
        nested.Close();
        return true;
      }
      case FieldType::kIntOrString: {
        Nested nested(out, number);
        if (v.get(s) == simdjson::SUCCESS) {
          PutTag(out, 1, kVarint);
          PutVarint(out, 1);
          PutTag(out, 2, kVarint);
          PutVarint(out, 0);
          PutBytes(out, 3, s);
        } else {
          if (!Integer(v, INT32_MIN, INT32_MAX, &i)) return false;
          PutTag(out, 1, kVarint);
          PutVarint(out, 0);
          PutTag(out, 2, kVarint);
          PutVarint(out, static_cast<uint64_t>(i));
          PutBytes(out, 3, {});
        }
        nested.Close();
        return true;
      }
      case FieldType::kRawExtension:
      case FieldType::kFieldsV1: {
        Nested nested(out, number);
        PutBytes(out, 1, simdjson::minify(v));
        nested.Close();
        return true;
      }
    }
    return Fail("unknown field type");
  }

  Path path_;
  std::string error_path_;
  std::string error_;
  int depth_ = 0;
};

// ---------------------------------------------------------------- kinds

struct Target {
  const Message* message = nullptr;  // the object's message, or a list's item message
  bool list = false;
};

Target FindTarget(std::string_view api_version, std::string_view kind) {
  const Schema& schema = GetSchema();
  if (const Message* m = schema.FindKind(api_version, kind)) return Target{m, false};
  if (kind.size() > 4 && kind.ends_with("List")) {
    const std::string_view item = kind.substr(0, kind.size() - 4);
    if (item != "Status" && item != "DeleteOptions" && item != "WatchEvent") {
      if (const Message* m = schema.FindKind(api_version, item)) return Target{m, true};
    }
  }
  return Target{};
}

// Encodes the message of `target` from `obj` into `out`.
Status EncodeBody(const Target& target, dom::object obj, std::string& out) {
  FromJson encoder;
  if (!target.list) {
    if (!encoder.Body(*target.message, obj, out)) return encoder.TakeError();
    return Status::Ok();
  }
  Element metadata;
  if (obj.at_key("metadata").get(metadata) == simdjson::SUCCESS && !metadata.is_null()) {
    dom::object meta;
    if (metadata.get(meta) != simdjson::SUCCESS) return BadRequest("metadata: expected object");
    Nested nested(out, 1);
    if (!encoder.Body(GetSchema().list_meta(), meta, out)) return encoder.TakeError();
    nested.Close();
  }
  Element items;
  if (obj.at_key("items").get(items) == simdjson::SUCCESS && !items.is_null()) {
    dom::array array;
    if (items.get(array) != simdjson::SUCCESS) return BadRequest("items: expected array");
    size_t index = 0;
    for (Element item : array) {
      dom::object item_obj;
      if (item.get(item_obj) != simdjson::SUCCESS) {
        return BadRequest("items[" + std::to_string(index) + "]: expected object");
      }
      Nested nested(out, 2);
      if (!encoder.Body(*target.message, item_obj, out)) {
        Error error = encoder.TakeError();
        error.message = "items[" + std::to_string(index) + "]." + error.message;
        return error;
      }
      nested.Close();
      ++index;
    }
  }
  return Status::Ok();
}

Result<std::string> DecodeBody(const Target& target, std::string_view api_version,
                               std::string_view kind, std::string_view data) {
  std::string out = "{\"apiVersion\":";
  AppendJsonString(out, api_version);
  out += ",\"kind\":";
  AppendJsonString(out, kind);
  ToJson decoder;
  bool first = false;
  if (!target.list) {
    if (!decoder.Members(*target.message, data, out, first)) return decoder.TakeError();
    out += '}';
    return out;
  }
  // A list: {1: ListMeta metadata, 2: repeated items}; items get apiVersion and kind back.
  CodedInputStream in(Bytes(data), static_cast<int>(data.size()));
  uint32_t number, wire;
  uint64_t varint = 0;
  std::string_view bytes;
  std::string error;
  std::string metadata = "{}";
  std::string items;
  size_t count = 0;
  const std::string item_kind(kind.substr(0, kind.size() - 4));
  while (NextField(in, data, &number, &wire, &varint, &bytes, &error)) {
    if ((number == 1 || number == 2) && wire != kLengthDelimited) {
      return BadRequest("protobuf body: wrong wire type for a list's field " +
                        std::to_string(number));
    }
    if (number == 1) {
      metadata.clear();
      if (!decoder.Object(GetSchema().list_meta(), bytes, metadata)) return decoder.TakeError();
    } else if (number == 2) {
      auto item = DecodeBody(Target{target.message, false}, api_version, item_kind, bytes);
      if (!item.ok()) {
        Error e = item.error();
        e.message = "items[" + std::to_string(count) + "]: " + e.message;
        return e;
      }
      if (count++ > 0) items += ',';
      items += *item;
    }
  }
  if (!error.empty()) return BadRequest("protobuf body: " + error);
  out += ",\"metadata\":" + metadata + ",\"items\":[" + items + "]}";
  return out;
}

Result<std::string> EncodeObjectBody(std::string_view json, std::string* api_version_out,
                                     std::string* kind_out) {
  codec::ParserLease lease;
  Element root;
  if (Status parsed = codec::ParseDocument(lease, json, root); !parsed.ok()) return parsed.error();
  dom::object obj;
  if (root.get(obj) != simdjson::SUCCESS) return BadRequest("expected a JSON object");
  std::string_view api_version, kind;
  if (obj["apiVersion"].get(api_version) != simdjson::SUCCESS ||
      obj["kind"].get(kind) != simdjson::SUCCESS || kind.empty()) {
    return BadRequest("an object needs apiVersion and kind to be encoded as protobuf");
  }
  const Target target = FindTarget(api_version, kind);
  if (target.message == nullptr) return Unsupported(api_version, kind);
  std::string body;
  body.reserve(json.size());
  if (Status s = EncodeBody(target, obj, body); !s.ok()) return s.error();
  *api_version_out = api_version;
  *kind_out = kind;
  return body;
}

}  // namespace

bool HasProtobufForm(std::string_view api_version, std::string_view kind) {
  return FindTarget(api_version, kind).message != nullptr;
}

Result<std::string> EncodeObject(std::string_view json) {
  std::string api_version, kind;
  auto body = EncodeObjectBody(json, &api_version, &kind);
  if (!body.ok()) return body.error();
  // runtime.Unknown as Go writes it: typeMeta, raw, contentEncoding, contentType.
  std::string out;
  out.reserve(body->size() + api_version.size() + kind.size() + 32);
  out.append(kMagic);
  {
    Nested type_meta(out, 1);
    PutBytes(out, 1, api_version);
    PutBytes(out, 2, kind);
    type_meta.Close();
  }
  PutBytes(out, 2, *body);
  PutBytes(out, 3, {});
  PutBytes(out, 4, {});
  return out;
}

Result<std::string> DecodeObject(std::string_view body, std::string_view default_api_version,
                                 std::string_view default_kind) {
  if (body.size() < kMagic.size() || body.substr(0, kMagic.size()) != kMagic) {
    return BadRequest("protobuf body: does not start with the \"k8s\\0\" prefix");
  }
  body.remove_prefix(kMagic.size());
  if (body.empty()) return BadRequest("protobuf body: empty envelope");
  CodedInputStream in(Bytes(body), static_cast<int>(body.size()));
  uint32_t number, wire;
  uint64_t varint = 0;
  std::string_view bytes, raw, type_meta, content_encoding, content_type;
  std::string error;
  while (NextField(in, body, &number, &wire, &varint, &bytes, &error)) {
    if (number >= 1 && number <= 4 && wire != kLengthDelimited) {
      return BadRequest("protobuf body: envelope field " + std::to_string(number) +
                        " has wire type " + WireName(wire));
    }
    if (number == 1) type_meta = bytes;
    if (number == 2) raw = bytes;
    if (number == 3) content_encoding = bytes;
    if (number == 4) content_type = bytes;
  }
  if (!error.empty()) return BadRequest("protobuf body: envelope: " + error);
  std::string_view api_version, kind;
  {
    CodedInputStream tm(Bytes(type_meta), static_cast<int>(type_meta.size()));
    while (NextField(tm, type_meta, &number, &wire, &varint, &bytes, &error)) {
      if ((number == 1 || number == 2) && wire != kLengthDelimited) {
        return BadRequest("protobuf body: typeMeta field " + std::to_string(number) +
                          " has wire type " + WireName(wire));
      }
      if (number == 1) api_version = bytes;
      if (number == 2) kind = bytes;
    }
    if (!error.empty()) return BadRequest("protobuf body: typeMeta: " + error);
  }
  if (api_version.empty()) api_version = default_api_version;
  if (kind.empty()) kind = default_kind;
  if (kind.empty()) return BadRequest("protobuf body: Object 'Kind' is missing in the envelope");
  if (api_version.empty()) {
    return BadRequest("protobuf body: Object 'apiVersion' is missing in the envelope");
  }
  if (!ValidUtf8(api_version) || !ValidUtf8(kind)) {
    return BadRequest("protobuf body: typeMeta is not UTF-8");
  }
  if (!content_encoding.empty()) {
    return BadRequest("protobuf body: contentEncoding \"" + std::string(content_encoding) +
                      "\" is not supported");
  }
  if (!content_type.empty() && content_type != kMediaType) {
    return BadRequest("protobuf body: raw of contentType \"" + std::string(content_type) +
                      "\" is not supported");
  }
  const Target target = FindTarget(api_version, kind);
  if (target.message == nullptr) return Unsupported(api_version, kind);
  return DecodeBody(target, api_version, kind, raw);
}

Result<std::string> EncodeMessage(std::string_view api_version, std::string_view kind,
                                  std::string_view json) {
  const Target target = FindTarget(api_version, kind);
  if (target.message == nullptr) return Unsupported(api_version, kind);
  codec::ParserLease lease;
  Element root;
  if (Status parsed = codec::ParseDocument(lease, json, root); !parsed.ok()) return parsed.error();
  dom::object obj;
  if (root.get(obj) != simdjson::SUCCESS) return BadRequest("expected a JSON object");
  std::string out;
  if (Status s = EncodeBody(target, obj, out); !s.ok()) return s.error();
  return out;
}

Result<std::string> DecodeMessage(std::string_view api_version, std::string_view kind,
                                  std::string_view message) {
  const Target target = FindTarget(api_version, kind);
  if (target.message == nullptr) return Unsupported(api_version, kind);
  return DecodeBody(target, api_version, kind, message);
}

Status AppendWatchFrame(std::string_view type, std::string_view object_json, std::string* out) {
  auto object = EncodeObject(object_json);
  if (!object.ok()) return object.error();
  std::string event;
  event.reserve(object->size() + 32);
  PutBytes(event, 1, type);
  {
    Nested raw_extension(event, 2);
    PutBytes(event, 1, *object);
    raw_extension.Close();
  }
  const uint32_t length = static_cast<uint32_t>(event.size());
  const char prefix[4] = {static_cast<char>(length >> 24), static_cast<char>(length >> 16),
                          static_cast<char>(length >> 8), static_cast<char>(length)};
  out->append(prefix, 4);
  out->append(event);
  return Status::Ok();
}

Result<WatchFrame> ReadWatchFrame(std::string_view stream) {
  WatchFrame frame;
  if (stream.size() < 4) return frame;
  const uint32_t length = (static_cast<uint32_t>(static_cast<uint8_t>(stream[0])) << 24) |
                          (static_cast<uint32_t>(static_cast<uint8_t>(stream[1])) << 16) |
                          (static_cast<uint32_t>(static_cast<uint8_t>(stream[2])) << 8) |
                          static_cast<uint32_t>(static_cast<uint8_t>(stream[3]));
  if (stream.size() - 4 < length) return frame;
  const std::string_view event = stream.substr(4, length);
  CodedInputStream in(Bytes(event), static_cast<int>(event.size()));
  uint32_t number, wire;
  uint64_t varint = 0;
  std::string_view bytes, type, raw_extension;
  std::string error;
  while (NextField(in, event, &number, &wire, &varint, &bytes, &error)) {
    if ((number == 1 || number == 2) && wire != kLengthDelimited) {
      return BadRequest("watch event: field " + std::to_string(number) + " has wire type " +
                        WireName(wire));
    }
    if (number == 1) type = bytes;
    if (number == 2) raw_extension = bytes;
  }
  if (!error.empty()) return BadRequest("watch event: " + error);
  std::string_view raw;
  CodedInputStream re(Bytes(raw_extension), static_cast<int>(raw_extension.size()));
  while (NextField(re, raw_extension, &number, &wire, &varint, &bytes, &error)) {
    if (number == 1 && wire == kLengthDelimited) raw = bytes;
  }
  if (!error.empty()) return BadRequest("watch event object: " + error);
  auto object = DecodeObject(raw);
  if (!object.ok()) return object.error();
  frame.type = type;
  frame.object_json = std::move(object).value();
  frame.consumed = 4 + length;
  return frame;
}

}  // namespace copse::kube::protobuf

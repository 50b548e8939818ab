#pragma once
// Strict, path-tracking decoding of YAML into plain structs, the way
// kube-scheduler decodes its configuration (sigs.k8s.io/yaml with strict
// field checking): every key must be one the decoder asks for, no key may
// appear twice, and every scalar must have the field's type. Problems go to a
// FieldErrors list, each naming the field path and the line/column:
//
//   unknown field "profiles[0].plugins.scor" (line 7, column 7)
//   duplicate field "parallelism" (line 5, column 1)
//   percentageOfNodesToScore: Invalid value: "ten": must be an integer (line 3, column 27)
//
// A null value (`key:` or `key: ~`) reads as absent, like JSON null in Go.
// Decoding goes on after an error so that one pass reports them all.
//
// Only configuration code includes this header (it pulls in yaml-cpp): the
// scheduler/config parser and plugin argument decoders (plugin_args.h).
//
// Thread-safety: a MapReader is used by one thread at a time.

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/config/field_errors.h"

namespace copse::scheduler::config {

// " (line L, column C)", 1-based; "" when the node has no position.
std::string PositionSuffix(const YAML::Node& node);
// How a node is shown in an "Invalid value" message: scalars quoted, other
// kinds as "object" / "list".
std::string NodeRepr(const YAML::Node& node);
// "path.key" ("key" at the top level) and "path[index]".
std::string ChildPath(std::string_view path, std::string_view key);
std::string IndexPath(std::string_view path, size_t index);

// Scalar conversions; on a type mismatch they record an Invalid error for
// `path` and return nullopt.
std::optional<int64_t> ReadInt(const YAML::Node& node, std::string_view path, FieldErrors& errors,
                               int64_t min = INT64_MIN, int64_t max = INT64_MAX);
std::optional<int32_t> ReadInt32(const YAML::Node& node, std::string_view path,
                                 FieldErrors& errors);
std::optional<double> ReadDouble(const YAML::Node& node, std::string_view path,
                                 FieldErrors& errors);
std::optional<bool> ReadBool(const YAML::Node& node, std::string_view path, FieldErrors& errors);
std::optional<std::string> ReadString(const YAML::Node& node, std::string_view path,
                                      FieldErrors& errors);
// A Go duration string ("15s"); see core/duration.h.
std::optional<std::chrono::nanoseconds> ReadDuration(const YAML::Node& node, std::string_view path,
                                                     FieldErrors& errors);

// The elements of a sequence (null: none); anything else records
// "<path>: Invalid value: ...: must be a list" and yields none.
std::vector<YAML::Node> ReadList(const YAML::Node& node, std::string_view path,
                                 FieldErrors& errors);

// One YAML mapping being decoded into a struct.
class MapReader {
 public:
  // A null node reads as an empty map; a non-map records "<path>: Invalid
  // value: ...: must be an object" and reads as empty. Duplicate keys are
  // reported here (the first occurrence is the one decoded).
  MapReader(const YAML::Node& node, std::string path, FieldErrors& errors);

  const std::string& path() const noexcept { return path_; }
  FieldErrors& errors() noexcept { return errors_; }
  std::string Path(std::string_view key) const { return ChildPath(path_, key); }

  // Marks `key` as known. The value when present and not null.
  std::optional<YAML::Node> Get(std::string_view key);
  // Typed getters: true when present and well-typed (then `out` is set);
  // false and `out` untouched when absent, null, or wrong (error recorded).
  bool Int32(std::string_view key, int32_t& out);
  bool Int64(std::string_view key, int64_t& out);
  bool Double(std::string_view key, double& out);
  bool Bool(std::string_view key, bool& out);
  bool String(std::string_view key, std::string& out);
  bool Duration(std::string_view key, std::chrono::nanoseconds& out);
  bool StringList(std::string_view key, std::vector<std::string>& out);
  // Marks `key` as known and reports it as an unknown field when present
  // (for fields that exist in some kinds only), with `hint` appended.
  void Reject(std::string_view key, std::string_view hint);

  // Reports every key no getter asked for as an unknown field. Call once,
  // after all getters.
  void Finish();

 private:
  struct Entry {
    std::string key;
    YAML::Node value;
    YAML::Node key_node;
    bool used = false;
  };
  Entry* Find(std::string_view key);

  std::string path_;
  FieldErrors& errors_;
  std::vector<Entry> entries_;
};

}  // namespace copse::scheduler::config

#pragma once
// YAML::LoadAll without yaml-cpp 0.7's endless loop: on some malformed text
// (a document that starts with a stray ',', e.g. the one-byte text ",")
// LoadAll returns a null document at the same position forever, growing its
// vector until memory runs out. LoadYamlDocuments first walks the documents
// with the same parser, discarding the events, and refuses text on which a
// document starts where the previous one did; then LoadAll is safe.
//
// Header-only so that copse_core does not link yaml-cpp: include it only from
// .cc files of libraries that link yaml-cpp (deploy/, grove/, kube/,
// scheduler/config/). Thread-safety: reentrant.

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace copse {

namespace yaml_internal {
// Records where each document starts; ignores everything else.
class DocumentStarts : public YAML::EventHandler {
 public:
  int last_pos = -1;
  YAML::Mark stuck_at = YAML::Mark::null_mark();
  bool stuck = false;

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (mark.pos == last_pos && !stuck) {
      stuck = true;
      stuck_at = mark;
    }
    last_pos = mark.pos;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};
}  // namespace yaml_internal

// The documents of `yaml`, as YAML::LoadAll returns them. Throws
// YAML::ParserException (with the position) for malformed text, including
// the text LoadAll would loop on.
inline std::vector<YAML::Node> LoadYamlDocuments(std::string_view yaml) {
  {
    std::istringstream in{std::string(yaml)};
    YAML::Parser parser(in);
    yaml_internal::DocumentStarts starts;
    while (parser.HandleNextDocument(starts)) {
      if (starts.stuck) {
        throw YAML::ParserException(starts.stuck_at, "unexpected character at document start");
      }
    }
  }
  return YAML::LoadAll(std::string(yaml));
}

}  // namespace copse

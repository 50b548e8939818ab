// Quantities, label and field selectors (string and JSON forms) and node
// selector terms: the first byte picks the parser, the rest is its input.
// (The API server's query-parameter parsers are fuzzed through
// apiserver_fuzz.cc.)
// Whatever parses must print back to text that parses to the same value.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/check.h"
#include "core/labels.h"
#include "core/quantity.h"
#include "kube/codec.h"

namespace {

using copse::FieldSelector;
using copse::LabelSelector;
using copse::Quantity;

void FuzzQuantity(std::string_view text) {
  auto q = Quantity::Parse(text);
  if (!q.ok()) return;
  const std::string canonical = q->CanonicalString();
  auto back = Quantity::Parse(canonical);
  COPSE_CHECK(back.ok()) << back.error().ToString();
  COPSE_CHECK(*back == *q) << canonical;
  COPSE_CHECK(back->CanonicalString() == canonical) << canonical;
  const std::string shown = q->ToString();
  auto shown_back = Quantity::Parse(shown);
  COPSE_CHECK(shown_back.ok()) << shown_back.error().ToString();
  COPSE_CHECK(*shown_back == *q) << shown;
  (void)q->Value();
  (void)q->MilliValue();
  (void)(*q + *back);
  (void)(*q - *back);
}

void FuzzLabelSelector(std::string_view text) {
  auto core = LabelSelector::Parse(text);
  if (!core.ok()) return;
  const std::string shown = core->ToString();
  auto back = LabelSelector::Parse(shown);
  COPSE_CHECK(back.ok()) << shown << ": " << back.error().ToString();
  COPSE_CHECK(*back == *core) << shown;
  (void)core->Matches(copse::Labels{{"a", "b"}, {"h", "3"}});
}

void FuzzFieldSelector(std::string_view text) {
  auto core = FieldSelector::Parse(text);
  if (!core.ok()) return;
  const std::string shown = core->ToString();
  auto back = FieldSelector::Parse(shown);
  COPSE_CHECK(back.ok()) << shown << ": " << back.error().ToString();
  COPSE_CHECK(*back == *core) << shown;
}

void FuzzLabelSelectorJson(std::string_view json) {
  auto selector = copse::kube::DecodeLabelSelector(json);
  if (!selector.ok()) return;
  const std::string encoded = copse::kube::EncodeLabelSelector(*selector);
  auto back = copse::kube::DecodeLabelSelector(encoded);
  COPSE_CHECK(back.ok()) << encoded << ": " << back.error().ToString();
  COPSE_CHECK(*back == *selector) << encoded;
}

void FuzzNodeSelector(std::string_view json) {
  auto selector = copse::kube::DecodeNodeSelector(json);
  if (!selector.ok()) return;
  const std::string encoded = copse::kube::EncodeNodeSelector(*selector);
  auto back = copse::kube::DecodeNodeSelector(encoded);
  COPSE_CHECK(back.ok()) << encoded << ": " << back.error().ToString();
  COPSE_CHECK(*back == *selector) << encoded;
  (void)selector->Matches(copse::Labels{{"zone", "a"}, {"gpus", "8"}}, "node-1");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  // Offset so that the digits pick the parsers in order: '0' is a quantity.
  switch ((data[0] + 2) % 5) {
    case 0:
      FuzzQuantity(text);
      break;
    case 1:
      FuzzLabelSelector(text);
      break;
    case 2:
      FuzzFieldSelector(text);
      break;
    case 3:
      FuzzLabelSelectorJson(text);
      break;
    case 4:
      FuzzNodeSelector(text);
      break;
  }
  return 0;
}

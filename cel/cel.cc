#include "cel/cel.h"

#include <re2/re2.h>

#include <algorithm>

#include "cel/checker.h"
#include "cel/functions.h"
#include "cel/parser.h"
#include "cel/program.h"

namespace copse::cel {
namespace {

using internal::CompiledProgram;
using internal::Issue;
using internal::Node;
using internal::NodeKind;
using internal::Value;
using internal::ValueKind;

constexpr size_t kMaxErrorsToReport = 100;
constexpr size_t kMaxSnippetLength = 16384;

Error InvalidError(std::string message) {
  Error e = MakeError(ErrorCode::kInvalid, std::move(message));
  e.reason = "FieldValueInvalid";
  return e;
}

// cel-go's Errors.ToDisplayString: each error with its line and column (in
// characters, from 1) and the line with a caret under the column.
std::string FormatIssues(std::string_view source, std::vector<Issue> issues) {
  std::stable_sort(issues.begin(), issues.end(),
                   [](const Issue& a, const Issue& b) { return a.offset < b.offset; });
  std::string out;
  for (size_t k = 0; k < issues.size() && k < kMaxErrorsToReport; ++k) {
    auto offset = static_cast<size_t>(std::max<int32_t>(0, issues[k].offset));
    offset = std::min(offset, source.size());
    size_t line_start = source.rfind('\n', offset == 0 ? std::string_view::npos : offset - 1);
    line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
    if (offset > 0 && source[offset - 1] == '\n') line_start = offset;
    size_t line =
        1 + static_cast<size_t>(std::count(source.begin(), source.begin() + line_start, '\n'));
    size_t line_end = source.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = source.size();
    std::string_view text = source.substr(line_start, line_end - line_start);
    size_t column = internal::CodePoints(source.substr(line_start, offset - line_start));
    if (k > 0) out += "\n";
    out += "ERROR: <input>:" + std::to_string(line) + ":" + std::to_string(column + 1) + ": " +
           issues[k].message;
    if (!text.empty() && text.size() <= kMaxSnippetLength) {
      std::string snippet(text);
      std::replace(snippet.begin(), snippet.end(), '\t', ' ');
      out += "\n | " + snippet + "\n | ";
      size_t i = 0;
      for (size_t c = 0; c < column && i < text.size(); ++c) {
        size_t n = 1;
        while (i + n < text.size() && (static_cast<unsigned char>(text[i + n]) & 0xC0) == 0x80) ++n;
        out += n > 1 ? "\xEF\xBC\x8E" : ".";  // U+FF0E under a wide character
        i += n;
      }
      bool wide = i < text.size() && static_cast<unsigned char>(text[i]) >= 0x80;
      out += wide ? "\xEF\xBC\xBE" : "^";  // U+FF3E
    }
  }
  if (issues.size() > kMaxErrorsToReport) {
    out +=
        "\n" + std::to_string(issues.size() - kMaxErrorsToReport) + " more errors were truncated";
  }
  return out;
}

Value LiteralValue(const internal::Literal& l) {
  switch (l.kind) {
    case internal::Literal::Kind::kNull:
      return Value::Null();
    case internal::Literal::Kind::kBool:
      return Value::Bool(l.b);
    case internal::Literal::Kind::kInt:
      return Value::Int(l.i);
    case internal::Literal::Kind::kUint:
      return Value::Uint(l.u);
    case internal::Literal::Kind::kDouble:
      return Value::Double(l.d);
    case internal::Literal::Kind::kString:
      return Value::String(l.text);
    case internal::Literal::Kind::kBytes:
      return Value::Bytes(l.text);
  }
  return Value::Null();
}

const Device& EmptyDevice() {
  static const Device device;
  return device;
}

// Program building: literals become values, constant regular expressions
// are compiled once (an invalid constant pattern of matches() is a compile
// error, as Kubernetes' ValidateRegexLiterals makes it), and calls and
// literals whose inputs are all constants are evaluated now, as cel-go's
// OptOptimize does.
class Builder {
 public:
  explicit Builder(CompiledProgram& p)
      : ctx_(&EmptyDevice(), UINT64_MAX, p.constants, p.constant_values) {
    ctx_.slots = nullptr;
  }

  void Build(Node& n) {
    for (auto& c : n.children) Build(*c);
    switch (n.kind) {
      case NodeKind::kLiteral:
        n.constant = LiteralValue(n.literal);
        n.is_constant = true;
        return;
      case NodeKind::kCall:
        PrepareRegex(n);
        if (!n.overloads.empty() &&
            std::all_of(n.overloads.begin(), n.overloads.end(),
                        [](const internal::Overload* o) { return o->foldable; })) {
          Fold(n);
        }
        return;
      case NodeKind::kList:
      case NodeKind::kMap:
        Fold(n);
        return;
      default:
        return;
    }
  }

  std::vector<Issue> issues;

 private:
  void PrepareRegex(Node& n) {
    if (n.overloads.empty() || n.children.size() < 2) return;
    for (const internal::Overload* o : n.overloads) {
      if (!internal::TakesRegex(*o, 1)) return;
    }
    const Node& pattern = *n.children[1];
    if (!pattern.is_constant || pattern.constant.kind != ValueKind::kString) return;
    auto re = internal::CompileRegex(pattern.constant.sv());
    if (re->ok()) {
      n.regex = std::move(re);
    } else if (n.overloads[0]->function == "matches") {
      issues.push_back(Issue{pattern.offset, "invalid matches argument"});
    }
  }

  void Fold(Node& n) {
    for (const auto& c : n.children) {
      if (!c->is_constant) return;
    }
    try {
      Value v = internal::Eval(ctx_, n);
      if (v.IsError()) return;
      n.constant = v;
      n.is_constant = true;
    } catch (const internal::Cancelled&) {
      // Left to fail at runtime, where the limit applies.
    }
  }

  internal::EvalContext ctx_;
};

}  // namespace

Program::Program(std::shared_ptr<const internal::CompiledProgram> impl) : impl_(std::move(impl)) {}

uint64_t Program::estimated_max_cost() const noexcept { return impl_->estimated_max_cost; }
std::string_view Program::expression() const noexcept { return impl_->expression; }

Result<Evaluation> Program::Evaluate(const Device& device) const {
  const CompiledProgram& p = *impl_;
  internal::Arena arena(internal::kMaxEvaluationMemory);
  internal::ValueStore store;
  internal::EvalContext ctx(&device, p.cost_limit, arena, store);
  Value inline_slots[8];
  std::vector<Value> heap_slots;
  ctx.slots = inline_slots;
  if (p.num_slots > 8) {
    heap_slots.resize(static_cast<size_t>(p.num_slots));
    ctx.slots = heap_slots.data();
  }
  Value result;
  try {
    result = internal::Eval(ctx, *p.root);
  } catch (const internal::Cancelled& c) {
    return MakeError(ErrorCode::kInvalid, c.message);
  }
  if (result.IsError()) return MakeError(ErrorCode::kInvalid, std::string(result.sv()));
  if (result.kind != ValueKind::kBool) {
    return MakeError(ErrorCode::kInvalid, "CEL result of type " +
                                              std::string(internal::TypeName(result)) +
                                              " could not be converted to bool");
  }
  return Evaluation{result.b, ctx.cost};
}

Result<bool> Program::Matches(const Device& device) const {
  Result<Evaluation> e = Evaluate(device);
  if (!e.ok()) return std::move(e).error();
  return e->matches;
}

Result<Program> Compile(std::string_view expression, const CompileOptions& options) {
  if (expression.size() > options.max_length) {
    Error e = MakeError(ErrorCode::kInvalid,
                        "may not be more than " + std::to_string(options.max_length) + " bytes");
    e.reason = "FieldValueTooLong";
    return e;
  }
  auto p = std::make_shared<CompiledProgram>();
  p->expression = std::string(expression);
  p->cost_limit = options.cost_limit;
  internal::ParseResult parsed = internal::Parse(p->expression);
  if (!parsed.issues.empty()) {
    return InvalidError("compilation failed: " + FormatIssues(p->expression, parsed.issues));
  }
  p->root = std::move(parsed.root);
  internal::CheckOptions check_options;
  check_options.declare_allow_multiple_allocations = options.declare_allow_multiple_allocations;
  internal::CheckResult checked = internal::Check(*p->root, p->types, check_options);
  if (!checked.issues.empty()) {
    return InvalidError("compilation failed: " + FormatIssues(p->expression, checked.issues));
  }
  internal::Type output = p->root->type;
  if (output->kind != internal::TypeKind::kBool && output->kind != internal::TypeKind::kAny) {
    return InvalidError("must evaluate to bool or the unknown type, not " +
                        internal::FormatType(output));
  }
  p->num_slots = checked.num_slots;
  p->estimated_max_cost = internal::EstimateMaxCost(*p->root, p->num_slots);
  Builder builder(*p);
  builder.Build(*p->root);
  if (!builder.issues.empty()) {
    return InvalidError("compilation failed: " + FormatIssues(p->expression, builder.issues));
  }
  return Program(std::move(p));
}

Status Validate(std::string_view expression, const CompileOptions& options) {
  Result<Program> program = Compile(expression, options);
  if (!program.ok()) return std::move(program).error();
  if (program->estimated_max_cost() > options.cost_limit) {
    Error e = MakeError(ErrorCode::kInvalid, "too complex, exceeds cost limit");
    e.reason = "FieldValueForbidden";
    return e;
  }
  return Status::Ok();
}

std::string FormatFieldError(std::string_view field_path, std::string_view expression,
                             const Error& error) {
  std::string out(field_path);
  if (error.reason == "FieldValueInvalid") {
    std::string quoted = "\"";
    for (char c : expression) {
      auto u = static_cast<unsigned char>(c);
      switch (c) {
        case '"':
          quoted += "\\\"";
          break;
        case '\\':
          quoted += "\\\\";
          break;
        case '\n':
          quoted += "\\n";
          break;
        case '\r':
          quoted += "\\r";
          break;
        case '\t':
          quoted += "\\t";
          break;
        default:
          if (u < 0x20 || u == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\x%02x", u);
            quoted += buf;
          } else {
            quoted += c;
          }
      }
    }
    return out + ": Invalid value: " + quoted + "\": " + error.message;
  }
  if (error.reason == "FieldValueTooLong") return out + ": Too long: " + error.message;
  if (error.reason == "FieldValueForbidden") return out + ": Forbidden: " + error.message;
  return out + ": " + error.message;
}

}  // namespace copse::cel

// The limits that keep a selector from costing too much or crashing: the
// length limit, the nesting limit, the runtime cost limit and the estimated
// cost check of Validate; and the field errors a pod's event shows.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "cel/cel.h"
#include "tests/unit/cel/test_device.h"

namespace copse::cel {
namespace limits_test {

std::string Repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// Kubernetes' own CEL-length test: a selector of exactly the limit is valid,
// one byte more is too long.
TEST(CelLimits, ExpressionLength) {
  std::string base = "device.driver == \"\"";
  std::string at_limit =
      "device.driver == \"" + std::string(kMaxExpressionLength - base.size(), 'x') + "\"";
  ASSERT_EQ(at_limit.size(), kMaxExpressionLength);
  EXPECT_TRUE(Validate(at_limit).ok());
  Status too_long = Validate(at_limit + " ");
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.error().reason, "FieldValueTooLong");
  EXPECT_EQ(FormatFieldError("spec.devices.requests[1].exactly.selectors[1].cel.expression",
                             at_limit + " ", too_long.error()),
            "spec.devices.requests[1].exactly.selectors[1].cel.expression: Too long: may not be "
            "more than 10240 bytes");
  // The limit is an option for callers that enforce another one.
  CompileOptions longer;
  longer.max_length = 20000;
  EXPECT_TRUE(Compile(at_limit + " ", longer).ok());
}

TEST(CelLimits, NestingDepth) {
  testing::TestDevice device;
  const std::string limit_error = "expression recursion limit exceeded: 250";
  // Parentheses, lists, calls and member chains within the limit work...
  EXPECT_EQ(testing::Outcome(Repeat("(", 200) + "true" + Repeat(")", 200), device.device), "true");
  EXPECT_EQ(testing::Outcome(Repeat("[", 200) + Repeat("]", 200) + " != []", device.device),
            "true");
  EXPECT_EQ(testing::Outcome("1" + Repeat(" + 1", 200) + " == 201", device.device), "true");
  // ...and beyond it are a compile error naming the limit, wherever it is.
  for (const std::string& deep : {
           Repeat("(", 300) + "true" + Repeat(")", 300),
           Repeat("[", 300) + Repeat("]", 300) + " != []",
           Repeat("{1: ", 300) + "1" + Repeat("}", 300) + " != {}",
           "1" + Repeat(" + 1", 300) + " == 301",
           "size(" + Repeat("dyn(", 300) + "\"\"" + Repeat(")", 301) + " == 0",
           "{\"a\": 1}" + Repeat(".a", 300) + " == 1",
           Repeat("false ? false : ", 300) + "true",
           Repeat("[1].all(x, ", 300) + "true" + Repeat(")", 300),
       }) {
    std::string outcome = testing::Outcome(deep, device.device);
    EXPECT_NE(outcome.find("compile error: compilation failed: ERROR: <input>:1:"),
              std::string::npos)
        << outcome;
    EXPECT_NE(outcome.find(limit_error), std::string::npos) << deep.substr(0, 40);
  }
  // Input the size of the length limit made only of openers fails cleanly.
  for (char c : std::string("([{!-")) {
    std::string outcome = testing::Outcome(std::string(kMaxExpressionLength, c), device.device);
    EXPECT_EQ(outcome.rfind("compile error: compilation failed: ERROR: <input>:1:", 0), 0u)
        << outcome.substr(0, 200);
  }
  // Long flat chains are no nesting: && and || take any number of terms.
  EXPECT_EQ(testing::Outcome(Repeat("false||", 1400) + "true", device.device), "true");
  EXPECT_EQ(testing::Outcome(Repeat("true&&", 1400) + "false", device.device), "false");
  EXPECT_EQ(testing::Outcome(Repeat("!", 5001) + "false", device.device), "true");
}

// 10^6 iterations of a nested all(): the runtime limit stops it.
TEST(CelLimits, RuntimeCostLimit) {
  testing::TestDevice device;
  std::string list = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
  std::string expr;
  for (int i = 0; i < 6; ++i) expr += list + ".all(x" + std::to_string(i) + ", ";
  expr += "true" + Repeat(")", 6);
  Result<Program> program = Compile(expr);
  ASSERT_TRUE(program.ok()) << program.error().message;
  EXPECT_GT(program->estimated_max_cost(), kSelectorCostLimit);
  Result<Evaluation> result = program->Evaluate(device.device);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, "operation cancelled: actual cost limit exceeded");

  // A smaller limit stops a smaller loop; the same loop passes a larger one.
  std::string small = list + ".all(a, " + list + ".all(b, a + b > 0))";
  CompileOptions tight;
  tight.cost_limit = 100;
  Result<Program> limited = Compile(small, tight);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->Matches(device.device).error().message,
            "operation cancelled: actual cost limit exceeded");
  Result<Program> unlimited = Compile(small);
  ASSERT_TRUE(unlimited.ok());
  Result<Evaluation> ok = unlimited->Evaluate(device.device);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_TRUE(ok->matches);
  EXPECT_GT(ok->actual_cost, 100u);
  EXPECT_LE(ok->actual_cost, unlimited->estimated_max_cost());
}

// Kubernetes' CEL-cost validation test: the API server refuses this
// selector as too complex, before anything runs.
TEST(CelLimits, ValidateRefusesEstimatedCostAboveTheLimit) {
  std::string list = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
  std::string expr = list + ".all(x, " + list + ".all(y, " + list + ".all(z, " + list +
                     ".all(z2, " + list + ".all(z3, " + list + ".all(z4, " + list +
                     ".all(z5, int('1'.find('[0-9]*')) < 100)))))))";
  Status status = Validate(expr);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().reason, "FieldValueForbidden");
  EXPECT_EQ(FormatFieldError("spec.devices.requests[0].exactly.selectors[0].cel.expression", expr,
                             status.error()),
            "spec.devices.requests[0].exactly.selectors[0].cel.expression: Forbidden: too "
            "complex, exceeds cost limit");
  // Compile alone accepts it (kube-scheduler compiles and enforces the limit
  // at runtime).
  EXPECT_TRUE(Compile(expr).ok());
}

TEST(CelLimits, EstimatesOfTypicalSelectorsAreSmall) {
  for (const char* expr : {
           "device.driver == \"gpu.example.com\"",
           "device.attributes[\"gpu.example.com\"].model == \"H100\" && "
           "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"64Gi\")) >= 0",
           "device.attributes[\"gpu.example.com\"].model.matches(\"^H[0-9]+$\")",
           "device.attributes[\"gpu.example.com\"].all(k, k.startsWith(\"a\"))",
       }) {
    Result<Program> p = Compile(expr);
    ASSERT_TRUE(p.ok()) << expr;
    EXPECT_LT(p->estimated_max_cost(), 1000u) << expr;
    EXPECT_TRUE(Validate(expr).ok()) << expr;
  }
  // A string function over an attribute is bounded by the attribute's
  // maximum length (64): 0.1 x 64 for startsWith, plus the lookup.
  Result<Program> p = Compile("device.attributes[\"d\"].model.startsWith(\"x\")");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->estimated_max_cost(), 11u);  // ident, select, index, select, 7
}

TEST(CelLimits, FieldErrorForAnInvalidSelector) {
  std::string expr = "devce.driver == \"gpu.example.com\"";
  Result<Program> p = Compile(expr);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().reason, "FieldValueInvalid");
  EXPECT_EQ(FormatFieldError("spec.devices.requests[0].exactly.selectors[0].cel.expression", expr,
                             p.error()),
            "spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: "
            "\"devce.driver == \\\"gpu.example.com\\\"\": compilation failed: ERROR: <input>:1:1: "
            "undeclared reference to 'devce' (in container '')\n"
            " | devce.driver == \"gpu.example.com\"\n | ^");
}

// A selector with several errors reports each, in source order.
TEST(CelLimits, AllTypeErrorsAreReported) {
  Result<Program> p = Compile("a == 1 && device.nope == 2 && b");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message,
            "compilation failed: ERROR: <input>:1:1: undeclared reference to 'a' (in container "
            "'')\n | a == 1 && device.nope == 2 && b\n | ^\n"
            "ERROR: <input>:1:17: undefined field 'nope'\n"
            " | a == 1 && device.nope == 2 && b\n | ................^\n"
            "ERROR: <input>:1:31: undeclared reference to 'b' (in container '')\n"
            " | a == 1 && device.nope == 2 && b\n | ..............................^");
}

TEST(CelLimits, AllowMultipleAllocationsIsDeclaredOnRequest) {
  testing::TestDevice device;
  EXPECT_EQ(testing::Outcome("device.allowMultipleAllocations", device.device), "true");
  CompileOptions without;
  without.declare_allow_multiple_allocations = false;
  EXPECT_EQ(testing::Outcome("device.allowMultipleAllocations", device.device, without),
            "compile error: compilation failed: ERROR: <input>:1:7: undefined field "
            "'allowMultipleAllocations'\n | device.allowMultipleAllocations\n | ......^");
}

// One program, evaluated by several threads at once against different
// devices, gives each thread its own answers.
TEST(CelLimits, ConcurrentEvaluationOfOneProgram) {
  Result<Program> program = Compile(
      "device.attributes[\"gpu.example.com\"].index % 2 == 0 && "
      "[1, 2, 3].map(x, x * device.attributes[\"gpu.example.com\"].index).sum() > 0");
  ASSERT_TRUE(program.ok());
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int> wrong(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        int64_t index = t * 10000 + i;
        DeviceAttribute attr{"gpu.example.com", "index", index};
        Device d;
        d.driver = "gpu.example.com";
        d.attributes = std::span<const DeviceAttribute>(&attr, 1);
        Result<bool> m = program->Matches(d);
        if (!m.ok() || *m != (index % 2 == 0 && index > 0)) ++wrong[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

}  // namespace limits_test
}  // namespace copse::cel

// Label, field and node selector tests. Cases follow Kubernetes:
// k8s.io/apimachinery/pkg/labels/selector_test.go, pkg/fields, metav1
// LabelSelector validation, core/v1 NodeSelector validation and
// component-helpers/scheduling/corev1/nodeaffinity.
#include "core/labels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace copse {
namespace {

LabelSelector MustSelect(std::string_view text) {
  Result<LabelSelector> s = LabelSelector::Parse(text);
  EXPECT_TRUE(s.ok()) << text << ": " << (s.ok() ? "" : s.error().message);
  return s.ok() ? s.value() : LabelSelector::Nothing();
}

std::string WithoutSpaces(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
  return s;
}

bool Contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

// ---------------------------------------------------------------------------
// String form.

TEST(LabelSelectorParse, GoodStringsRestringWithoutSpaces) {
  // TestSelectorParse good strings.
  for (const char* text :
       {"x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x", "x>1", "x>1,z<5"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(MustSelect(text).ToString(), WithoutSpaces(text));
  }
}

TEST(LabelSelectorParse, BadStringsAreRejected) {
  // TestSelectorParse bad strings and TestSetSelectorParser invalid ones.
  const char* const kBad[] = {
      "x=a||y=b",
      "x==a==b",
      "!x=a",
      "x<a",
      ",x,y",
      "x nott in (y)",
      "a in (xyz),",
      "a in (xyz)b notin ()",
      "a in (xyz abc)",
      "a notin(",
      "a (",
      "(",
      "x in",
      "x=a,",
      "x,",
      "x in (a",
      "x in a",
      "!",
      "x=y=z",
      "-x",
      "x=-a",
      "x in (a,-b)",
      "a/b/c",
      "x>y",
      "x>1,y<",
      "!x in (a)",
  };
  for (const char* text : kBad) {
    Result<LabelSelector> s = LabelSelector::Parse(text);
    EXPECT_FALSE(s.ok()) << text << " parsed as " << (s.ok() ? s->ToString() : "");
    if (!s.ok()) {
      EXPECT_EQ(s.error().code, ErrorCode::kInvalid);
      EXPECT_TRUE(Contains(s.error().message, "\"" + std::string(text) + "\""))
          << s.error().message;
    }
  }
}

TEST(LabelSelectorParse, ErrorsSayWhatWasFoundAndExpected) {
  EXPECT_TRUE(Contains(LabelSelector::Parse("x=a=b").error().message,
                       "found '=', expected: ',' or 'end of string'"));
  // "a||y" is one identifier, and not a label value.
  EXPECT_TRUE(
      Contains(LabelSelector::Parse("x=a||y=b").error().message, "Invalid value: \"a||y\""));
  EXPECT_TRUE(Contains(LabelSelector::Parse("a (").error().message,
                       "found '(', expected: in, notin, =, ==, !=, gt, lt"));
  EXPECT_TRUE(Contains(LabelSelector::Parse(",x").error().message,
                       "found ',', expected: !, identifier, or 'end of string'"));
  EXPECT_TRUE(Contains(LabelSelector::Parse("a in (xyz),").error().message,
                       "expected: identifier after ','"));
  EXPECT_TRUE(Contains(LabelSelector::Parse("a in (xyz abc)").error().message,
                       "found 'abc', expected: ',' or ')'"));
  const std::string bad_key = LabelSelector::Parse("-x=1").error().message;
  EXPECT_TRUE(Contains(bad_key, "unable to parse requirement")) << bad_key;
  EXPECT_TRUE(Contains(bad_key, "key: Invalid value: \"-x\"")) << bad_key;
  const std::string bad_int = LabelSelector::Parse("x<a").error().message;
  EXPECT_TRUE(Contains(bad_int, "the value must be an integer")) << bad_int;
  const std::string bad_value = LabelSelector::Parse("x in (a,-b)").error().message;
  EXPECT_TRUE(Contains(bad_value, "values[0]: Invalid value: \"-b\"")) << bad_value;
}

TEST(LabelSelectorParse, SetBasedRequirements) {
  // TestSetSelectorParser valid cases.
  struct Case {
    const char* text;
    std::vector<Requirement> want;
  };
  const Case kCases[] = {
      {"", {}},
      {"\rx", {{"x", SelectorOp::kExists, {}}}},
      {"this-is-a-dns.domain.com/key-with-dash",
       {{"this-is-a-dns.domain.com/key-with-dash", SelectorOp::kExists, {}}}},
      {"this-is-another-dns.domain.com/key-with-dash in (so,what)",
       {{"this-is-another-dns.domain.com/key-with-dash", SelectorOp::kIn, {"so", "what"}}}},
      {"0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
       {{"0.1.2.domain/99", SelectorOp::kNotIn, {"10.10.100.1", "tick.tack.clock"}}}},
      {"foo  in\t (abc)", {{"foo", SelectorOp::kIn, {"abc"}}}},
      {"x notin\n (abc)", {{"x", SelectorOp::kNotIn, {"abc"}}}},
      {"x  notin\t\t\t(abc,def)", {{"x", SelectorOp::kNotIn, {"abc", "def"}}}},
      {"x in (abc,)", {{"x", SelectorOp::kIn, {"", "abc"}}}},
      {"x in ()", {{"x", SelectorOp::kIn, {""}}}},
      {"x notin (abc,def),bar,z in (),w",
       {{"bar", SelectorOp::kExists, {}},
        {"w", SelectorOp::kExists, {}},
        {"x", SelectorOp::kNotIn, {"abc", "def"}},
        {"z", SelectorOp::kIn, {""}}}},
      {"x,y in (a)", {{"x", SelectorOp::kExists, {}}, {"y", SelectorOp::kIn, {"a"}}}},
      {"x=a", {{"x", SelectorOp::kEquals, {"a"}}}},
      {"x>1", {{"x", SelectorOp::kGt, {"1"}}}},
      {"x<7", {{"x", SelectorOp::kLt, {"7"}}}},
      {"x=a,y!=b,z in (h,i,j)",
       {{"x", SelectorOp::kEquals, {"a"}},
        {"y", SelectorOp::kNotEquals, {"b"}},
        {"z", SelectorOp::kIn, {"h", "i", "j"}}}},
      {"x notin ( )", {{"x", SelectorOp::kNotIn, {""}}}},
      {"x notin (, a)", {{"x", SelectorOp::kNotIn, {"", "a"}}}},
      {"x in (a,,b)", {{"x", SelectorOp::kIn, {"", "a", "b"}}}},
      {"a ", {{"a", SelectorOp::kExists, {}}}},
      {"a in (x,y,notin, z,in)", {{"a", SelectorOp::kIn, {"in", "notin", "x", "y", "z"}}}},
      {"x in (b,a,b)", {{"x", SelectorOp::kIn, {"a", "b"}}}},  // a set: sorted, no duplicates
      {"x==a", {{"x", SelectorOp::kEquals, {"a"}}}},
      {"notin=in", {{"notin", SelectorOp::kEquals, {"in"}}}},
      {"!x", {{"x", SelectorOp::kDoesNotExist, {}}}},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(MustSelect(c.text).requirements(), c.want);
  }
}

TEST(LabelSelectorParse, CanonicalStringIsSortedAndRoundTrips) {
  const LabelSelector s = MustSelect("g, !f, e in (y,x), c!=d, a=b, h>3");
  EXPECT_EQ(s.ToString(), "a=b,c!=d,e in (x,y),!f,g,h>3");
  EXPECT_EQ(MustSelect(s.ToString()), s);
  // TestDeterministicParse.
  EXPECT_EQ(MustSelect("x=a,a=x").ToString(), MustSelect("a=x,x=a").ToString());
  EXPECT_EQ(MustSelect("x=a,a=x").ToString(), "a=x,x=a");
  // "==" is read as "=".
  EXPECT_EQ(MustSelect("x==a").ToString(), "x=a");
  EXPECT_EQ(MustSelect("z notin (),y in (b,a)").ToString(), "y in (a,b),z notin ()");
  // Duplicate keys keep their written order (stable sort).
  EXPECT_EQ(MustSelect("z!=a,z").ToString(), "z!=a,z");
  EXPECT_EQ(MustSelect("z,z!=a").ToString(), "z,z!=a");
}

TEST(RequirementToString, MatchesKubernetesForms) {
  // TestToString.
  EXPECT_EQ((Requirement{"x", SelectorOp::kIn, {"def", "abc"}}).ToString(), "x in (abc,def)");
  EXPECT_EQ((Requirement{"y", SelectorOp::kNotIn, {"jkl"}}).ToString(), "y notin (jkl)");
  EXPECT_EQ((Requirement{"z", SelectorOp::kExists, {}}).ToString(), "z");
  EXPECT_EQ((Requirement{"z", SelectorOp::kDoesNotExist, {}}).ToString(), "!z");
  EXPECT_EQ((Requirement{"z", SelectorOp::kNotIn, {""}}).ToString(), "z notin ()");
  EXPECT_EQ((Requirement{"y", SelectorOp::kNotEquals, {"jkl"}}).ToString(), "y!=jkl");
  EXPECT_EQ((Requirement{"x", SelectorOp::kGt, {"2"}}).ToString(), "x>2");
  EXPECT_EQ((Requirement{"y", SelectorOp::kLt, {"8"}}).ToString(), "y<8");
}

// ---------------------------------------------------------------------------
// Matching.

TEST(LabelSelectorMatch, KubernetesSelectorMatches) {
  // TestSelectorMatches.
  struct Case {
    const char* selector;
    Labels labels;
    bool match;
  };
  const Case kCases[] = {
      {"", {{"x", "y"}}, true},
      {"x=y", {{"x", "y"}}, true},
      {"x=y,z=w", {{"x", "y"}, {"z", "w"}}, true},
      {"x!=y,z!=w", {{"x", "z"}, {"z", "a"}}, true},
      {"notin=in", {{"notin", "in"}}, true},
      {"x", {{"x", "z"}}, true},
      {"!x", {{"y", "z"}}, true},
      {"x>1", {{"x", "2"}}, true},
      {"x<1", {{"x", "0"}}, true},
      {"x=z", {}, false},
      {"x=y", {{"x", "z"}}, false},
      {"x=y,z=w", {{"x", "w"}, {"z", "w"}}, false},
      {"x!=y,z!=w", {{"x", "z"}, {"z", "w"}}, false},
      {"x", {{"y", "z"}}, false},
      {"!x", {{"x", "z"}}, false},
      {"x>1", {{"x", "0"}}, false},
      {"x<1", {{"x", "2"}}, false},
      {"foo=bar,baz=blah", {{"foo", "bar"}, {"baz", "blah"}}, true},
      {"foo=bar,foobar=bar,baz=blah", {{"foo", "bar"}, {"baz", "blah"}}, false},
      // NotIn and != match an absent key; In and = do not.
      {"x notin (a)", {}, true},
      {"x!=a", {{"y", "a"}}, true},
      {"x in (a)", {}, false},
      {"x notin (a,b)", {{"x", "b"}}, false},
      {"x in (a,b)", {{"x", "b"}}, true},
      {"x in ()", {{"x", ""}}, true},
      {"x=", {{"x", ""}}, true},
      {"x=", {}, false},
      // Gt/Lt need integers on both sides.
      {"x>1", {{"x", "v2"}}, false},
      {"x>1", {}, false},
      {"x>-5", {}, false},  // never parses: "-5" is not a label value
      {"x<10", {{"x", "-3"}}, true},
      {"x>9", {{"x", "99999999999999999999"}}, false},  // overflows int64
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.selector);
    Result<LabelSelector> s = LabelSelector::Parse(c.selector);
    if (!s.ok()) {
      EXPECT_FALSE(c.match) << s.error().message;
      continue;
    }
    EXPECT_EQ(s->Matches(c.labels), c.match);
  }
}

TEST(RequirementMatch, DirectRequirements) {
  // TestRequirementSelectorMatching.
  const Labels xy = {{"x", "foo"}, {"y", "baz"}};
  EXPECT_TRUE((Requirement{"x", SelectorOp::kIn, {"foo"}}).Matches(xy));
  EXPECT_TRUE((Requirement{"y", SelectorOp::kNotIn, {"alpha"}}).Matches(xy));
  EXPECT_FALSE((Requirement{"y", SelectorOp::kIn, {"alpha"}}).Matches(xy));
  const Labels y_empty = {{"y", ""}};
  EXPECT_TRUE((Requirement{"x", SelectorOp::kNotIn, {""}}).Matches(y_empty));
  EXPECT_TRUE((Requirement{"y", SelectorOp::kExists, {}}).Matches(y_empty));
  EXPECT_TRUE((Requirement{"x", SelectorOp::kDoesNotExist, {}}).Matches(y_empty));
  EXPECT_FALSE((Requirement{"y", SelectorOp::kDoesNotExist, {}}).Matches(y_empty));
  EXPECT_FALSE((Requirement{"x", SelectorOp::kIn, {""}}).Matches({{"y", "baz"}}));
  EXPECT_TRUE((Requirement{"z", SelectorOp::kGt, {"1"}}).Matches({{"z", "2"}}));
  EXPECT_FALSE((Requirement{"z", SelectorOp::kGt, {"1"}}).Matches({{"z", "v2"}}));
  EXPECT_FALSE(
      (Requirement{"z", SelectorOp::kGt, {"1", "0"}}).Matches({{"z", "2"}}));  // needs one value
  EXPECT_FALSE((Requirement{"z", SelectorOp::kLt, {"x"}}).Matches({{"z", "2"}}));
  EXPECT_TRUE(
      (Requirement{"z", SelectorOp::kLt, {"+3"}}).Matches({{"z", "2"}}));  // ParseInt takes "+"
}

TEST(LabelSelectorMatch, EmptyAndNothing) {
  const LabelSelector everything;
  EXPECT_TRUE(everything.Empty());
  EXPECT_FALSE(everything.MatchesNothing());
  EXPECT_TRUE(everything.Matches({}));
  EXPECT_TRUE(everything.Matches({{"x", "y"}}));
  EXPECT_EQ(everything.ToString(), "");
  const LabelSelector nothing = LabelSelector::Nothing();
  EXPECT_FALSE(nothing.Empty());
  EXPECT_TRUE(nothing.MatchesNothing());
  EXPECT_FALSE(nothing.Matches({}));
  EXPECT_FALSE(nothing.Matches({{"x", "y"}}));
  EXPECT_EQ(nothing.ToString(), "");
  EXPECT_NE(nothing, everything);
  EXPECT_TRUE(MustSelect("  ").Empty());
}

// ---------------------------------------------------------------------------
// metav1.LabelSelector.

TEST(LabelSelectorFromParts, BuildsSortedDedupedRequirements) {
  Result<LabelSelector> s = LabelSelector::FromParts(
      {{"app", "web"}},
      {{"tier", SelectorOp::kIn, {"b", "a", "a"}}, {"canary", SelectorOp::kDoesNotExist, {}}});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->ToString(), "app=web,!canary,tier in (a,b)");
  EXPECT_TRUE(s->Matches({{"app", "web"}, {"tier", "a"}}));
  EXPECT_FALSE(s->Matches({{"app", "web"}, {"tier", "a"}, {"canary", "1"}}));
  EXPECT_FALSE(s->Matches({{"app", "web"}, {"tier", "c"}}));
  EXPECT_FALSE(s->Matches({{"app", "db"}, {"tier", "a"}}));
  Result<LabelSelector> empty = LabelSelector::FromParts({}, {});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->Empty());
  EXPECT_TRUE(empty->Matches({{"anything", "goes"}}));
}

TEST(LabelSelectorFromParts, ValidatesLikeTheApiServer) {
  struct Case {
    Labels match_labels;
    std::vector<Requirement> expressions;
    std::vector<std::string> want;  // all must appear in the message
  };
  const Case kCases[] = {
      {{}, {{"x", SelectorOp::kIn, {}}}, {"matchExpressions[0].values: Required value"}},
      {{}, {{"x", SelectorOp::kNotIn, {}}}, {"matchExpressions[0].values: Required value"}},
      {{}, {{"x", SelectorOp::kExists, {"a"}}}, {"matchExpressions[0].values: Forbidden"}},
      {{}, {{"x", SelectorOp::kDoesNotExist, {"a"}}}, {"matchExpressions[0].values: Forbidden"}},
      {{},
       {{"x", SelectorOp::kGt, {"1"}}},
       {"matchExpressions[0].operator: Invalid value: \"Gt\""}},
      {{}, {{"x", SelectorOp::kLt, {"1"}}}, {"not a valid selector operator"}},
      {{},
       {{"x", SelectorOp::kEquals, {"1"}}},
       {"matchExpressions[0].operator: Invalid value: \"=\""}},
      {{},
       {{"x", SelectorOp::kExists, {}}, {"a/b/c", SelectorOp::kExists, {}}},
       {"matchExpressions[1].key: Invalid value: \"a/b/c\""}},
      {{},
       {{"x", SelectorOp::kIn, {"ok", "-bad"}}},
       {"matchExpressions[0].values[1]: Invalid value: \"-bad\""}},
      {{{"app", "-bad"}}, {}, {"matchLabels: Invalid value: \"-bad\""}},
      {{{"bad key", "v"}}, {}, {"matchLabels: Invalid value: \"bad key\""}},
      // Every problem is reported.
      {{},
       {{"x", SelectorOp::kIn, {}}, {"", SelectorOp::kExists, {"v"}}},
       {"matchExpressions[0].values: Required value", "matchExpressions[1].values: Forbidden",
        "matchExpressions[1].key"}},
  };
  for (const Case& c : kCases) {
    Result<LabelSelector> s = LabelSelector::FromParts(c.match_labels, c.expressions);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ErrorCode::kInvalid);
    for (const std::string& part : c.want)
      EXPECT_TRUE(Contains(s.error().message, part)) << s.error().message;
  }
}

// ---------------------------------------------------------------------------
// Keys, values, ops.

TEST(LabelValidation, Keys) {
  const std::string name63(63, 'a');
  const std::string prefix253 = std::string(61, 'a') + "." + std::string(61, 'b') + "." +
                                std::string(61, 'c') + "." + std::string(67, 'd');
  ASSERT_EQ(prefix253.size(), 253u);
  for (const std::string& key :
       {std::string("app"), std::string("example.com/app"), std::string("a.b-c_d"),
        std::string("1234"), std::string("1foo"), std::string("A"), name63, prefix253 + "/x",
        std::string("kubernetes.io/hostname"), std::string("0.1.2.domain/99")}) {
    EXPECT_TRUE(ValidateLabelKey(key).ok()) << key;
  }
  for (const std::string& key :
       {std::string(""), std::string("/app"), std::string("example.com/"), std::string("a/b/c"),
        std::string("-app"), std::string("app-"), std::string("app_"), name63 + "a",
        std::string("Example.com/app"), std::string("exa_mple.com/app"),
        std::string("example..com/app"), std::string("-example.com/app"), prefix253 + "e/x",
        std::string("a b"), std::string("app!"), std::string(254, 'a')}) {
    Status s = ValidateLabelKey(key);
    EXPECT_FALSE(s.ok()) << key;
    if (!s.ok()) {
      EXPECT_TRUE(Contains(s.error().message, "invalid label key")) << s.error().message;
    }
  }
  EXPECT_TRUE(Contains(ValidateLabelKey(name63 + "a").error().message,
                       "name part must be no more than 63"));
  EXPECT_TRUE(Contains(ValidateLabelKey("/app").error().message, "prefix part must be non-empty"));
  EXPECT_TRUE(Contains(ValidateLabelKey("Example.com/app").error().message,
                       "prefix part a lowercase RFC 1123"));
  EXPECT_TRUE(Contains(ValidateLabelKey("a/b/c").error().message, "a qualified name"));
  EXPECT_TRUE(Contains(ValidateLabelKey("-app").error().message, "regex used for validation"));
}

TEST(LabelValidation, Values) {
  for (const std::string& value :
       {std::string(""), std::string("web"), std::string("my_value"), std::string("12345"),
        std::string("a.b-c_d"), std::string(63, 'v')}) {
    EXPECT_TRUE(ValidateLabelValue(value).ok()) << value;
  }
  for (const std::string& value :
       {std::string("-a"), std::string("a-"), std::string(".a"), std::string(64, 'v'),
        std::string("a b"), std::string("a/b"), std::string("a=b")}) {
    Status s = ValidateLabelValue(value);
    EXPECT_FALSE(s.ok()) << value;
    if (!s.ok()) {
      EXPECT_TRUE(Contains(s.error().message, "invalid label value")) << s.error().message;
    }
  }
  EXPECT_TRUE(
      Contains(ValidateLabelValue(std::string(64, 'v')).error().message, "no more than 63"));
  EXPECT_TRUE(ValidateDns1123Subdomain("node-1.example.com").ok());
  EXPECT_FALSE(ValidateDns1123Subdomain("Node-1").ok());
  EXPECT_FALSE(ValidateDns1123Subdomain("").ok());
  EXPECT_TRUE(ValidateQualifiedName("nvidia.com/gpu").ok());
  EXPECT_FALSE(ValidateQualifiedName("nvidia.com/").ok());
}

TEST(SelectorOps, ParseAndName) {
  for (SelectorOp op : {SelectorOp::kIn, SelectorOp::kNotIn, SelectorOp::kExists,
                        SelectorOp::kDoesNotExist, SelectorOp::kGt, SelectorOp::kLt}) {
    Result<SelectorOp> parsed = ParseSelectorOp(SelectorOpName(op));
    ASSERT_TRUE(parsed.ok()) << SelectorOpName(op);
    EXPECT_EQ(*parsed, op);
  }
  EXPECT_EQ(SelectorOpName(SelectorOp::kNotIn), "NotIn");
  for (const char* bad : {"in", "IN", "Equals", "=", "", "Gte"}) {
    Result<SelectorOp> parsed = ParseSelectorOp(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_TRUE(Contains(parsed.error().message, "supported values")) << parsed.error().message;
  }
}

// ---------------------------------------------------------------------------
// Node selectors.

NodeSelectorTerm Expr(std::vector<Requirement> expressions, std::vector<Requirement> fields = {}) {
  return NodeSelectorTerm{std::move(expressions), std::move(fields)};
}

TEST(NodeSelectorTerm, GtAndLtCompareIntegers) {
  const NodeSelectorTerm gt = Expr({{"cpu-count", SelectorOp::kGt, {"4"}}});
  EXPECT_TRUE(gt.Validate().ok());
  EXPECT_TRUE(gt.Matches({{"cpu-count", "8"}}, "n"));
  EXPECT_FALSE(gt.Matches({{"cpu-count", "4"}}, "n"));
  EXPECT_FALSE(gt.Matches({{"cpu-count", "2"}}, "n"));
  EXPECT_FALSE(gt.Matches({{"cpu-count", "eight"}}, "n"));
  EXPECT_FALSE(gt.Matches({}, "n"));
  const NodeSelectorTerm lt = Expr({{"gen", SelectorOp::kLt, {"10"}}});
  EXPECT_TRUE(lt.Matches({{"gen", "9"}}, "n"));
  EXPECT_TRUE(lt.Matches({{"gen", "-20"}}, "n"));
  EXPECT_FALSE(lt.Matches({{"gen", "10"}}, "n"));
  EXPECT_FALSE(lt.Matches({{"gen", "010x"}}, "n"));
}

TEST(NodeSelectorTerm, InvalidTermsMatchNothing) {
  const Labels labels = {{"zone", "a"}, {"cpu-count", "8"}};
  // Each of these would otherwise match `labels` / "node-1".
  const NodeSelectorTerm kInvalid[] = {
      Expr({{"cpu-count", SelectorOp::kGt, {"four"}}}),
      Expr({{"cpu-count", SelectorOp::kGt, {"1", "2"}}}),
      Expr({{"cpu-count", SelectorOp::kGt, {"-1"}}}),  // not a label value
      Expr({{"zone", SelectorOp::kIn, {}}}),
      Expr({{"zone", SelectorOp::kExists, {"a"}}}),
      Expr({{"zone", SelectorOp::kEquals, {"a"}}}),
      Expr({{"zone", SelectorOp::kNotEquals, {"b"}}}),
      Expr({{"bad key", SelectorOp::kDoesNotExist, {}}}),
      Expr({{"zone", SelectorOp::kNotIn, {"-b"}}}),
      Expr({}, {{"metadata.name", SelectorOp::kExists, {}}}),
      Expr({}, {{"metadata.name", SelectorOp::kIn, {"node-1", "node-2"}}}),
      Expr({{"zone", SelectorOp::kIn, {"a"}}}, {{"metadata.name", SelectorOp::kIn, {}}}),
  };
  for (const NodeSelectorTerm& term : kInvalid) {
    EXPECT_FALSE(term.Matches(labels, "node-1"));
    EXPECT_FALSE(term.Validate().ok());
  }
  // The same shapes, valid, do match.
  EXPECT_TRUE(Expr({{"cpu-count", SelectorOp::kGt, {"4"}}}).Matches(labels, "node-1"));
  EXPECT_TRUE(Expr({{"zone", SelectorOp::kIn, {"a"}}}).Matches(labels, "node-1"));
  EXPECT_TRUE(Expr({{"zone", SelectorOp::kExists, {}}}).Matches(labels, "node-1"));
  EXPECT_TRUE(Expr({{"zone", SelectorOp::kNotIn, {"b"}}}).Matches(labels, "node-1"));
  EXPECT_TRUE(Expr({{"other", SelectorOp::kDoesNotExist, {}}}).Matches(labels, "node-1"));
}

TEST(NodeSelectorTerm, NotInAndDoesNotExistMatchAbsentKeys) {
  EXPECT_TRUE(Expr({{"gpu", SelectorOp::kNotIn, {"a100"}}}).Matches({}, "n"));
  EXPECT_TRUE(Expr({{"gpu", SelectorOp::kDoesNotExist, {}}}).Matches({}, "n"));
  EXPECT_FALSE(Expr({{"gpu", SelectorOp::kIn, {"a100"}}}).Matches({}, "n"));
  EXPECT_FALSE(Expr({{"gpu", SelectorOp::kExists, {}}}).Matches({}, "n"));
}

TEST(NodeSelectorTerm, MatchFieldsOnMetadataName) {
  const NodeSelectorTerm in = Expr({}, {{"metadata.name", SelectorOp::kIn, {"node-1"}}});
  EXPECT_TRUE(in.Validate().ok());
  EXPECT_TRUE(in.Matches({}, "node-1"));
  EXPECT_FALSE(in.Matches({}, "node-2"));
  const NodeSelectorTerm not_in = Expr({}, {{"metadata.name", SelectorOp::kNotIn, {"node-1"}}});
  EXPECT_FALSE(not_in.Matches({}, "node-1"));
  EXPECT_TRUE(not_in.Matches({}, "node-2"));
  // kube-scheduler skips matchFields for a node without a name.
  EXPECT_TRUE(in.Matches({}, ""));
  // Other fields read as "" when matching; validation rejects them.
  const NodeSelectorTerm uid_in = Expr({}, {{"metadata.uid", SelectorOp::kIn, {"x"}}});
  EXPECT_FALSE(uid_in.Matches({}, "node-1"));
  EXPECT_TRUE(Expr({}, {{"metadata.uid", SelectorOp::kNotIn, {"x"}}}).Matches({}, "node-1"));
  EXPECT_TRUE(Contains(uid_in.Validate().error().message,
                       "matchFields[0].key: Invalid value: \"metadata.uid\""));
  // Expressions and fields are ANDed.
  const NodeSelectorTerm both =
      Expr({{"zone", SelectorOp::kIn, {"a"}}}, {{"metadata.name", SelectorOp::kIn, {"node-1"}}});
  EXPECT_TRUE(both.Matches({{"zone", "a"}}, "node-1"));
  EXPECT_FALSE(both.Matches({{"zone", "b"}}, "node-1"));
  EXPECT_FALSE(both.Matches({{"zone", "a"}}, "node-2"));
}

TEST(NodeSelectorTerm, EmptyTermMatchesNothingButIsValid) {
  const NodeSelectorTerm empty;
  EXPECT_FALSE(empty.Matches({}, "node-1"));
  EXPECT_FALSE(empty.Matches({{"zone", "a"}}, ""));
  EXPECT_TRUE(empty.Validate().ok());
}

TEST(NodeSelectorTerm, ValidateNamesEveryPath) {
  struct Case {
    NodeSelectorTerm term;
    std::vector<std::string> want;
  };
  const Case kCases[] = {
      {Expr({{"a", SelectorOp::kExists, {}}, {"b", SelectorOp::kIn, {}}}),
       {"matchExpressions[1].values: Required value: must be specified when `operator` is 'In' or "
        "'NotIn'"}},
      {Expr({{"a", SelectorOp::kDoesNotExist, {"x"}}}),
       {"matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' "
        "or "
        "'DoesNotExist'"}},
      {Expr({{"a", SelectorOp::kGt, {"1", "2"}}}),
       {"matchExpressions[0].values: Required value: must be specified single value when "
        "`operator` is 'Lt' or "
        "'Gt'"}},
      {Expr({{"a", SelectorOp::kLt, {"x"}}}),
       {"matchExpressions[0].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value "
        "must be an "
        "integer"}},
      {Expr({{"a", SelectorOp::kEquals, {"x"}}}),
       {"matchExpressions[0].operator: Invalid value: \"=\""}},
      {Expr({{"-a", SelectorOp::kExists, {}}}), {"matchExpressions[0].key: Invalid value: \"-a\""}},
      {Expr({{"a", SelectorOp::kIn, {"x", "y z"}}}),
       {"matchExpressions[0].values[1]: Invalid value: \"y z\""}},
      {Expr({}, {{"metadata.name", SelectorOp::kIn, {"a", "b"}}}),
       {"matchFields[0].values: Required value: must be only one value"}},
      {Expr({}, {{"metadata.name", SelectorOp::kGt, {"1"}}}),
       {"matchFields[0].operator: Invalid value: \"Gt\""}},
      {Expr({}, {{"metadata.name", SelectorOp::kIn, {"Node_1"}}}),
       {"matchFields[0].values[0]: Invalid value: \"Node_1\""}},
      // All problems at once.
      {Expr({{"a", SelectorOp::kIn, {}}}, {{"spec.x", SelectorOp::kExists, {}}}),
       {"matchExpressions[0].values", "matchFields[0].operator", "matchFields[0].key"}},
  };
  for (const Case& c : kCases) {
    Status s = c.term.Validate();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ErrorCode::kInvalid);
    for (const std::string& part : c.want)
      EXPECT_TRUE(Contains(s.error().message, part)) << s.error().message;
  }
}

TEST(NodeSelector, TermsAreOred) {
  const NodeSelector selector{
      {Expr({{"zone", SelectorOp::kIn, {"a"}}}), Expr({{"zone", SelectorOp::kIn, {"b"}}})}};
  EXPECT_TRUE(selector.Matches({{"zone", "a"}}, "n"));
  EXPECT_TRUE(selector.Matches({{"zone", "b"}}, "n"));
  EXPECT_FALSE(selector.Matches({{"zone", "c"}}, "n"));
  EXPECT_FALSE(selector.Matches({}, "n"));
  EXPECT_FALSE(NodeSelector{}.Matches({{"zone", "a"}}, "n"));
  // Empty and invalid terms are skipped, not fatal.
  const NodeSelector mixed{{NodeSelectorTerm{}, Expr({{"zone", SelectorOp::kIn, {}}}),
                            Expr({}, {{"metadata.name", SelectorOp::kIn, {"node-7"}}})}};
  EXPECT_TRUE(mixed.Matches({}, "node-7"));
  EXPECT_FALSE(mixed.Matches({{"zone", "a"}}, "node-8"));
}

// ---------------------------------------------------------------------------
// Field selectors.

std::function<std::optional<std::string>(std::string_view)> Fields(
    std::map<std::string, std::string> fields) {
  return [fields = std::move(fields)](std::string_view field) -> std::optional<std::string> {
    auto it = fields.find(std::string(field));
    if (it == fields.end()) return std::nullopt;
    return it->second;
  };
}

// Found by tests/fuzz/selector_fuzz.cc: "p==x" sorts before "p=a" as text,
// so printing the parsed terms and parsing that again reordered them.
TEST(FieldSelector, ToStringParsesBackToTheSameSelector) {
  auto parsed = FieldSelector::Parse("a.kubernetes.io/name==wea,p=ea,p==uberb");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->ToString(), "a.kubernetes.io/name=wea,p=ea,p=uberb");
  auto again = FieldSelector::Parse(parsed->ToString());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *parsed);
}

TEST(FieldSelector, ParseSortAndToString) {
  Result<FieldSelector> s =
      FieldSelector::Parse("status.phase==Running,spec.nodeName!=,metadata.name=x");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const std::vector<FieldSelector::Term> want = {{"metadata.name", false, "x"},
                                                 {"spec.nodeName", true, ""},
                                                 {"status.phase", false, "Running"}};
  EXPECT_EQ(s->terms(), want);
  EXPECT_EQ(s->ToString(), "metadata.name=x,spec.nodeName!=,status.phase=Running");
  Result<FieldSelector> again = FieldSelector::Parse(s->ToString());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *s);
}

TEST(FieldSelector, Matches) {
  const FieldSelector s = FieldSelector::Parse("metadata.name=x,spec.nodeName!=").value();
  EXPECT_TRUE(s.Matches(Fields({{"metadata.name", "x"}, {"spec.nodeName", "n1"}})));
  EXPECT_FALSE(s.Matches(Fields({{"metadata.name", "x"}, {"spec.nodeName", ""}})));
  EXPECT_FALSE(s.Matches(Fields({{"metadata.name", "y"}, {"spec.nodeName", "n1"}})));
  // An unknown field reads as "".
  EXPECT_FALSE(s.Matches(Fields({{"metadata.name", "x"}})));
  EXPECT_TRUE(FieldSelector::Parse("foo=").value().Matches(Fields({})));
  EXPECT_FALSE(FieldSelector::Parse("foo=x").value().Matches(Fields({})));
  EXPECT_TRUE(FieldSelector::Parse("foo!=x").value().Matches(Fields({})));
  const FieldSelector everything;
  EXPECT_TRUE(everything.Empty());
  EXPECT_TRUE(everything.Matches(Fields({})));
  EXPECT_EQ(everything.ToString(), "");
}

TEST(FieldSelector, EscapesAndEmptyTerms) {
  Result<FieldSelector> s = FieldSelector::Parse(R"(a=b\,c\=d\\e)");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->terms().size(), 1u);
  EXPECT_EQ(s->terms()[0].value, R"(b,c=d\e)");
  EXPECT_EQ(s->ToString(), R"(a=b\,c\=d\\e)");
  Result<FieldSelector> two = FieldSelector::Parse(R"(b=z,a=x\,y)");
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->terms().size(), 2u);
  EXPECT_EQ(two->terms()[0].value, "x,y");
  EXPECT_TRUE(FieldSelector::Parse("").value().Empty());
  EXPECT_TRUE(FieldSelector::Parse(",,").value().Empty());
  EXPECT_EQ(FieldSelector::Parse("b=1,,a=2").value().ToString(), "a=2,b=1");
  // Nothing is trimmed.
  const FieldSelector spaced = FieldSelector::Parse("a = b").value();
  EXPECT_EQ(spaced.terms()[0].field, "a ");
  EXPECT_EQ(spaced.terms()[0].value, " b");
}

TEST(FieldSelector, Errors) {
  struct Case {
    const char* text;
    const char* why;
  };
  const Case kCases[] = {
      {"a", "can't understand \"a\""},
      {"metadata.name=x,b", "can't understand \"b\""},
      {"a=b=c", "unescaped character in value: ="},
      {R"(a=b\x)", R"(invalid escape sequence: \x)"},
      {R"(a=b\)", "invalid escape sequence"},
  };
  for (const Case& c : kCases) {
    Result<FieldSelector> s = FieldSelector::Parse(c.text);
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.error().code, ErrorCode::kInvalid);
    EXPECT_TRUE(Contains(s.error().message, c.why)) << s.error().message;
  }
}

}  // namespace
}  // namespace copse

// One table of CEL expressions and what evaluating each against the test
// device gives: every operator, macro and function of the DRA environment,
// the error absorption of && and ||, missing keys, overflow and type errors.
// Expected values follow the CEL language definition (cel-spec
// doc/langdef.md), cel-go's behaviour, and the Kubernetes quantity and
// semver libraries' documentation (k8s.io/apiserver/pkg/cel/library).
#include <gtest/gtest.h>

#include <string>

#include "cel/cel.h"
#include "tests/unit/cel/test_device.h"

namespace copse::cel {
namespace expressions_test {

struct Case {
  const char* expression;
  const char* want;  // "true", "false", "runtime error: ...", "compile error: ..."
};

const char kT[] = "true";
const char kF[] = "false";

const Case kCases[] = {
    // Literals.
    {"1 + 2 == 3", kT},
    {"0x10 == 16 && 0xFFu == 255u", kT},
    {"7u / 2u == 3u", kT},
    {"1.5 + 2.25 == 3.75 && 1e3 == 1000.0 && .5 == 0.5 && 2.5e-1 == 0.25", kT},
    {"-9223372036854775808 < 0", kT},
    {"\"a\" + 'b' == \"ab\"", kT},
    {"b\"ab\" + b\"c\" == b\"abc\"", kT},
    {R"("\x41\101\u0041\U00000041\X41" == "AAAAA")", kT},
    {R"("\a\b\f\n\r\t\v\\\?\"\'\`" == '\x07\x08\x0c\x0a\x0d\x09\x0b\x5c?"\'`')", kT},
    {R"(r"\d" == "\\d" && R'\n' == '\\n')", kT},
    {"'''a'b\nc''' == \"a'b\\nc\"", kT},
    {R"("é" == "\u00e9" && size("héllo") == 5 && size(b"h\303\251") == 3)", kT},
    {R"(b"\377" != bytes("\377"))", kT},
    {"null == null", kT},
    {"true != false", kT},
    {"// a comment\n true", kT},
    {"9223372036854775808 == 0",
     "compile error: compilation failed: ERROR: <input>:1:1: invalid int literal\n"
     " | 9223372036854775808 == 0\n | ^"},
    {"18446744073709551616u == 0u",
     "compile error: compilation failed: ERROR: <input>:1:1: invalid uint literal\n"
     " | 18446744073709551616u == 0u\n | ^"},
    // Arithmetic and its errors.
    {"-7 / 2 == -3 && -7 % 2 == -1 && 7 % -2 == 1", kT},
    {"2 * 3 - 4 == 2 && 10 - 2 * 3 == 4 && (10 - 2) * 3 == 24", kT},
    {"1.0 / 0.0 > 1e308 && -1.0 / 0.0 < -1e308", kT},
    {"0.0 / 0.0 == 0.0 / 0.0", kF},
    {"9223372036854775807 + 1 > 0", "runtime error: integer overflow"},
    {"-9223372036854775808 - 1 < 0", "runtime error: integer overflow"},
    {"9223372036854775807 * 2 > 0", "runtime error: integer overflow"},
    {"-9223372036854775808 / -1 > 0", "runtime error: integer overflow"},
    {"-9223372036854775808 % -1 == 0", "runtime error: integer overflow"},
    {"-(-9223372036854775808) > 0", "runtime error: integer overflow"},
    {"18446744073709551615u + 1u > 0u", "runtime error: unsigned integer overflow"},
    {"0u - 1u > 0u", "runtime error: unsigned integer overflow"},
    {"1 / 0 == 0", "runtime error: division by zero"},
    {"1 % 0 == 0", "runtime error: modulus by zero"},
    {"1u / 0u == 0u", "runtime error: division by zero"},
    {"1 + 1u == 2",
     "compile error: compilation failed: ERROR: <input>:1:3: found no matching overload for "
     "'_+_' applied to '(int, uint)'\n | 1 + 1u == 2\n | ..^"},
    {"1.5 % 1.0 == 0.5",
     "compile error: compilation failed: ERROR: <input>:1:5: found no matching overload for "
     "'_%_' applied to '(double, double)'\n | 1.5 % 1.0 == 0.5\n | ....^"},
    {"-\"a\" == \"a\"",
     "compile error: compilation failed: ERROR: <input>:1:1: found no matching overload for "
     "'-_' applied to '(string)'\n | -\"a\" == \"a\"\n | ^"},
    // Equality and ordering: no implicit numeric conversion in ==, cross-type
    // ordering, heterogeneous equality at runtime.
    {"1 == 1.0",
     "compile error: compilation failed: ERROR: <input>:1:3: found no matching overload for "
     "'_==_' applied to '(int, double)'\n | 1 == 1.0\n | ..^"},
    {"dyn(1) == 1.0 && dyn(1u) == 1 && dyn(2.0) == 2u", kT},
    {"dyn(1) == \"1\"", kF},
    {"dyn(1) != \"1\"", kT},
    {"1 < 1.5 && 2u > 1 && 1.5 >= 1u && -1 < 0u && 1 <= 1.0", kT},
    {"\"abc\" < \"abd\" && \"b\" > \"abc\" && b\"a\" < b\"b\" && false < true", kT},
    {"dyn(\"a\") < 1", "runtime error: no such overload"},
    {"[1, 2] == [1, 2] && [1, 2] != [2, 1] && {\"a\": 1} == {\"a\": 1}", kT},
    {"dyn([1, 2]) == [dyn(1), dyn(2.0)] && dyn({1: \"a\"}) == dyn({1u: \"a\"})", kT},
    {"[1, \"a\"] == [1]",
     "compile error: compilation failed: ERROR: <input>:1:5: expected type 'int' but found "
     "'string'\n | [1, \"a\"] == [1]\n | ....^"},
    {"{\"a\": 1, \"a\": 2} == {\"a\": 1}", "runtime error: Failed with repeated key: a"},
    {"{1: \"x\", 2u: \"y\"} == {}",
     "compile error: compilation failed: ERROR: <input>:1:10: expected type 'int' but found "
     "'uint'\n | {1: \"x\", 2u: \"y\"} == {}\n | .........^"},
    // Membership, index, field selection.
    {"2 in [1, 2, 3] && !(4 in [1, 2, 3])", kT},
    {"\"a\" in {\"a\": 1} && !(\"z\" in {\"a\": 1})", kT},
    {"[1, 2, 3][1] == 2 && {\"a\": {\"b\": 1}}.a.b == 1 && {\"a\": 1}[\"a\"] == 1", kT},
    {"dyn({1: \"one\"})[1.0] == \"one\" && dyn({1: \"one\"})[1u] == \"one\"", kT},
    {"[1][5] == 1", "runtime error: index out of bounds: 5"},
    {"[1][-1] == 1", "runtime error: index out of bounds: -1"},
    {"{\"a\": 1}[\"b\"] == 1", "runtime error: no such key: b"},
    {"{\"a\": 1}.b == 1", "runtime error: no such key: b"},
    {"1.a == 1",
     "compile error: compilation failed: ERROR: <input>:1:2: type 'int' does not support field "
     "selection\n | 1.a == 1\n | .^"},
    // Ternary.
    {"(true ? 1 : 2) == 1 && (false ? 1 : 2) == 2", kT},
    {"(true ? 1 : 1 / 0) == 1", kT},
    {"(1 / 0 > 0 ? 1 : 2) == 1", "runtime error: division by zero"},
    {"(1 > 0 ? \"a\" : 1) == \"a\"",
     "compile error: compilation failed: ERROR: <input>:1:8: found no matching overload for "
     "'_?_:_' applied to '(bool, string, int)'\n | (1 > 0 ? \"a\" : 1) == \"a\"\n | .......^"},
    // Logic: commutative error absorption.
    {"false && (1 / 0 == 1)", kF},
    {"(1 / 0 == 1) && false", kF},
    {"true || (1 / 0 == 1)", kT},
    {"(1 / 0 == 1) || true", kT},
    {"true && (1 / 0 == 1)", "runtime error: division by zero"},
    {"false || (1 / 0 == 1)", "runtime error: division by zero"},
    {"(1 / 0 == 1) && ({\"a\": 1}.b == 1)", "runtime error: division by zero"},
    {"true && true && (1 / 0 == 1) && false", kF},
    {"false || false || (1 / 0 == 1) || true", kT},
    {"dyn(1) && false", kF},
    {"dyn(1) && true", "runtime error: no such overload"},
    {"!false && !!true", kT},
    {"1 && true",
     "compile error: compilation failed: ERROR: <input>:1:1: expected type 'bool' but found "
     "'int'\n | 1 && true\n | ^"},
    {"!1",
     "compile error: compilation failed: ERROR: <input>:1:1: found no matching overload for "
     "'!_' applied to '(int)'\n | !1\n | ^"},
    // has() and the macros.
    {"has({\"a\": 1}.a) && !has({\"a\": 1}.b)", kT},
    {"has(1)",
     "compile error: compilation failed: ERROR: <input>:1:5: invalid argument to has() macro\n"
     " | has(1)\n | ....^"},
    {"[1, 2, 3].all(x, x > 0) && [1, 2, 3].exists(x, x > 2)", kT},
    {"[1, 2, 3].exists_one(x, x > 1)", kF},
    {"[1, 2, 3].exists_one(x, x > 2)", kT},
    {"[1, 2, 3].map(x, x * 2) == [2, 4, 6]", kT},
    {"[1, 2, 3].map(x, x > 1, x * 10) == [20, 30]", kT},
    {"[1, 2, 3].filter(x, x % 2 == 1) == [1, 3]", kT},
    {"{\"a\": 1, \"b\": 2}.all(k, k in [\"a\", \"b\"]) && {\"a\": 1}.map(k, k) == [\"a\"]", kT},
    {"[].all(x, x > 0) && ![].exists(x, x == 1)", kT},
    {"[0, 1].all(x, 1 / x > 0)", "runtime error: division by zero"},
    {"[0, -1].all(x, 1 / x > 0)", kF},
    {"[0, 1].exists(x, 1 / x > 0)", kT},
    {"[0, -1].exists(x, 1 / x > 0)", "runtime error: division by zero"},
    {"[0, 1].exists_one(x, 1 / x > 0)", "runtime error: division by zero"},
    {"[0, 1].map(x, 1 / x) == [1]", "runtime error: division by zero"},
    {"[1, 2].all(x, [3, 4].exists(y, x + y == 5))", kT},
    {"[1, 2].all(x, x)",
     "compile error: compilation failed: ERROR: <input>:1:15: expected type 'bool' but found "
     "'int'\n | [1, 2].all(x, x)\n | ..............^"},
    {"1.all(x, true)",
     "compile error: compilation failed: ERROR: <input>:1:1: expression of type 'int' cannot "
     "be range of a comprehension (must be list, map, or dynamic)\n | 1.all(x, true)\n | ^"},
    {"[1].all(1, true)",
     "compile error: compilation failed: ERROR: <input>:1:9: argument must be a simple name\n"
     " | [1].all(1, true)\n | ........^"},
    {"[1].map(x.y, x)",
     "compile error: compilation failed: ERROR: <input>:1:10: argument is not an identifier\n"
     " | [1].map(x.y, x)\n | .........^"},
    {"cel.bind(x, 2, x * x == 4) && cel.bind(a, [1, 2], a.all(y, y in a))", kT},
    {"cel.bind(x, 1 / 0, true)", kT},
    {"cel.bind(x, 1 / 0, x == 1)", "runtime error: division by zero"},
    {"cel.bind(1, 2, true)",
     "compile error: compilation failed: ERROR: <input>:1:10: cel.bind() variable names must "
     "be simple identifiers\n | cel.bind(1, 2, true)\n | .........^"},
    // Strings: standard library.
    {"\"hello\".contains(\"ell\") && \"hello\".startsWith(\"he\") && \"hello\".endsWith(\"lo\")",
     kT},
    {"\"hello\".matches(\"^h.*o$\") && matches(\"abc\", \"b\") && !\"abc\".matches(\"^b\")", kT},
    {"\"héllo\".matches(\"^h.llo$\") && \"x1\".matches(\"\\\\d\")", kT},
    {"\"abc\".matches(\"(\")",
     "compile error: compilation failed: ERROR: <input>:1:15: invalid matches argument\n"
     " | \"abc\".matches(\"(\")\n | ..............^"},
    {"\"abc\".size() == 3 && size([1, 2]) == 2 && size({\"a\": 1}) == 1 && [1].size() == 1", kT},
    // Strings: cel-go's extension and Kubernetes' regex library.
    {"\"HeLLo\".lowerAscii() == \"hello\" && \"HeLLo é\".upperAscii() == \"HELLO é\"", kT},
    {"\"héllo\".charAt(1) == \"é\" && \"hello\".charAt(5) == \"\"", kT},
    {"\"hello\".charAt(6) == \"\"", "runtime error: index out of range: 6"},
    {"\"hello\".indexOf(\"l\") == 2 && \"hello\".lastIndexOf(\"l\") == 3 && "
     "\"hello\".indexOf(\"l\", 3) == 3 && \"hello\".indexOf(\"z\") == -1 && "
     "\"hello\".lastIndexOf(\"l\", 2) == 2 && \"héllo\".indexOf(\"l\") == 2",
     kT},
    {"\"a,b,c\".split(\",\") == [\"a\", \"b\", \"c\"] && \"a,b,c\".split(\",\", 2) == "
     "[\"a\", \"b,c\"] && \"ab\".split(\"\") == [\"a\", \"b\"]",
     kT},
    {"\"hello\".substring(1, 3) == \"el\" && \"hello\".substring(3) == \"lo\"", kT},
    {"\"hello\".substring(3, 1) == \"\"",
     "runtime error: invalid substring range. start: 3, end: 1"},
    {"\"  hi \\t\\n\".trim() == \"hi\"", kT},
    {"[\"a\", \"b\"].join(\"-\") == \"a-b\" && [\"a\", \"b\"].join() == \"ab\"", kT},
    {"\"aaa\".replace(\"a\", \"b\") == \"bbb\" && \"aaa\".replace(\"a\", \"b\", 2) == \"bba\"", kT},
    {R"(strings.quote("a\"b\n") == "\"a\\\"b\\n\"")", kT},
    {"\"abc123\".find(\"[0-9]+\") == \"123\" && \"abc\".find(\"[0-9]+\") == \"\"", kT},
    {"\"a1b22c333\".findAll(\"[0-9]+\") == [\"1\", \"22\", \"333\"] && "
     "\"a1b22c333\".findAll(\"[0-9]+\", 2) == [\"1\", \"22\"]",
     kT},
    {"\"abc\".startsWith(1)",
     "compile error: compilation failed: ERROR: <input>:1:17: found no matching overload for "
     "'startsWith' applied to 'string.(int)'\n | \"abc\".startsWith(1)\n | ................^"},
    {"\"abc\".nope()",
     "compile error: compilation failed: ERROR: <input>:1:11: undeclared reference to 'nope' "
     "(in container '')\n | \"abc\".nope()\n | ..........^"},
    // Conversions and types.
    {"int(\"42\") == 42 && int(3.9) == 3 && int(-3.9) == -3 && int(7u) == 7", kT},
    {"int(\"x\") == 0", "runtime error: type conversion error from 'string' to 'int'"},
    {"int(1e19) == 0", "runtime error: integer overflow"},
    {"uint(-1) == 0u", "runtime error: unsigned integer overflow"},
    {"uint(\"7\") == 7u && double(3) == 3.0 && double(\"2.5\") == 2.5", kT},
    {"string(1.5) == \"1.5\" && string(1e21) == \"1e+21\" && string(100.0) == \"100\" && "
     "string(true) == \"true\" && string(-7) == \"-7\" && string(b\"a\") == \"a\"",
     kT},
    {"string(b\"\\xff\") == \"\"",
     "runtime error: invalid UTF-8 in bytes, cannot convert to string"},
    {"bool(\"true\") && !bool(\"F\") && bytes(\"a\") == b\"a\"", kT},
    {"bool(\"yes\")", "runtime error: type conversion error from 'string' to 'bool'"},
    {"type(1) == int && type(\"a\") == string && type([1]) == list && type({}) == map && "
     "type(1u) == uint && type(true) == bool && type(null) == null_type && type(int) == type",
     kT},
    // Optionals.
    {"optional.of(1).hasValue() && !optional.none().hasValue() && optional.none().orValue(5) == 5",
     kT},
    {"optional.none().value() == 1", "runtime error: optional.none() dereference"},
    {"optional.of(1).or(optional.of(2)).value() == 1 && optional.none().or(optional.of(2)).value() "
     "== 2",
     kT},
    {"!optional.ofNonZeroValue(\"\").hasValue() && optional.ofNonZeroValue(1).hasValue()", kT},
    {"{\"a\": 1}[?\"b\"].orValue(0) == 0 && {\"a\": 1}[?\"a\"].orValue(0) == 1 && "
     "!([1, 2][?5].hasValue())",
     kT},
    {"{\"a\": {\"b\": 2}}.?a.b.orValue(0) == 2 && {\"a\": {\"b\": 2}}.?x.b.orValue(0) == 0", kT},
    {"[?optional.none(), ?optional.of(1)] == [1] && {?\"a\": optional.of(1), ?\"b\": "
     "optional.none()} == {\"a\": 1}",
     kT},
    {"optional.of(1).orValue(1 / 0) == 1", kT},
    // Kubernetes lists library and cel-go's sets.
    {"[1, 2, 3].isSorted() && ![3, 1].isSorted() && [\"a\", \"b\"].isSorted()", kT},
    {"[1, 2, 3].sum() == 6 && [1.5, 2.5].sum() == 4.0 && [3, 1, 2].max() == 3 && [3, 1, 2].min() "
     "== 1",
     kT},
    {"[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2 && [1].indexOf(5) == -1", kT},
    {"dyn([]).max() == 1", "runtime error: max called on empty list"},
    {"[9223372036854775807, 1].sum() > 0", "runtime error: integer overflow"},
    {"sets.contains([1, 2, 3], [1, 2]) && sets.equivalent([1, 2], [2, 1, 1]) && "
     "!sets.intersects([1], [2]) && sets.intersects([1, 2], [2])",
     kT},
    // Kubernetes quantity library (cases from its documentation and tests).
    {"quantity(\"1.5G\") == quantity(\"1500M\") && quantity(\"200M\") == quantity(\"0.2G\")", kT},
    {"quantity(\"2M\") == quantity(\"0.002G\") && quantity(\"2000k\") == quantity(\"2M\")", kT},
    {"quantity(\"200M\") == quantity(\"0.3G\")", kF},
    {"quantity(\"200K\") == quantity(\"1\")", "runtime error: unable to parse quantity's suffix"},
    {"quantity(\"10Mm\") == quantity(\"1\")", "runtime error: unable to parse quantity's suffix"},
    {"quantity(\"Three\") == quantity(\"1\")",
     "runtime error: quantities must match the regular expression "
     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"quantity(\"10Mo\") == quantity(\"1\")",
     "runtime error: quantities must match the regular expression "
     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"isQuantity(\"1.3G\") && isQuantity(\"1.3Gi\") && !isQuantity(\"1,3G\") && "
     "isQuantity(\"10000k\") && !isQuantity(\"200K\") && !isQuantity(\"Three\") && "
     "!isQuantity(\"Mi\") && isQuantity(\"20\") && !isQuantity(\"20Mo\") && !isQuantity(\"10Mm\")",
     kT},
    {"isQuantity([1, 2, 3])",
     "compile error: compilation failed: ERROR: <input>:1:11: found no matching overload for "
     "'isQuantity' applied to '(list(int))'\n | isQuantity([1, 2, 3])\n | ..........^"},
    {"quantity(\"50000000G\").isInteger() && quantity(\"50k\").isInteger() && "
     "!quantity(\"9999999999999999999999999999999999999G\").isInteger() && "
     "!quantity(\"1.5\").isInteger()",
     kT},
    {"quantity(\"9999999999999999999999999999999999999G\").asInteger() == 0",
     "runtime error: cannot convert value to integer"},
    {"quantity(\"50k\").asInteger() == 50000 && quantity(\"50k\").sub(20000).asApproximateFloat() "
     "== 30000.0 && quantity(\"50.703k\").asApproximateFloat() == 50703.0 && "
     "quantity(\"1Gi\").asApproximateFloat() == 1073741824.0",
     kT},
    {"quantity(\"50k\").add(quantity(\"20k\")) == quantity(\"70k\") && quantity(\"50k\").add(20) "
     "== "
     "quantity(\"50020\") && quantity(\"50k\").sub(quantity(\"20k\")) == quantity(\"30k\") && "
     "quantity(\"50k\").sub(20000) == quantity(\"30k\")",
     kT},
    {"quantity(\"50k\").add(20).sub(quantity(\"100k\")).sub(-50000) == quantity(\"20\") && "
     "quantity(\"50k\").add(quantity(\"20\")) == quantity(\"50.02k\") && "
     "quantity(\"50k\").sub(quantity(\"20\")) == quantity(\"49.98k\") && "
     "quantity(\"50k\").add(20).sub(quantity(\"100k\")).asInteger() == -49980",
     kT},
    {"!quantity(\"50k\").add(20).isLessThan(quantity(\"50020\"))", kT},
    {"quantity(\"200M\").compareTo(quantity(\"0.2G\")) == 0 && "
     "quantity(\"50M\").compareTo(quantity(\"50Mi\")) == -1 && "
     "quantity(\"50Mi\").compareTo(quantity(\"50M\")) == 1",
     kT},
    {"quantity(\"150Mi\").isGreaterThan(quantity(\"100Mi\")) && "
     "!quantity(\"50Mi\").isGreaterThan(quantity(\"100Mi\")) && "
     "quantity(\"50M\").isLessThan(quantity(\"100M\")) && "
     "!quantity(\"100M\").isLessThan(quantity(\"50M\")) && "
     "quantity(\"50M\").isLessThan(quantity(\"50Mi\"))",
     kT},
    {"sign(quantity(\"-1\")) == -1 && sign(quantity(\"0\")) == 0 && sign(quantity(\"5m\")) == 1",
     kT},
    {"quantity(\"5\").sign() == 1",
     "compile error: compilation failed: ERROR: <input>:1:19: found no matching overload for "
     "'sign' applied to 'kubernetes.Quantity.()'\n | quantity(\"5\").sign() == 1\n"
     " | ..................^"},
    {"quantity(\"1\") < quantity(\"2\")",
     "compile error: compilation failed: ERROR: <input>:1:15: found no matching overload for "
     "'_<_' applied to '(kubernetes.Quantity, kubernetes.Quantity)'\n"
     " | quantity(\"1\") < quantity(\"2\")\n | ..............^"},
    // Kubernetes semver library, version 1 (cases from its documentation).
    {"semver(\"1.0.0\") == semver(\"1.0.0\") && semver(\"0.1.0-alpha.1\").minor() == 1", kT},
    {"semver(\"200K\") == semver(\"1.0.0\")", "runtime error: No Major.Minor.Patch elements found"},
    {"semver(\"Three\") == semver(\"1.0.0\")",
     "runtime error: No Major.Minor.Patch elements found"},
    {"semver(\"01.0.0\") == semver(\"1.0.0\")",
     "runtime error: Major number must not contain leading zeroes \"01\""},
    {"semver(\"1.0.0-01\") == semver(\"1.0.0\")",
     "runtime error: Numeric PreRelease version must not contain leading zeroes \"01\""},
    {"semver(\"v1.0.0\", true) == semver(\"1.0.0\") && semver(\"1.0\", true) == semver(\"1.0.0\") "
     "&& semver(\"01.01.01\", true) == semver(\"1.1.1\")",
     kT},
    {"isSemver(\"1.0.0\") && !isSemver(\"hello\") && !isSemver(\"v1.0\") && "
     "isSemver(\"v1.0\", true) && isSemver(\"1.0.0-alpha+001\") && !isSemver(\"1.0\")",
     kT},
    {"semver(\"1.2.3\").major() == 1 && semver(\"1.2.3\").minor() == 2 && "
     "semver(\"1.2.3\").patch() == 3",
     kT},
    {"semver(\"1.2.3\").compareTo(semver(\"1.2.3\")) == 0 && "
     "semver(\"1.2.3\").compareTo(semver(\"2.0.0\")) == -1 && "
     "semver(\"1.2.3\").compareTo(semver(\"0.1.2\")) == 1",
     kT},
    {"semver(\"1.0.0-alpha\").isLessThan(semver(\"1.0.0-alpha.1\")) && "
     "semver(\"1.0.0-alpha.1\").isLessThan(semver(\"1.0.0-alpha.beta\")) && "
     "semver(\"1.0.0-alpha.beta\").isLessThan(semver(\"1.0.0-beta\")) && "
     "semver(\"1.0.0-beta\").isLessThan(semver(\"1.0.0-beta.2\")) && "
     "semver(\"1.0.0-beta.2\").isLessThan(semver(\"1.0.0-beta.11\")) && "
     "semver(\"1.0.0-beta.11\").isLessThan(semver(\"1.0.0-rc.1\")) && "
     "semver(\"1.0.0-rc.1\").isLessThan(semver(\"1.0.0\")) && "
     "semver(\"2.0.0\").isGreaterThan(semver(\"1.10.0\"))",
     kT},
    {"semver(\"1.0.0+a\") == semver(\"1.0.0+b\")", kT},
    // The device.
    {"device.driver == \"gpu.example.com\"", kT},
    {"device.attributes[\"gpu.example.com\"].model == \"H100\"", kT},
    {"device.attributes[\"gpu.example.com\"][\"model\"] == \"H100\"", kT},
    {"device.attributes[\"gpu.example.com\"].index == 3 && "
     "device.attributes[\"gpu.example.com\"].index > 1.5",
     kT},
    {"device.attributes[\"gpu.example.com\"].healthy", kT},
    {"device.attributes[\"gpu.example.com\"].model",
     "runtime error: CEL result of type string could not be converted to bool"},
    {"device.attributes[\"gpu.example.com\"].driverVersion.isGreaterThan(semver(\"1.2.0\"))", kT},
    {"device.attributes[\"gpu.example.com\"].driverVersion == semver(\"1.2.3-rc.1\")", kT},
    {"device.attributes[\"gpu.example.com\"].driverVersion.isLessThan(semver(\"1.2.3\"))", kT},
    {"device.attributes[\"gpu.example.com\"].missing == 1", "runtime error: no such key: missing"},
    {"has(device.attributes[\"gpu.example.com\"].model) && "
     "!has(device.attributes[\"gpu.example.com\"].missing)",
     kT},
    {"!has(device.attributes[\"gpu.example.com\"].missing) || "
     "device.attributes[\"gpu.example.com\"].missing == 1",
     kT},
    {"device.attributes[\"unknown.example.com\"].model == \"x\"",
     "runtime error: no such key: model"},
    {"size(device.attributes[\"unknown.example.com\"]) == 0 && "
     "!(\"unknown.example.com\" in device.attributes) && \"other.example.com\" in "
     "device.attributes",
     kT},
    {"size(device.attributes) == 2 && size(device.attributes[\"gpu.example.com\"]) == 5 && "
     "size(device.capacity) == 1",
     kT},
    {"device.attributes[\"gpu.example.com\"].all(k, k != \"\") && device.attributes.exists(d, d "
     "== \"other.example.com\")",
     kT},
    {"device.attributes[\"gpu.example.com\"].model in [\"H100\", \"A100\"]", kT},
    {"device.attributes[\"gpu.example.com\"].model == 1", kF},
    {"device.attributes[\"gpu.example.com\"].model > 1", "runtime error: no such overload"},
    {"device.attributes[\"gpu.example.com\"].index.startsWith(\"h\")",
     "runtime error: no such overload"},
    {"device.attributes[\"other.example.com\"].family.startsWith(\"hop\")", kT},
    {"type(device.attributes[\"gpu.example.com\"].model) == string && type(device) == map", kT},
    {"device.attributes[\"gpu.example.com\"].?model.orValue(\"none\") == \"H100\" && "
     "device.attributes[\"gpu.example.com\"].?missing.orValue(\"none\") == \"none\"",
     kT},
    {"cel.bind(dra, device.attributes[\"gpu.example.com\"], dra.healthy && dra.index == 3)", kT},
    {"device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"64Gi\")) >= 0", kT},
    {"device.capacity[\"gpu.example.com\"].memory.isGreaterThan(quantity(\"80Gi\"))", kF},
    {"device.capacity[\"gpu.example.com\"].memory == quantity(\"80Gi\") && "
     "device.capacity[\"gpu.example.com\"].cores.asInteger() == 132",
     kT},
    {"device.capacity[\"gpu.example.com\"].missing.isInteger()",
     "runtime error: no such key: missing"},
    {"device.allowMultipleAllocations && has(device.driver)", kT},
    {"device.driverr == \"\"",
     "compile error: compilation failed: ERROR: <input>:1:7: undefined field 'driverr'\n"
     " | device.driverr == \"\"\n | ......^"},
    {"devce.driver == \"\"",
     "compile error: compilation failed: ERROR: <input>:1:1: undeclared reference to 'devce' (in "
     "container '')\n | devce.driver == \"\"\n | ^"},
    {"device.attributes[true].someBoolean",
     "compile error: compilation failed: ERROR: <input>:1:18: found no matching overload for "
     "'_[_]' applied to '(map(string, map(string, any)), bool)'\n"
     " | device.attributes[true].someBoolean\n | .................^"},
    {"device.capacity[\"gpu.example.com\"].memory.compareTo(\"64Gi\") >= 0",
     "compile error: compilation failed: ERROR: <input>:1:52: found no matching overload for "
     "'compareTo' applied to 'kubernetes.Quantity.(string)'\n"
     " | device.capacity[\"gpu.example.com\"].memory.compareTo(\"64Gi\") >= 0\n"
     " | ...................................................^"},
    // What a selector must evaluate to.
    {"device.driver", "compile error: must evaluate to bool or the unknown type, not string"},
    {"1", "compile error: must evaluate to bool or the unknown type, not int"},
    {"dyn(true)", "compile error: must evaluate to bool or the unknown type, not dyn"},
    // Syntax errors.
    {"device.driver in [\"a\", ",
     "compile error: compilation failed: ERROR: <input>:1:24: Syntax error: missing ']' at "
     "'<EOF>'\n | device.driver in [\"a\", \n | .......................^"},
    {"1 +",
     "compile error: compilation failed: ERROR: <input>:1:4: Syntax error: mismatched input "
     "'<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, "
     "NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 1 +\n | ...^"},
    {"true #",
     "compile error: compilation failed: ERROR: <input>:1:6: Syntax error: token recognition "
     "error at: '#'\n | true #\n | .....^"},
    {"var == 1",
     "compile error: compilation failed: ERROR: <input>:1:1: reserved identifier: var\n"
     " | var == 1\n | ^"},
    {"\"\\q\" == \"\"",
     "compile error: compilation failed: ERROR: <input>:1:2: Syntax error: invalid escape "
     "sequence '\\q'\n | \"\\q\" == \"\"\n | .^"},
    {"true\n&& é + 1",
     "compile error: compilation failed: ERROR: <input>:2:4: Syntax error: token recognition "
     "error at: 'é'\n | && é + 1\n | ...＾"},
};

TEST(CelExpressions, Table) {
  testing::TestDevice device;
  for (const Case& c : kCases) {
    EXPECT_EQ(testing::Outcome(c.expression, device.device), c.want) << c.expression;
  }
}

// The estimate is an upper bound of what an evaluation costs.
TEST(CelExpressions, ActualCostWithinEstimate) {
  testing::TestDevice device;
  for (const Case& c : kCases) {
    Result<Program> program = Compile(c.expression);
    if (!program.ok()) continue;
    Result<Evaluation> e = program->Evaluate(device.device);
    if (!e.ok()) continue;
    EXPECT_LE(e->actual_cost, program->estimated_max_cost()) << c.expression;
  }
}

}  // namespace expressions_test
}  // namespace copse::cel

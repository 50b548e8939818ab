// core/names.h: upstream's name rules and messages, and that the
// allocation-free predicates agree with them.

#include "core/names.h"

#include <gtest/gtest.h>

namespace copse {
namespace {

TEST(Names, MessagesAreUpstreams) {
  EXPECT_TRUE(IsDns1123Label("abc-1").empty());
  EXPECT_EQ(IsDns1123Label("a.b"), std::vector<std::string>{"must not contain dots"});
  EXPECT_EQ(IsDns1123Label(std::string(64, 'a')),
            std::vector<std::string>{"must be no more than 63 characters"});
  EXPECT_EQ(IsDns1123Subdomain("-a"),
            std::vector<std::string>{
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character "
                "(e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"});
  EXPECT_FALSE(IsDns1035Label("1a").empty());
  EXPECT_TRUE(IsQualifiedName("example.com/My_Name.1").empty());
  EXPECT_EQ(IsQualifiedName("/x"), std::vector<std::string>{"prefix part must be non-empty"});
  EXPECT_EQ(IsValidLabelValue("-x").size(), 1u);
  EXPECT_TRUE(IsValidLabelValue("").empty());
}

TEST(Names, ConfigMapKeys) {
  EXPECT_TRUE(IsConfigMapKey("key.name").empty());
  EXPECT_TRUE(IsConfigMapKey("KEY_NAME-1").empty());
  EXPECT_EQ(IsConfigMapKey("bad key"),
            std::vector<std::string>{
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
                "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
                "'[-._a-zA-Z0-9]+')"});
  EXPECT_EQ(IsConfigMapKey("."), std::vector<std::string>{"must not be '.'"});
  EXPECT_EQ(IsConfigMapKey(".."), std::vector<std::string>{"must not be '..'"});
  EXPECT_EQ(IsConfigMapKey("..x"), std::vector<std::string>{"must not start with '..'"});
  EXPECT_EQ(IsConfigMapKey(std::string(254, 'a')).size(), 1u);
}

TEST(Names, PredicatesAgreeWithTheMessages) {
  for (const std::string& s : {std::string(""),
                               std::string("a"),
                               std::string("A"),
                               std::string("a-b"),
                               std::string("-a"),
                               std::string("a."),
                               std::string("a.b"),
                               std::string("a..b"),
                               std::string("example.com/x"),
                               std::string("example.com/"),
                               std::string("/x"),
                               std::string("a/b/c"),
                               std::string("x_y"),
                               std::string(63, 'a'),
                               std::string(64, 'a'),
                               std::string(253, 'a'),
                               std::string(254, 'a'),
                               std::string("UPPER"),
                               std::string("my.name"),
                               std::string("ab/" + std::string(64, 'c'))}) {
    SCOPED_TRACE(s);
    EXPECT_EQ(ValidDns1123Label(s), IsDns1123Label(s).empty());
    EXPECT_EQ(ValidDns1123Subdomain(s), IsDns1123Subdomain(s).empty());
    EXPECT_EQ(ValidQualifiedName(s), IsQualifiedName(s).empty());
    EXPECT_EQ(ValidLabelValue(s), IsValidLabelValue(s).empty());
  }
}

}  // namespace
}  // namespace copse

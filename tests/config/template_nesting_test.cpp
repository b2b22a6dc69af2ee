// How deep a command template may nest: blocks, `else if` chains and
// subexpressions beyond the limit are an error, never a crash.
#include <gtest/gtest.h>

#include <string>

#include "runner/config/template.h"
#include "template_render.h"

namespace runner {
namespace {

using testing::render;
using testing::rendering;

constexpr int k_limit = 100;  // as the error messages say
constexpr int k_deep = 20000;

std::string repeated(std::string_view text, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += text;
  return out;
}

std::string nested_blocks(int depth, std::string_view open, std::string_view close) {
  return repeated(open, depth) + "y" + repeated(close, depth);
}

// `{{not (not (... x))}}` with `depth` parentheses.
std::string nested_subexpressions(int depth) {
  return "{{not " + repeated("(not ", depth) + "x" + repeated(")", depth) + "}}";
}

// The message of the failure of listing and rendering `text`.
std::string template_error(const std::string& text) {
  EXPECT_FALSE(rendering(text, {{"x", "1"}}).ok());
  Result<std::vector<std::string>> names = template_variables(text);
  if (!names) return names.status().message();
  ADD_FAILURE() << "no error for " << text.substr(0, 60);
  return "";
}

TEST(TemplateNesting, BlocksUpToTheLimitRender) {
  EXPECT_EQ(render(nested_blocks(k_limit, "{{#if x}}", "{{/if}}"), {{"x", "1"}}), "y");
  EXPECT_EQ(render(nested_blocks(k_limit, "<<#with x>>", "<</with>>"), {{"x", "1"}}), "y");
}

TEST(TemplateNesting, BlocksNestedBeyondTheLimitAreAnError) {
  for (std::string text : {nested_blocks(k_limit + 1, "{{#if x}}", "{{/if}}"),
                           nested_blocks(k_deep, "{{#if x}}", "{{/if}}"),
                           nested_blocks(k_deep, "<<#each x>>", "<</each>>")}) {
    std::string message = template_error(text);
    EXPECT_NE(message.find("nested too deeply"), std::string::npos) << message;
    EXPECT_NE(message.find("more than 100 levels"), std::string::npos) << message;
  }
}

TEST(TemplateNesting, ElseIfChainsCountAsNesting) {
  std::string chain = "{{#if x}}a" + repeated("{{else if x}}b", k_deep) + "{{/if}}";
  EXPECT_NE(template_error(chain).find("nested too deeply"), std::string::npos);
  std::string short_chain = "{{#if x}}a" + repeated("{{else if x}}b", k_limit - 1) + "{{/if}}";
  EXPECT_EQ(render(short_chain, {{"x", "1"}}), "a");
}

TEST(TemplateNesting, SubexpressionsUpToTheLimitRender) {
  EXPECT_EQ(render(nested_subexpressions(k_limit), {{"x", ""}}), "true");
}

TEST(TemplateNesting, SubexpressionsNestedBeyondTheLimitAreAnError) {
  for (int depth : {k_limit + 1, k_deep}) {
    std::string message = template_error(nested_subexpressions(depth));
    EXPECT_NE(message.find("nested too deeply"), std::string::npos) << message;
    EXPECT_NE(message.find("{{not (not"), std::string::npos) << message;
  }
  std::string in_block =
      "{{#if " + repeated("(eq ", k_deep) + "x" + repeated(" 1)", k_deep) + "}}y{{/if}}";
  EXPECT_NE(template_error(in_block).find("nested too deeply"), std::string::npos);
}

}  // namespace
}  // namespace runner

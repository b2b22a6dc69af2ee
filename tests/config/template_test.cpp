// Command templates: both syntaxes, helpers, blocks and comments
// (template_shell_text_test.cpp: what stays shell text).
#include "runner/config/template.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "template_render.h"

namespace runner {
namespace {

using testing::fails_undefined;
using testing::k_vars;
using testing::render;
using testing::render_plain;
using testing::rendering;
using testing::variables;

TEST(Template, AngleSyntax) {
  EXPECT_EQ(render("python run.py --gpu <<gpu>>", k_vars), "python run.py --gpu 3");
}

// `<<` and `>>` are shell operators too: an angle expression touches its
// delimiters, and whitespace next to them makes the text shell text.
TEST(Template, AngleSyntaxTouchesItsDelimiters) {
  EXPECT_EQ(render("<<gpu>>|<<replace model \"/\" \"-\">>", k_vars), "3|meta-llama-7B");
  for (std::string text : {"<< gpu >>", "<<  gpu>>", "<<gpu  >>", "<<\tgpu\t>>"}) {
    EXPECT_EQ(render(text, k_vars), text) << text;
    EXPECT_TRUE(variables(text).empty()) << text;
  }
}

TEST(Template, BraceSyntaxWithAndWithoutSpaces) {
  EXPECT_EQ(render("{{gpu}}|{{ gpu }}|{{  gpu}}|{{\tgpu }}", k_vars), "3|3|3|3");
}

TEST(Template, TripleStashMeansTheSame) {
  EXPECT_EQ(render("{{{gpu}}}|{{{ gpu }}}|{{{ model }}}", k_vars), "3|3|meta/llama-7B");
}

TEST(Template, NoHtmlEscaping) {
  EXPECT_EQ(render("{{ v }}", {{"v", "<a href=\"x\">&'</a>"}}), "<a href=\"x\">&'</a>");
}

TEST(Template, NamesMayContainDashDotUnderscoreAndDigits) {
  EXPECT_EQ(render("<<batch-size>> {{dotted.name}} <<under_score>> {{ x1 }}", k_vars), "8 d u one");
}

TEST(Template, AdjacentExpressionsAndEmptyValues) {
  EXPECT_EQ(render("<<gpu>><<gpu>>{{gpu}}[<<empty>>]", k_vars), "333[]");
}

TEST(Template, BothSyntaxesInOneCommand) {
  EXPECT_EQ(render("docker exec c<<gpu>> bench --model {{ model }}", k_vars),
            "docker exec c3 bench --model meta/llama-7B");
}

TEST(Template, SubstitutedValuesAreNotExpandedAgain) {
  EXPECT_EQ(render("<<a>>", {{"a", "<<b>> {{ b }}"}, {"b", "no"}}), "<<b>> {{ b }}");
}

TEST(Template, ReplaceInBraceSyntax) {
  EXPECT_EQ(render("{{ replace model \"/\" \"--\" }}", k_vars), "meta--llama-7B");
}

TEST(Template, ReplaceInAngleSyntax) {
  EXPECT_EQ(render("<<replace model \"/\" \"--\">>", k_vars), "meta--llama-7B");
}

TEST(Template, ReplaceWithSingleQuotes) {
  EXPECT_EQ(render("<<replace model '/' '__'>>|{{replace model '-' ''}}", k_vars),
            "meta__llama-7B|meta/llama7B");
}

TEST(Template, ReplaceMixedQuotesAndExtraSpaces) {
  EXPECT_EQ(render("{{{  replace   model  '/'   \"+\"  }}}", k_vars), "meta+llama-7B");
}

TEST(Template, ReplaceReplacesEveryOccurrence) {
  EXPECT_EQ(render("<<replace p \"/\" \"_\">>", {{"p", "/a/b/c/"}}), "_a_b_c_");
  EXPECT_EQ(render("<<replace p \"aa\" \"a\">>", {{"p", "aaaa"}}), "aa");
  EXPECT_EQ(render("<<replace p \"a\" \"aa\">>", {{"p", "aa"}}), "aaaa");
}

TEST(Template, ReplaceWithEmptyFromLeavesValueUnchanged) {
  EXPECT_EQ(render("<<replace model \"\" \"x\">>", k_vars), "meta/llama-7B");
}

TEST(Template, ReplaceArgumentsMayHoldSpacesAndOtherQuotes) {
  EXPECT_EQ(render("{{ replace v \" \" \"'\" }}", {{"v", "a b c"}}), "a'b'c");
  EXPECT_EQ(render("{{ replace v '\"' ' ' }}", {{"v", "a\"b"}}), "a b");
}

TEST(Template, StringsTakeJsonEscapes) {
  EXPECT_EQ(render("{{ replace v \"\\\"\" \"q\" }}", {{"v", "a\"b"}}), "aqb");
  EXPECT_EQ(render("{{ replace v '\\'' \"q\" }}", {{"v", "a'b"}}), "aqb");
  EXPECT_EQ(render("{{ replace v \"\\\\\" \"/\" }}", {{"v", "a\\b\\c"}}), "a/b/c");
  EXPECT_EQ(render("<<replace v \"\\/\" \"\\t\">>", {{"v", "a/b"}}), "a\tb");
  EXPECT_EQ(render("<<replace v \"x\" \"\\n\">>", {{"v", "axb"}}), "a\nb");
}

TEST(Template, UnknownEscapesKeepTheBackslash) {
  EXPECT_EQ(render("<<replace v \"\\d\" \"_\">>", {{"v", "a\\db"}}), "a_b");
}

TEST(Template, ReplaceWithoutArgumentsIsAVariableNamedReplace) {
  EXPECT_EQ(render("<<replace>> {{ replace }}", k_vars), "r r");
}

TEST(Template, MalformedReplaceIsLiteral) {
  EXPECT_EQ(render_plain("<<replace model / ->>"), "<<replace model / ->>");
  EXPECT_EQ(render_plain("{{ replace model \"/ \"-\" }}"), "{{ replace model \"/ \"-\" }}");
  EXPECT_EQ(render_plain("<<replace model\"/\"\"-\">>"), "<<replace model\"/\"\"-\">>");
}

TEST(Template, UndefinedVariableFailsWithItsName) {
  Result<std::string> result = rendering("run <<gpu>> <<missing>>", k_vars);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().kind(), ErrorKind::undefined);
  EXPECT_EQ(result.status().message(), "<<missing>> is not defined");
}

TEST(Template, UndefinedReplaceVariableFails) {
  Result<std::string> result = rendering("{{ replace nope \"a\" \"b\" }}", k_vars);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().kind(), ErrorKind::undefined);
  EXPECT_EQ(result.status().message(), "<<nope>> is not defined");
}

TEST(Template, CommentsRenderToNothing) {
  const std::pair<std::string, std::string> cases[] = {
      {"a{{! a note }}b", "ab"},
      {"a{{!}}b", "ab"},
      {"a{{!-- holds }} and {{ gpu }} --}}b", "ab"},
      {"a{{!-- spans\nlines --}}b", "ab"},
      {"a<<! a note >>b", "ab"},
      {"a<<!-- holds >> and <<gpu>> -->>b", "ab"},
      {"run <<gpu>>{{! why: the fast path }}", "run 3"},
      {"cat <<!\nx\n!", "cat <<!\nx\n!"},
      {"\\{{! kept }}", "{{! kept }}"},
  };
  for (const auto& [text, expected] : cases) {
    EXPECT_EQ(render(text, k_vars), expected) << text;
  }
  EXPECT_TRUE(variables("{{! <<nope>> }}{{!-- {{ nope }} --}}").empty());
}

// What the failure of `text` says, or "" if there is none.
std::string template_error(std::string_view text) {
  Result<std::vector<std::string>> names = template_variables(text);
  return names ? "" : names.status().message();
}

TEST(Template, UnknownHelperIsAnErrorNamingItAndTheEscape) {
  const std::pair<std::string, std::string> cases[] = {
      {"{{ to_upper m }}", "`to_upper`"},
      {"run <<shout model>>", "`shout`"},
      {"{{{ nope a \"b\" 3 }}}", "`nope`"},
  };
  for (const auto& [text, helper] : cases) {
    std::string message = template_error(text);
    EXPECT_NE(message.find(helper), std::string::npos) << text << ": " << message;
    EXPECT_NE(message.find("helper"), std::string::npos) << text << ": " << message;
    EXPECT_NE(message.find("\\"), std::string::npos) << text << ": " << message;
    EXPECT_FALSE(rendering(text, k_vars).ok()) << text;
  }
}

TEST(Template, UnknownHelperSuggestsALikeOne) {
  const std::pair<std::string, std::string> cases[] = {
      {"{{ to_upper m }}", "did you mean `to_upper_case`?"},
      {"{{ snake_case m }}", "did you mean `to_snake_case`?"},
      {"{{ string_replace m \"a\" \"b\" }}", "did you mean `replace`?"},
  };
  for (const auto& [text, expected] : cases)
    EXPECT_NE(template_error(text).find(expected), std::string::npos) << template_error(text);
  EXPECT_EQ(template_error("{{ zz m }}").find("did you mean"), std::string::npos);
}

TEST(Template, HelperWithTheWrongNumberOfArgumentsIsAnError) {
  EXPECT_NE(template_error("{{ replace model \"/\" }}").find("`replace` takes 3"),
            std::string::npos)
      << template_error("{{ replace model \"/\" }}");
}

// The string helpers of handlebars_misc_helpers, with the Rust Inflector
// crate's case rules.
TEST(Template, StringHelpers) {
  const std::tuple<std::string, std::string, std::string> cases[] = {
      {"to_upper_case", "Hello foo-bars", "HELLO FOO-BARS"},
      {"to_lower_case", "Hello Foo-BARS", "hello foo-bars"},
      {"trim", "  padded\t", "padded"},
      {"trim", "   ", ""},
      {"to_snake_case", "Hello foo-bars", "hello_foo_bars"},
      {"to_snake_case", "meta/llama-7B", "meta_llama_7b"},
      {"to_snake_case", "HTTPServer", "http_server"},
      {"to_snake_case", "fooBar", "foo_bar"},
      {"to_snake_case", "--a  b--", "a_b"},
      {"to_kebab_case", "Hello foo_bars", "hello-foo-bars"},
      {"to_kebab_case", "meta/Llama-2-7b", "meta-llama-2-7b"},
      {"to_camel_case", "Hello foo-bars", "helloFooBars"},
      {"to_camel_case", "llama-7B", "llama7B"},
      {"to_camel_case", "FOO_BAR", "fooBar"},
      {"to_camel_case", "__x", "x"},
      {"to_upper_case", "", ""},
  };
  for (const auto& [helper, input, expected] : cases) {
    std::string brace = "{{ " + helper + " v }}";
    std::string angle = "<<" + helper + " v>>";
    EXPECT_EQ(render(brace, {{"v", input}}), expected) << brace << " of " << input;
    EXPECT_EQ(render(angle, {{"v", input}}), expected) << angle << " of " << input;
  }
}

TEST(Template, HelpersTakeLiteralsAndNest) {
  const std::pair<std::string, std::string> cases[] = {
      {"{{ to_upper_case \"x\" }}", "X"},
      {"{{ to_upper_case (replace model \"/\" \"_\") }}", "META_LLAMA-7B"},
      {"<<to_snake_case (replace model \"/\" \" \")>>", "meta_llama_7b"},
      {"{{ replace (to_lower_case model) \"-7b\" \"\" }}", "meta/llama"},
      {"{{ to_upper_case 5 }}", "5"},
  };
  for (const auto& [text, expected] : cases) EXPECT_EQ(render(text, k_vars), expected) << text;
  EXPECT_EQ(variables("{{ to_upper_case (replace model \"/\" x) }} <<trim y>>"),
            (std::vector<std::string>{"model", "x", "y"}));
}

TEST(Template, RawBlocksAreKeptAsWritten) {
  const std::pair<std::string, std::string> cases[] = {
      {"{{{{raw}}}}{{ gpu }} <<gpu>>{{{{/raw}}}} {{ gpu }}", "{{ gpu }} <<gpu>> 3"},
      {"<<<<raw>>>>{{ x }}\n<<y>><<<</raw>>>>", "{{ x }}\n<<y>>"},
      {"{{{{raw}}}}{{/if}}{{{{/raw}}}}", "{{/if}}"},
  };
  for (const auto& [text, expected] : cases) EXPECT_EQ(render(text, k_vars), expected) << text;
  EXPECT_TRUE(variables("{{{{raw}}}}{{ nope }}{{{{/raw}}}}").empty());
}

const std::map<std::string, std::string> k_block_vars = {
    {"gpu", "0"}, {"gpus", "2,3"}, {"empty", ""}, {"word", "false"}, {"batch", "16"}, {"m", "a/b"}};

TEST(Template, BlockHelpers) {
  const std::pair<std::string, std::string> cases[] = {
      {"{{#if gpu}}yes{{/if}}", "yes"},
      {"{{#if empty}}yes{{else}}no{{/if}}", "no"},
      {"{{#if word}}a text is true, even false{{/if}}", "a text is true, even false"},
      {"{{#if 0}}y{{else}}0 is false{{/if}}", "0 is false"},
      {"{{#if false}}y{{else}}n{{/if}}{{#if true}}y{{/if}}{{#if null}}y{{/if}}", "ny"},
      {"{{#unless empty}}ran{{else}}skipped{{/unless}}", "ran"},
      {"{{#unless gpu}}x{{/unless}}.", "."},
      {"{{#each gpus}}--device {{this}} {{/each}}", "--device 2 --device 3 "},
      {"{{#each gpus}}{{@index}}={{.}}{{#unless @last}},{{/unless}}{{/each}}", "0=2,1=3"},
      {"{{#each gpus}}{{#if @first}}first {{/if}}{{this}}@{{../m}}@{{m}} {{/each}}",
       "first 2@a/b@a/b 3@a/b@a/b "},
      {"{{#each empty}}x{{else}}none{{/each}}", "none"},
      {"{{#each gpu}}[{{this}}]{{/each}}", "[0]"},
      {"{{#with m}}{{replace this \"/\" \"-\"}}{{/with}}", "a-b"},
      {"{{#with empty}}x{{else}}no m{{/with}}", "no m"},
      {"{{#if gpu}}{{#if empty}}a{{else}}b{{/if}}{{else}}c{{/if}}", "b"},
  };
  for (const auto& [text, expected] : cases)
    EXPECT_EQ(render(text, k_block_vars), expected) << text;
}

// Comparisons follow the handlebars crate: a variable is text, so it equals
// a string and compares with a number as a number.
TEST(Template, Subexpressions) {
  const std::pair<std::string, std::string> cases[] = {
      {"{{#if (eq gpu \"0\")}}docker build .{{/if}}", "docker build ."},
      {"{{#if (eq gpu 0)}}same{{else}}text is no number{{/if}}", "text is no number"},
      {"{{#if (ne gpu \"1\")}}y{{/if}}", "y"},
      {"{{#if (gt batch 8)}}big{{/if}}", "big"},
      {"{{#if (gt batch \"8\")}}y{{else}}as text 16 < 8{{/if}}", "as text 16 < 8"},
      {"{{#if (gte batch 16)}}a{{/if}}{{#if (lt batch 16)}}b{{/if}}{{#if (lte batch 16)}}c{{/if}}",
       "ac"},
      {"{{#if (lt m 3)}}y{{else}}no order{{/if}}", "no order"},
      {"{{#if (and gpu batch)}}y{{/if}}{{#if (and gpu empty)}}n{{/if}}", "y"},
      {"{{#if (or empty gpu)}}y{{/if}}{{#if (or empty \"\")}}n{{/if}}", "y"},
      {"{{#if (not empty)}}y{{/if}}{{#if (not gpu)}}n{{/if}}", "y"},
      {"{{#if (and (eq gpu \"0\") (not (eq batch \"1\")))}}y{{/if}}", "y"},
      {"{{#unless (eq gpu \"0\")}}n{{else}}y{{/unless}}", "y"},
      {"{{eq gpu \"0\"}} {{gt 1 2}}", "true false"},
  };
  for (const auto& [text, expected] : cases)
    EXPECT_EQ(render(text, k_block_vars), expected) << text;
}

// As in Handlebars, a line that holds only a block tag or a comment leaves
// no line behind, so a block inside a `\`-continued command keeps it whole.
TEST(Template, StandaloneBlockLinesLeaveNoLine) {
  const std::pair<std::string, std::string> cases[] = {
      {"a\n{{#if gpu}}\nline\n{{/if}}\nb", "a\nline\nb"},
      {"python run.py \\\n  {{#if gpu}}\n  --flag \\\n  {{/if}}\n  --other",
       "python run.py \\\n  --flag \\\n  --other"},
      {"  {{#if empty}}\n  a\n  {{else}}\n  b\n  {{/if}}\n", "  b\n"},
      {"{{! note }}\nx", "x"},
      {"a\r\n<<#if gpu>>\r\nb\r\n<</if>>\r\n", "a\r\nb\r\n"},
      {"x {{#if gpu}}y{{/if}}\n", "x y\n"},
      {"{{#if gpu}} y\n{{/if}}", " y\n"},
      {"{{gpu}}\n", "0\n"},
      {"{{#each gpus}}\n- {{this}}\n{{/each}}\n", "- 2\n- 3\n"},
  };
  for (const auto& [text, expected] : cases)
    EXPECT_EQ(render(text, k_block_vars), expected) << text;
}

TEST(Template, TildeStripsWhitespaceNextToATag) {
  const std::pair<std::string, std::string> cases[] = {
      {"a  {{~gpu~}}  b", "a0b"},
      {"a \n {{~ gpu ~}} \n b", "a0b"},
      {"x\n{{~#if gpu~}}\n  y\n{{~/if~}}\nz", "xyz"},
      {"a {{~#if empty}}1{{~else~}} 2 {{/if}}", "a2 "},
      {"a <<~gpu>> b", "a0 b"},
      {"a <<gpu~>> b", "a 0b"},
      {"{{gpu~}}\n  {{#if gpu}}\nx\n{{/if}}", "0\nx\n"},
  };
  for (const auto& [text, expected] : cases)
    EXPECT_EQ(render(text, k_block_vars), expected) << text;
}

TEST(Template, ElseIfChains) {
  const std::pair<std::string, std::string> cases[] = {
      {"{{#if empty}}a{{else if gpu}}b{{else}}c{{/if}}", "b"},
      {"{{#if empty}}a{{else if (eq gpu \"1\")}}b{{else}}c{{/if}}", "c"},
      {"<<#if empty>>a<<else unless gpu>>b<<else>>c<</if>>", "c"},
      {"{{#if gpu}}a{{else if nope}}b{{/if}}", "a"},
  };
  for (const auto& [text, expected] : cases)
    EXPECT_EQ(render(text, {{"gpu", "0"}, {"empty", ""}, {"nope", ""}}), expected) << text;
  EXPECT_EQ(variables("{{#if a}}{{else if b}}{{c}}{{/if}}"),
            (std::vector<std::string>{"a", "b", "c"}));
}

TEST(Template, EveryConstructInAngleSyntax) {
  const std::pair<std::string, std::string> cases[] = {
      {"<<#if (eq gpu \"0\")>>docker build .<<else>>skip<</if>>", "docker build ."},
      {"<<#unless (gt batch 8)>>small<<else>>big<</unless>>", "big"},
      {"<<#each gpus>>--device <<this>> <</each>>", "--device 2 --device 3 "},
      {"<<#each gpus>><<@index>><<#unless @last>>,<</unless>><</each>>", "0,1"},
      {"<<#with m>><<replace . \"/\" \"_\">><</with>>", "a_b"},
      {"<<#if empty>>x<<else>><<to_upper_case m>><</if>>", "A/B"},
      {"<<#if gpu>>{{ gpu }}<</if>>{{#if gpu}}<<gpu>>{{/if}}", "00"},
      {"<<#if gpu>>cat <<EOF >> f.txt\n<<m>>\nEOF<</if>>", "cat <<EOF >> f.txt\na/b\nEOF"},
      {"<<#if gpu>>echo $((1<<4>>2))<</if>>", "echo $((1<<4>>2))"},
      {"<<! note >><<!-- <<nope>> -->>x", "x"},
      {"\\<<#if gpu>>", "<<#if gpu>>"},
  };
  for (const auto& [text, expected] : cases)
    EXPECT_EQ(render(text, k_block_vars), expected) << text;
  EXPECT_NE(template_error("<<#if gpu>>x").find("add `<</if>>`"), std::string::npos)
      << template_error("<<#if gpu>>x");
}

TEST(Template, VariablesInsideBlocksAndSubexpressions) {
  EXPECT_EQ(variables("{{#if (eq a \"0\")}}{{b}}{{else}}{{c}}{{/if}}"
                      "{{#each d}}{{this}}{{@index}}{{../e}}{{/each}}{{#with f}}{{.}}{{/with}}"),
            (std::vector<std::string>{"a", "b", "c", "d", "e", "f"}));
}

TEST(Template, UndefinedVariableInATakenBranchFails) {
  EXPECT_TRUE(fails_undefined("{{#if gpu}}{{nope}}{{/if}}", k_block_vars));
}

TEST(Template, UnbalancedBlocksAreErrors) {
  const std::pair<std::string, std::string> cases[] = {
      {"{{#if gpu}}x", "never closed"},
      {"x{{/if}}", "closes no block"},
      {"{{#if gpu}}x{{/each}}", "closes `{{#if gpu}}`"},
      {"{{else}}", "outside"},
      {"{{#if gpu}}a{{else}}b{{else}}c{{/if}}", "outside"},
      {"{{#replace gpu}}x{{/replace}}", "not a block helper"},
      {"{{#if gpu batch}}x{{/if}}", "takes 1 argument"},
      {"{{#if (eq gpu)}}x{{/if}}", "`eq` takes 2"},
      {"{{#if (shout gpu)}}x{{/if}}", "`shout`"},
  };
  for (const auto& [text, expected] : cases) {
    std::string message = template_error(text);
    EXPECT_NE(message.find(expected), std::string::npos) << text << ": " << message;
  }
}

TEST(Template, ExpressionsDoNotSpanLines) {
  EXPECT_EQ(render_plain("<<\ngpu>> {{ gpu\n}}"), "<<\ngpu>> {{ gpu\n}}");
}

TEST(Template, NamesMustStartWithLetterDigitOrUnderscore) {
  EXPECT_EQ(render_plain("<<-x>> <<.x>>"), "<<-x>> <<.x>>");
  EXPECT_EQ(render("<<_x>> <<9x>>", {{"_x", "a"}, {"9x", "b"}}), "a b");
}

TEST(Template, ExtraDelimiterCharactersStayAround) {
  EXPECT_EQ(render("<<<gpu>>>", k_vars), "<3>");
  EXPECT_EQ(render("{{{{gpu}}}}", k_vars), "{3}");
  EXPECT_EQ(render("{{{gpu}}", k_vars), "{3");
  EXPECT_EQ(render("{{gpu}}}", k_vars), "3}");
}

TEST(Template, MismatchedDelimitersAreLiteral) {
  EXPECT_EQ(render("<<gpu}} {{gpu>> <<gpu> {gpu}} <<gpu", k_vars),
            "<<gpu}} {{gpu>> <<gpu> {gpu}} <<gpu");
}

TEST(Template, VariablesInOrderOfFirstUseWithoutDuplicates) {
  EXPECT_EQ(variables("<<b>> {{ a }} <<b>> {{{ c }}} <<replace d \"/\" \"-\">> {{a}}"),
            (std::vector<std::string>{"b", "a", "c", "d"}));
}

TEST(Template, VariablesOfReplaceInBothSyntaxes) {
  EXPECT_EQ(variables("{{ replace model '/' '-' }} <<replace task \"a\" \"b\">>"),
            (std::vector<std::string>{"model", "task"}));
}

TEST(Template, VariablesOfPlainTextIsEmpty) {
  EXPECT_TRUE(variables("").empty());
  EXPECT_TRUE(variables("nvidia-smi").empty());
}

TEST(Template, EmptyTemplateRendersEmpty) { EXPECT_EQ(render_plain(""), ""); }

}  // namespace
}  // namespace runner

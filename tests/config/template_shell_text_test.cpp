// What stays shell text in a command template: heredocs, shifts, JSON and
// other tools' templates; what a backslash escapes; and where a `<<name>>`
// is a variable and where it is shell text.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runner/config/template.h"
#include "template_render.h"

namespace runner {
namespace {

using testing::fails_undefined;
using testing::k_vars;
using testing::render;
using testing::render_plain;
using testing::rendering;
using testing::variables;

TEST(TemplateShellText, HeredocsPassThrough) {
  const std::string text = "cat <<EOF > out.txt\nhello\nEOF\ncat <<-END\n\tx\nEND\ncat << 'Q'\nQ\n";
  EXPECT_EQ(render_plain(text), text);
  EXPECT_TRUE(variables(text).empty());
}

// Shell text that holds `<<` and `>>` and is not a template expression.
TEST(TemplateShellText, ShellTextIsNotATemplate) {
  for (std::string text : {
           "cat <<EOF >> out.txt\nhello\nEOF",
           "cat <<EOF >>out.txt\nhello\nEOF",
           "cat << EOF >> out.txt\nhello\nEOF",
           "cat <<'EOF' >> out.txt\nx\nEOF",
           "cat <<-EOF >> out.txt\n\tx\nEOF",
           "python - <<PY >> log 2>&1\nprint(1)\nPY",
           "echo $(( 1 << 4 >> 2 ))",
           "echo $((1<<4>>2))",
           "echo $((x<<y>>z)) $(( (a<<b>>c) ))",
           "echo $(( $(( 1<<2 )) <<gpu>> 1 ))",
           "python -c 'print(1<<2>>1)'",
       }) {
    EXPECT_EQ(render_plain(text), text) << text;
    EXPECT_TRUE(variables(text).empty()) << text;
  }
}

TEST(TemplateShellText, TemplatesStillWorkNextToShellText) {
  EXPECT_EQ(
      render("cat <<EOF >> out_<<gpu>>.txt\n{{ model }}\nEOF\necho $((1<<4>>2)) <<gpu>>", k_vars),
      "cat <<EOF >> out_3.txt\nmeta/llama-7B\nEOF\necho $((1<<4>>2)) 3");
  EXPECT_EQ(variables("cat <<EOF >> out_<<gpu>>.txt\n$(( {{ batch }} * 2 ))"),
            (std::vector<std::string>{"gpu", "batch"}));
}

TEST(TemplateShellText, UndefinedTightAngleNameIsStillAnError) {
  EXPECT_TRUE(fails_undefined("cat <<EOF>>out.txt"));
  EXPECT_EQ(variables("cat <<EOF>>out.txt"), (std::vector<std::string>{"EOF"}));
}

// A backslash before `<<` or `{{` keeps the expression as written; two
// backslashes are one literal backslash before a rendered expression.
TEST(TemplateShellText, BackslashEscapesAnExpression) {
  const std::pair<std::string, std::string> cases[] = {
      {"\\<<gpu>>", "<<gpu>>"},
      {"cat \\<<EOF>>out.txt", "cat <<EOF>>out.txt"},
      {"\\<<replace model \"/\" \"-\">>", "<<replace model \"/\" \"-\">>"},
      {"\\\\<<gpu>>", "\\3"},
      {"a\\b <<gpu>>", "a\\b 3"},
      {"\\<< gpu >>", "\\<< gpu >>"},
  };
  for (const auto& [text, expected] : cases) {
    EXPECT_EQ(render(text, k_vars), expected) << text;
  }
  EXPECT_TRUE(variables("\\<<nope>>").empty());
  EXPECT_EQ(variables("\\\\<<gpu>>"), (std::vector<std::string>{"gpu"}));
}

TEST(TemplateShellText, BackslashEscapesABraceExpressionAsHandlebarsDoes) {
  const std::pair<std::string, std::string> cases[] = {
      {"\\{{ gpu }}", "{{ gpu }}"},
      {"echo \\{{gpu}} {{gpu}}", "echo {{gpu}} 3"},
      {"\\{{{ gpu }}}", "{{{ gpu }}}"},
      {"\\{{ replace model \"/\" \"-\" }}", "{{ replace model \"/\" \"-\" }}"},
      {"\\\\{{ gpu }}", "\\3"},
      {"\\{ gpu }", "\\{ gpu }"},
  };
  for (const auto& [text, expected] : cases) {
    EXPECT_EQ(render(text, k_vars), expected) << text;
  }
  EXPECT_TRUE(variables("\\{{ nope }}").empty());
}

TEST(TemplateShellText, HereStringPassesThrough) {
  EXPECT_EQ(render_plain("grep x <<< \"$line\""), "grep x <<< \"$line\"");
}

TEST(TemplateShellText, ShiftsPassThrough) {
  EXPECT_EQ(render_plain("echo $((1<<2)) $((8>>1)) $((1 << 4))"),
            "echo $((1<<2)) $((8>>1)) $((1 << 4))");
}

TEST(TemplateShellText, RedirectionsPassThrough) {
  EXPECT_EQ(render_plain("a >> log 2>&1 < in <<EOF"), "a >> log 2>&1 < in <<EOF");
}

TEST(TemplateShellText, JsonAndLoneBracesPassThrough) {
  for (std::string text : {"{\"a\": 1}", "{\"a\": {\"b\": [1, 2]}}", "{{", "}}", "{{ }}", "{{}}",
                           "<<>>", "<< >>", "{ {x} }", "{{x}", "{x}}", "x={{", "{{\"a\": 1}}"}) {
    EXPECT_EQ(render_plain(text), text) << text;
    EXPECT_TRUE(variables(text).empty()) << text;
  }
}

TEST(TemplateShellText, GoTemplatesOfOtherToolsPassThrough) {
  const std::string text =
      "docker ps --format '{{.Names}}' && docker inspect -f '{{ .State.Running }}' c && "
      "docker inspect -f '{{json .Config}}' c";
  EXPECT_EQ(render_plain(text), text);
}

// As in Handlebars, a backslash before `{{` is dropped even when no tag
// follows: `\{{.Names}}` reaches docker as `{{.Names}}`.
TEST(TemplateShellText, BackslashBeforeBracesIsDroppedWhateverFollows) {
  const std::pair<std::string, std::string> cases[] = {
      {"docker ps --format '\\{{.Names}}'", "docker ps --format '{{.Names}}'"},
      {"docker inspect -f '\\{{json .Config}}' c", "docker inspect -f '{{json .Config}}' c"},
      {"\\{{", "{{"},
      {"x \\{{ gpu", "x {{ gpu"},
      {"\\{{a {{gpu}} b}}", "{{a 3 b}}"},
      {"\\{{{{raw}}}}", "{{{{raw}}}}"},
      {"\\\\{{.Names}}", "\\{{.Names}}"},
      {"\\\\\\{{gpu}}", "\\\\3"},
      {"a\\\\ b\\", "a\\\\ b\\"},
  };
  for (const auto& [text, expected] : cases) {
    EXPECT_EQ(render(text, k_vars), expected) << text;
  }
  EXPECT_TRUE(variables("\\{{.Names}} \\{{ nope }}").empty());
}

// Inside `$(( ))` a `<<name>>` where an operand belongs is a variable, as
// anywhere else.
TEST(TemplateShellText, AngleVariableRendersInsideArithmetic) {
  const std::map<std::string, std::string> vars = {{"bs", "3"}, {"n", "2"}};
  EXPECT_EQ(render("echo $((<<bs>> * 10))", vars), "echo $((3 * 10))");
  EXPECT_EQ(render("echo $(( (<<bs>>+1) * <<n>> )) $((10/<<n>>))", vars),
            "echo $(( (3+1) * 2 )) $((10/2))");
  EXPECT_EQ(variables("echo $((<<bs>> * 10))"), (std::vector<std::string>{"bs"}));
  EXPECT_TRUE(fails_undefined("echo $((<<bs>> * 10))"));
}

// After an operand, `<<name>>` may be a shift by a shell variable: it is
// the runner variable when one is defined, else shell text.
TEST(TemplateShellText, AngleNameAfterAnOperandIsAShiftUnlessDefined) {
  for (std::string text : {"echo $((1<<n>>2))", "echo $((x <<y>> z))", "echo $(( a[1]<<b>>c ))"}) {
    EXPECT_EQ(render_plain(text), text) << text;
    EXPECT_TRUE(variables(text).empty()) << text;
  }
  EXPECT_EQ(render("echo $((1<<bs>>2))", {{"bs", "3"}}), "echo $((132))");
  EXPECT_EQ(render("echo $((1<<4>>2))", {{"4", "x"}}), "echo $((1<<4>>2))");
}

// `cat <<EOF>>log` opens a heredoc when a later line is `EOF`: shell text,
// unless EOF is a variable. `<<-EOF` and `<<'EOF'` are never tags.
TEST(TemplateShellText, HeredocOfAnAngleNameIsShellTextUnlessDefined) {
  const std::string heredoc = "cat <<EOF>>log\nmodel <<gpu>>\nEOF\n";
  EXPECT_EQ(render(heredoc, k_vars), "cat <<EOF>>log\nmodel 3\nEOF\n");
  EXPECT_EQ(variables(heredoc), (std::vector<std::string>{"gpu"}));
  EXPECT_EQ(render(heredoc, {{"gpu", "3"}, {"EOF", "out"}}), "cat outlog\nmodel 3\nEOF\n");
  for (std::string text : {"cat <<-EOF>>log\n\tx\n\tEOF", "cat <<'EOF'>>log\nx\nEOF"}) {
    EXPECT_EQ(render_plain(text), text) << text;
  }
  EXPECT_TRUE(fails_undefined("cat <<EOF>>log\nEOF is not alone\n"));
}

}  // namespace
}  // namespace runner

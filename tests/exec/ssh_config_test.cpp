// Resolving hosts through the OpenSSH client configuration: parsing `ssh -G`
// output, token expansion, ProxyJump hops, the command line that asks ssh,
// and the built-in parser, which must agree with `ssh -G` on what it
// supports. Every configuration is a test-made file; ~/.ssh is never read.
#include "runner/exec/ssh/ssh_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::TempDir;

SshTokenValues test_locals() {
  SshTokenValues local;
  local.home = "/home/me";
  local.local_user = "me";
  local.uid = "1000";
  local.local_host = "laptop.example.org";
  return local;
}

SshHostConfig parse_or_fail(const std::string& text, const SshQuery& query) {
  Result<SshHostConfig> config = parse_ssh_g_output(text, query, test_locals());
  EXPECT_TRUE(config) << config.status().message();
  return config ? *config : SshHostConfig{};
}

// Host "node" at node.example.org:2200, user bob.
SshHostConfig node_config() {
  SshHostConfig config;
  config.alias = "node";
  config.hostname = "node.example.org";
  config.user = "bob";
  config.port = 2200;
  return config;
}

bool have_ssh() { return std::system("ssh -V >/dev/null 2>&1") == 0; }

TEST(SshGOutput, ReadsEveryFieldRunnerUses) {
  SshHostConfig config = parse_or_fail(
      "user admin\n"
      "hostname 10.1.2.3\n"
      "port 2222\n"
      "identitiesonly yes\n"
      "stricthostkeychecking accept-new\n"
      "identityfile ~/.ssh/work_%r@%h\n"
      "identityfile /keys/%n-%p\n"
      "userknownhostsfile /home/me/.ssh/kh_a /home/me/.ssh/kh_b\n"
      "globalknownhostsfile /etc/ssh/ssh_known_hosts\n"
      "hostkeyalias gpu-a\n"
      "proxyjump jump@bastion:2200,inner\n"
      "connecttimeout 7\n"
      "serveraliveinterval 5\n"
      "serveralivecountmax 2\n"
      "identityagent /run/agent.sock\n"
      "batchmode yes\n"
      "compression yes\n",
      {"gpu-a", "", 0});
  EXPECT_EQ(config.alias, "gpu-a");
  EXPECT_EQ(config.user, "admin");
  EXPECT_EQ(config.hostname, "10.1.2.3");
  EXPECT_EQ(config.port, 2222);
  EXPECT_TRUE(config.identities_only);
  EXPECT_EQ(config.host_key_checking, HostKeyChecking::accept_new);
  EXPECT_EQ(config.identity_files,
            (std::vector<std::string>{"/home/me/.ssh/work_admin@10.1.2.3", "/keys/gpu-a-2222"}));
  EXPECT_FALSE(config.default_identity_files);
  EXPECT_EQ(config.user_known_hosts_files,
            (std::vector<std::string>{"/home/me/.ssh/kh_a", "/home/me/.ssh/kh_b"}));
  EXPECT_EQ(config.global_known_hosts_files, std::vector<std::string>{"/etc/ssh/ssh_known_hosts"});
  EXPECT_EQ(config.host_key_alias, "gpu-a");
  EXPECT_EQ(config.proxy_jump, (std::vector<std::string>{"jump@bastion:2200", "inner"}));
  ASSERT_TRUE(config.connect_timeout);
  EXPECT_EQ(config.connect_timeout->count(), 7);
  EXPECT_EQ(config.server_alive_interval, 5);
  EXPECT_EQ(config.server_alive_count_max, 2);
  EXPECT_EQ(config.identity_agent.value_or(""), "/run/agent.sock");
  EXPECT_TRUE(config.batch_mode);
  EXPECT_TRUE(config.compression);
}

TEST(SshGOutput, DefaultsAreRecognisedAndNoneMeansUnset) {
  SshHostConfig config = parse_or_fail(
      "user me\nhostname plain\nport 22\nstricthostkeychecking true\n"
      "identityfile ~/.ssh/id_rsa\nidentityfile ~/.ssh/id_ecdsa\nidentityfile ~/.ssh/id_ed25519\n"
      "connecttimeout none\nproxycommand none\n",
      {"plain", "", 0});
  EXPECT_TRUE(config.default_identity_files);
  EXPECT_EQ(config.identity_files.back(), "/home/me/.ssh/id_ed25519");
  EXPECT_EQ(config.host_key_checking, HostKeyChecking::yes);
  EXPECT_FALSE(config.connect_timeout);
  EXPECT_TRUE(config.proxy_command.empty());
  EXPECT_TRUE(config.proxy_jump.empty());
}

TEST(SshGOutput, StrictHostKeyCheckingSpellings) {
  auto mode = [](const std::string& value) {
    return parse_or_fail("stricthostkeychecking " + value + "\n", {"h", "", 0}).host_key_checking;
  };
  EXPECT_EQ(mode("false"), HostKeyChecking::no);
  EXPECT_EQ(mode("ask"), HostKeyChecking::ask);
  EXPECT_EQ(mode("yes"), HostKeyChecking::yes);
  EXPECT_EQ(mode("accept-new"), HostKeyChecking::accept_new);
}

TEST(SshGOutput, BadPortIsAProblem) {
  Result<SshHostConfig> config = parse_ssh_g_output("port 99999\n", {"h", "", 0}, test_locals());
  EXPECT_FALSE(config);
  const std::string& message = config.status().message();
  EXPECT_NE(message.find("99999"), std::string::npos) << message;
}

// What expand_ssh_tokens gave, or why it gave nothing.
std::string expanded(const Result<std::string>& text) {
  return text ? *text : "(not expanded: " + text.status().message() + ")";
}

TEST(SshTokens, ExpandsEveryTokenOpenSshAllowsInIdentityFile) {
  SshHostConfig config = node_config();
  EXPECT_EQ(
      expanded(expand_ssh_tokens("~/k/%d|%h|%i|%k|%L|%l|%n|%p|%r|%u|%%", config, test_locals())),
      "/home/me/k//home/me|node.example.org|1000|node.example.org|laptop|"
      "laptop.example.org|node|2200|bob|me|%");
  setenv("RUNNER_TEST_KEYS", "/srv/keys", 1);
  EXPECT_EQ(expanded(expand_ssh_tokens("${RUNNER_TEST_KEYS}/id", config, test_locals())),
            "/srv/keys/id");
  Result<std::string> unknown = expand_ssh_tokens("%Z", config, test_locals());
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.status().message().find("%Z"), std::string::npos);
  Result<std::string> unset =
      expand_ssh_tokens("${RUNNER_TEST_NOT_SET_ANYWHERE}", config, test_locals());
  ASSERT_FALSE(unset);
  EXPECT_NE(unset.status().message().find("RUNNER_TEST_NOT_SET_ANYWHERE"), std::string::npos);
}

TEST(SshTokens, ACommandTakesOnlyTheTokensOpenSshAllowsInProxyCommand) {
  SshHostConfig config = node_config();
  // ~ and ${VAR} are left to the command's shell.
  EXPECT_EQ(expanded(expand_ssh_tokens("~/bin/relay %h:%p %r %n ${HOME} 100%%", config,
                                       test_locals(), SshExpansion::command)),
            "~/bin/relay node.example.org:2200 bob node ${HOME} 100%");
  for (const char* token : {"%d", "%u", "%l", "%k", "%Z"}) {
    Result<std::string> refused = expand_ssh_tokens(std::string("relay ") + token, config,
                                                    test_locals(), SshExpansion::command);
    ASSERT_FALSE(refused) << token;
    EXPECT_NE(refused.status().message().find(token), std::string::npos)
        << refused.status().message();
  }
}

TEST(SshGOutput, ProxyCommandGetsTheFinalHostPortAndUser) {
  SshHostConfig config = parse_or_fail(
      "proxycommand ssh -W %h:%p -l %r bastion # for %n\n"
      "hostname 10.0.0.7\nport 2201\nuser ops\nproxyusefdpass no\n",
      {"gpu-7", "", 0});
  EXPECT_EQ(config.proxy_command, "ssh -W 10.0.0.7:2201 -l ops bastion # for gpu-7");
  EXPECT_FALSE(config.proxy_use_fdpass);
  EXPECT_TRUE(
      parse_or_fail("proxycommand relay\nproxyusefdpass yes\n", {"h", "", 0}).proxy_use_fdpass);
  Result<SshHostConfig> unexpanded =
      parse_ssh_g_output("proxycommand relay %d\n", {"gpu-7", "", 0}, test_locals());
  EXPECT_FALSE(unexpanded);
  const std::string& message = unexpanded.status().message();
  EXPECT_NE(message.find("ProxyCommand"), std::string::npos) << message;
  EXPECT_NE(message.find("%d"), std::string::npos) << message;
}

TEST(JumpHops, ParsesEveryForm) {
  auto hop = [](const std::string& text) {
    std::optional<SshQuery> query = parse_jump_hop(text);
    if (!query) return std::string("invalid");
    return query->user + "|" + query->host + "|" + std::to_string(query->port);
  };
  EXPECT_EQ(hop("bastion"), "|bastion|0");
  EXPECT_EQ(hop("ops@bastion"), "ops|bastion|0");
  EXPECT_EQ(hop("bastion:2200"), "|bastion|2200");
  EXPECT_EQ(hop("ops@bastion:2200"), "ops|bastion|2200");
  EXPECT_EQ(hop("[::1]:2200"), "|::1|2200");
  EXPECT_EQ(hop("ssh://ops@bastion:2200"), "ops|bastion|2200");
  EXPECT_EQ(hop("bastion:notaport"), "invalid");
  EXPECT_EQ(hop("@bastion"), "invalid");
  EXPECT_EQ(hop(""), "invalid");
}

TEST(SshGCommand, PassesTheConfigFileOnlyWhenGiven) {
  SshConfigSource source;
  EXPECT_EQ(ssh_g_arguments(source, {"node", "", 0}),
            (std::vector<std::string>{"ssh", "-G", "--", "node"}));
  source.config_file = "/tmp/cfg";
  source.ssh_program = "/usr/bin/ssh";
  EXPECT_EQ(ssh_g_arguments(source, {"node", "bob", 2222}),
            (std::vector<std::string>{"/usr/bin/ssh", "-G", "-F", "/tmp/cfg", "-l", "bob", "-p",
                                      "2222", "--", "node"}));
}

// A configuration with aliases, patterns, negation, Include and a jump host.
class SshConfigFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir.write("conf.d/10-nodes.conf",
                "Host node-a\n"
                "  Port 2201\n"
                "Host node-b\n"
                "  HostName 127.0.0.2\n");
    m_config = m_dir.write("ssh_config",
                           "# the fleet\n"
                           "Include " +
                               m_dir.file("conf.d") +
                               "/*.conf\n"
                               "Host node-* !node-x\n"
                               "  HostName %h.cluster\n"
                               "  User gpu\n"
                               "  IdentityFile " +
                               m_dir.file("keys") +
                               "/%r-%n\n"
                               "  IdentityFile=" +
                               m_dir.file("keys") +
                               "/shared\n"
                               "  UserKnownHostsFile " +
                               m_dir.file("known_hosts") +
                               "\n"
                               "  StrictHostKeyChecking yes\n"
                               "  ProxyJump ops@bastion:2200\n"
                               "Host node-x\n"
                               "  User other\n"
                               "Match originalhost node-c\n"
                               "  ConnectTimeout 4\n"
                               "Host *\n"
                               "  User fallback\n"
                               "  Port 2299\n"
                               "  ServerAliveInterval 9\n");
  }

  SshConfigSource source(bool builtin) const {
    SshConfigSource source;
    source.config_file = m_config;
    source.ssh_program = builtin ? m_dir.file("no-such-ssh") : "ssh";
    return source;
  }

  TempDir m_dir;
  std::string m_config;
};

void expect_fleet_resolution(SshConfigResolver& resolver, const TempDir& dir) {
  std::vector<Result<SshHostConfig>> answers = resolver.resolve({{"node-a", "", 0},
                                                                  {"node-b", "root", 0},
                                                                  {"node-c", "", 0},
                                                                  {"node-x", "", 0},
                                                                  {"elsewhere", "", 2022}});
  ASSERT_EQ(answers.size(), 5u);
  for (const Result<SshHostConfig>& answer : answers) {
    ASSERT_TRUE(answer) << answer.status().message();
  }

  const SshHostConfig& a = *answers[0];
  EXPECT_EQ(a.hostname, "node-a.cluster");
  EXPECT_EQ(a.user, "gpu");
  EXPECT_EQ(a.port, 2201) << "the Include comes first, and the first value wins";
  EXPECT_EQ(a.identity_files, (std::vector<std::string>{dir.file("keys") + "/gpu-node-a",
                                                        dir.file("keys") + "/shared"}));
  EXPECT_FALSE(a.default_identity_files);
  EXPECT_EQ(a.user_known_hosts_files, std::vector<std::string>{dir.file("known_hosts")});
  EXPECT_EQ(a.host_key_checking, HostKeyChecking::yes);
  EXPECT_EQ(a.proxy_jump, std::vector<std::string>{"ops@bastion:2200"});
  EXPECT_EQ(a.server_alive_interval, 9);

  const SshHostConfig& b = *answers[1];
  EXPECT_EQ(b.hostname, "127.0.0.2");
  EXPECT_EQ(b.user, "root") << "a user written in hosts.yaml wins, like ssh -l";
  EXPECT_EQ(b.identity_files.front(), dir.file("keys") + "/root-node-b");

  const SshHostConfig& c = *answers[2];
  ASSERT_TRUE(c.connect_timeout);
  EXPECT_EQ(c.connect_timeout->count(), 4);
  EXPECT_EQ(c.port, 2299);

  const SshHostConfig& x = *answers[3];
  EXPECT_EQ(x.user, "other") << "!node-x excludes it from node-*";
  EXPECT_EQ(x.hostname, "node-x");
  EXPECT_TRUE(x.proxy_jump.empty());

  const SshHostConfig& elsewhere = *answers[4];
  EXPECT_EQ(elsewhere.port, 2022) << "a port written in hosts.yaml wins, like ssh -p";
  EXPECT_EQ(elsewhere.user, "fallback");
  EXPECT_TRUE(elsewhere.default_identity_files);
}

TEST_F(SshConfigFiles, SshResolvesAliasesPatternsAndIncludes) {
  if (!have_ssh()) GTEST_SKIP() << "no ssh client";
  SshConfigResolver resolver(source(false));
  expect_fleet_resolution(resolver, m_dir);
  EXPECT_EQ(resolver.note(), "");
}

TEST_F(SshConfigFiles, BuiltinParserAgreesWithSshAndSaysItWasUsed) {
  SshConfigResolver resolver(source(true));
  expect_fleet_resolution(resolver, m_dir);
  EXPECT_NE(resolver.note().find("built-in parser"), std::string::npos) << resolver.note();
  EXPECT_NE(resolver.note().find("no-such-ssh"), std::string::npos) << resolver.note();
}

TEST_F(SshConfigFiles, BrokenConfigurationNamesFileAndLine) {
  std::string broken = m_dir.write("broken_config", "Host x\n  Port 22\n  Porrt 23\n");
  for (bool builtin : {false, true}) {
    if (!builtin && !have_ssh()) continue;
    SshConfigSource config = source(builtin);
    config.config_file = broken;
    if (builtin) {
      // The built-in parser ignores keywords it does not know; a bad port it reports.
      m_dir.write("broken_config", "Host x\n  Port 22x\n");
    }
    SshConfigResolver resolver(config);
    std::vector<Result<SshHostConfig>> answers = resolver.resolve({{"x", "", 0}});
    ASSERT_GE(answers.size(), 1u);
    ASSERT_FALSE(answers[0]) << (builtin ? "builtin" : "ssh");
    EXPECT_EQ(answers[0].status().file(), broken);
    EXPECT_GT(answers[0].status().line(), 0) << answers[0].status().message();
    EXPECT_FALSE(answers[0].status().message().empty());
  }
}

TEST_F(SshConfigFiles, WithoutConfigFileTheBuiltinParserReadsHomeSshConfig) {
  // A fake home directory stands in for ~: the real ~/.ssh is never read.
  TempDir home;
  home.write(".ssh/config", "Host fake-home-alias\n  HostName 10.9.8.7\n  Include extra.conf\n");
  home.write(".ssh/extra.conf", "Port 2345\n");
  SshConfigSource config;
  config.ssh_program = m_dir.file("no-such-ssh");
  config.home = home.path();
  SshConfigResolver resolver(config);
  std::vector<Result<SshHostConfig>> answers = resolver.resolve({{"fake-home-alias", "", 0}});
  ASSERT_GE(answers.size(), 1u);
  ASSERT_TRUE(answers[0]) << answers[0].status().message();
  EXPECT_EQ(answers[0]->hostname, "10.9.8.7");
  EXPECT_EQ(answers[0]->port, 2345) << "Include is relative to ~/.ssh";
  EXPECT_EQ(answers[0]->user_known_hosts_files.front(), home.path() + "/.ssh/known_hosts");
}

TEST_F(SshConfigFiles, ResolvesManyHostsAtOnce) {
  std::vector<SshQuery> queries;
  for (int i = 0; i < 20; ++i) queries.push_back({"node-" + std::to_string(i), "", 0});
  SshConfigResolver resolver(source(!have_ssh()));
  std::vector<Result<SshHostConfig>> answers = resolver.resolve(queries);
  ASSERT_EQ(answers.size(), 20u);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(answers[i]) << answers[i].status().message();
    EXPECT_EQ(answers[i]->hostname, "node-" + std::to_string(i) + ".cluster");
  }
}

}  // namespace
}  // namespace runner

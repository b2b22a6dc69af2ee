// The flags several subcommands share. See subcommand.h.
#include "subcommand.h"

namespace runner {

void set_example(CLI::App& app, const std::string& example) {
  app.footer("Example:\n  " + example);
}

void add_ssh_flags(CLI::App& app, SshOptions& ssh) {
  app.add_option("--ssh-config", ssh.config_file,
                 "OpenSSH client configuration to resolve hosts with, like ssh -F (default "
                 "~/.ssh/config)")
      ->envname(k_ssh_config_env);
  app.add_option("--known-hosts", ssh.known_hosts,
                 "known_hosts file to check host keys against (default: the ssh configuration's, "
                 "~/.ssh/known_hosts)")
      ->envname(k_known_hosts_env);
  app.add_flag("--accept-new-host-keys", ssh.accept_new_host_keys,
               "Add unknown host keys to known_hosts instead of refusing, like "
               "StrictHostKeyChecking accept-new (changed keys are always refused)");
  app.add_option("--identity", ssh.identity_files,
                 "Private key to authenticate with (repeatable; default: ssh-agent, then the ssh "
                 "configuration's IdentityFile, ~/.ssh/id_ed25519, id_ecdsa, id_rsa)");
  app.add_flag("!--no-agent", ssh.use_agent, "Do not use ssh-agent identities");
}

CLI::App* add_campaign_command(CLI::App& app, const std::string& name,
                               const std::string& description, const UserDefaults& defaults,
                               std::string& queue_file, std::string& state_dir) {
  take(defaults.queue_file, queue_file);
  CLI::App* command = app.add_subcommand(name, description);
  command
      ->add_option("-Q,--queue-file", queue_file,
                   "The campaign's queue; its state is beside it (default: queue.yaml)")
      ->envname(k_queue_file_env);
  command->add_option("--state-dir", state_dir,
                      "The campaign's state directory (default: queue.runner/)");
  return command;
}

void take(const std::optional<std::string>& configured, std::string& field) {
  if (configured) field = *configured;
}

void take_ssh(const UserDefaults& defaults, SshOptions& ssh) {
  take(defaults.ssh_config, ssh.config_file);
  take(defaults.known_hosts, ssh.known_hosts);
}

}  // namespace runner

# Sourced by the install tests: checks that ROOT (a DESTDIR, or an unpacked
# .deb) holds runner installed under /usr, and that the binary runs.
# check_installed_files ROOT; sets `failures`.
check_installed_files() {
  local root=$1 file
  for file in usr/bin/runner \
    usr/share/man/man1/runner.1.gz \
    usr/share/bash-completion/completions/runner \
    usr/share/zsh/site-functions/_runner \
    usr/share/fish/vendor_completions.d/runner.fish \
    usr/share/doc/runner/README.md \
    usr/share/doc/runner/docs/nodes.md \
    usr/share/doc/runner/LICENSE \
    usr/share/doc/runner/copyright; do
    if [ -s "$root/$file" ]; then echo "ok: /$file"; else echo "MISSING: /$file"; failures=$((failures + 1)); fi
  done
  local version
  version=$("$root/usr/bin/runner" --version) || { echo "FAILED: runner --version"; failures=$((failures + 1)); }
  echo "runner --version: $version"
  case $version in
    "runner "*libssh2*) ;;
    *) echo "FAILED: --version names runner and libssh2"; failures=$((failures + 1)) ;;
  esac
  if zcat "$root/usr/share/man/man1/runner.1.gz" | grep -q '^\.SS "runner queue"'; then
    echo "ok: the man page has the subcommands"
  else
    echo "FAILED: the man page has no section for runner queue"; failures=$((failures + 1))
  fi
}

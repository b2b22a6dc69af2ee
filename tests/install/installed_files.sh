# Sourced by the install tests: checks that ROOT (a DESTDIR, or an unpacked
# .deb) holds runner installed under /usr, that man finds its pages there,
# and that the binary runs and names its version and commit.
# check_installed_files ROOT; sets `failures`.
check_installed_files() {
  local root=$1 file
  for file in usr/bin/runner \
    usr/share/man/man1/runner.1.gz \
    usr/share/man/man5/runner-hosts.yaml.5.gz \
    usr/share/man/man5/runner-queue.yaml.5.gz \
    usr/share/bash-completion/completions/runner \
    usr/share/zsh/site-functions/_runner \
    usr/share/fish/vendor_completions.d/runner.fish \
    usr/share/doc/runner/README.md \
    usr/share/doc/runner/docs/nodes.md \
    usr/share/doc/runner/LICENSE \
    usr/share/doc/runner/copyright; do
    if [ -s "$root/$file" ]; then echo "ok: /$file"; else echo "MISSING: /$file"; failures=$((failures + 1)); fi
  done
  if compgen -G "$root/usr/share/doc/runner/changelog*.gz" >/dev/null; then
    echo "ok: /usr/share/doc/runner/changelog.gz (or changelog.Debian.gz)"
  else
    echo "MISSING: /usr/share/doc/runner/changelog.gz"; failures=$((failures + 1))
  fi
  local version
  version=$("$root/usr/bin/runner" --version) || { echo "FAILED: runner --version"; failures=$((failures + 1)); }
  echo "runner --version: $version"
  case $version in
    "runner "*" (commit "*libssh2*) ;;
    *) echo "FAILED: --version names runner, its commit and libssh2"; failures=$((failures + 1)) ;;
  esac
  local page found
  for page in runner runner-hosts.yaml runner-queue.yaml; do
    if found=$(man -M "$root/usr/share/man" -w "$page" 2>&1) && [[ $found == "$root"/* ]]; then
      echo "ok: man $page is $found"
    else
      echo "FAILED: man -w $page: $found"; failures=$((failures + 1))
    fi
  done
  if zcat "$root/usr/share/man/man1/runner.1.gz" | grep -Eq '^\.SS "?runner queue"?$'; then
    echo "ok: the man page has the subcommands"
  else
    echo "FAILED: the man page has no section for runner queue"; failures=$((failures + 1))
  fi
}

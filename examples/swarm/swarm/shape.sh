#!/bin/sh
# Shapes this node's network for the benchmark: the interface that holds,
# or leads to, the coordinator's address gets QDISC as its root queueing
# discipline, and the script waits to be stopped. With --remove, the
# interface's root qdisc goes back to its default.
#   sh shape.sh COORDINATOR QDISC...     e.g. ... tbf rate 50mbit burst 32kb latency 50ms
#   sh shape.sh --remove COORDINATOR
# tc needs CAP_NET_ADMIN: as root it runs as it is, otherwise through
# `sudo -n` where sudo is installed (a tc given the capability where not).
set -eu
PATH=$PATH:/usr/sbin:/sbin

tc() {
  if [ "$(id -u)" = 0 ] || ! command -v sudo >/dev/null 2>&1; then
    command tc "$@"
  else
    sudo -n tc "$@"
  fi
}

remove=false
if [ "$1" = --remove ]; then
  remove=true
  shift
fi
coordinator_ip=${1%:*}
shift
dev=$(ip -o addr show to "$coordinator_ip" | awk '{ print $2; exit }')
[ -n "$dev" ] || dev=$(ip -o route get "$coordinator_ip" | sed -n 's/.* dev \([^ ]*\).*/\1/p')

if $remove; then
  tc qdisc del dev "$dev" root
  exit
fi
tc qdisc replace dev "$dev" root "$@"
echo "shaping $dev: $(tc qdisc show dev "$dev" | awk 'NR == 1 { $1 = $1; print }')"
exec sleep infinity

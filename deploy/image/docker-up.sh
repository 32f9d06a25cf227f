#!/usr/bin/env bash
# Makes sure a Docker engine answers (as root): installs Debian's docker.io when missing and starts
# dockerd the way this kind of machine allows it: host networking only (no bridge, no iptables),
# overlay2. An engine that already answers (systemd's, a developer's) is used as it is.
# Prints nothing when the engine was already up; exits non-zero with what to do when it cannot.
set -euo pipefail
DOCKER=/usr/bin/docker
if [ -x "$DOCKER" ] && "$DOCKER" info >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "docker-up: no Docker engine answers and this is not root; start one (or run as root)." >&2
  exit 1
fi
if ! command -v dockerd >/dev/null 2>&1 || [ ! -x "$DOCKER" ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi
log=/var/log/vtl-dockerd.log
# setsid + nohup: the engine outlives this script (and the npm process that ran it).
setsid nohup dockerd --storage-driver=overlay2 --iptables=false --ip6tables=false --bridge=none \
  >"$log" 2>&1 </dev/null &
for _ in $(seq 1 150); do
  if "$DOCKER" info >/dev/null 2>&1; then
    echo "docker-up: dockerd started (log: $log)" >&2
    exit 0
  fi
  sleep 0.2
done
echo "docker-up: dockerd did not answer within 30 s; see $log" >&2
exit 1

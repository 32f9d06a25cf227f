#!/usr/bin/env bash
# Starts the single-node appliance with its built-in defaults, installing what is missing first:
# etcd from Debian packages, the Node LTS the project runs on (scripts/node-lts.sh), npm
# dependencies and the build (of what changed only: scripts/build-changed.mjs). Its stdout is the
# appliance's log, one JSON object per line when it is not a terminal: what installs go on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v etcd >/dev/null 2>&1; then
  echo "etcd is not on PATH: installing Debian's etcd-server" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq etcd-server >/dev/null
fi
# The appliance runs on the Node LTS the image ships (docs/deploy.md, "Node"), as the tests do;
# the machine's own Node only fetches it.
PATH="$(bash scripts/node-lts.sh):$PATH"
# By content, not mtime (scripts/deps-current.mjs): a rebase touching the lock file must not
# reinstall under other runs of this tree.
if ! node scripts/deps-current.mjs; then
  npm ci --no-audit --no-fund >&2
fi
node scripts/build-changed.mjs
# exec: the appliance takes this shell's place, so the SIGTERM npm forwards (or a service manager
# sends) reaches it directly (docs/systemd.md).
exec node appliance/dist/main.js

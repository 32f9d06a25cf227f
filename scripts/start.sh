#!/usr/bin/env bash
# Starts the single-node appliance with its built-in defaults, installing what is missing first:
# npm dependencies, the build, and etcd from Debian packages.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v etcd >/dev/null 2>&1; then
  echo "etcd is not on PATH: installing Debian's etcd-server" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq etcd-server >/dev/null
fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run build --silent
# exec: the appliance takes this shell's place, so the SIGTERM npm forwards (or a service manager
# sends) reaches it directly (docs/systemd.md).
exec node appliance/dist/main.js

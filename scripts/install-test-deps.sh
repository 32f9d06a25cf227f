#!/usr/bin/env bash
# Installs the Debian packages the tests drive for real: etcd, and libiscsi's initiator tools.
set -euo pipefail
packages=(etcd-server etcd-client libiscsi-bin libiscsi7)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

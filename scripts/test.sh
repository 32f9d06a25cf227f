#!/usr/bin/env bash
# `npm test`: what a fresh clone needs to run every test, then the tests. The Debian packages the
# tests drive for real (scripts/install-test-deps.sh, as `npm start` installs etcd), the Node LTS
# the project runs on (scripts/node-lts.sh), the npm dependencies when they are not what the
# lock file pins, then lint, build and vitest, all on that Node.
# Arguments go to vitest: `npm test -- e2e/src/restart.test.ts`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-test-deps.sh
# Everything below runs on the Node LTS the image ships (docs/deploy.md, "Node"): the machine's
# own Node only fetches it.
PATH="$(bash scripts/node-lts.sh):$PATH"
# By content, not mtime (scripts/deps-current.mjs): a rebase touching the lock file must not
# reinstall under other runs of this tree.
if ! node scripts/deps-current.mjs; then
  npm ci --no-audit --no-fund
fi
# The whole suite with a Docker engine up (.ci/run starts one): the image tests' slow cached
# steps (deploy/image/build.sh --cache-only: the Debian base rootfs, minutes when cold, and the
# production dependencies) run beside lint, build and the first tests; the image tests wait for
# them (flock) instead of making them again. Its own process group, ended with this script.
prebuild=
if [ $# -eq 0 ] && [ "$(id -u)" = 0 ] && docker info >/dev/null 2>&1; then
  setsid bash deploy/image/build.sh --cache-only >"${TMPDIR:-/tmp}/vtl-image-cache.log" 2>&1 &
  prebuild=$!
fi
trap '[ -z "$prebuild" ] || kill -- "-$prebuild" 2>/dev/null || true' EXIT
npm run lint
npm run build
npx vitest run "$@"

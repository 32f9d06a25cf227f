#!/usr/bin/env bash
# `npm test`: what a fresh clone needs to run every test, then the tests. The Debian packages the
# tests drive for real (scripts/install-test-deps.sh, as `npm start` installs etcd), the npm
# dependencies when missing or older than the lock file, then lint, build and vitest (on the
# Node LTS of scripts/node-lts.sh).
# Arguments go to vitest: `npm test -- e2e/src/restart.test.ts`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-test-deps.sh
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run lint
npm run build
# The tests run on the Node LTS the image ships (docs/deploy.md, "Node"); installing and building
# above use the machine's Node, whose N-API modules load on both.
lts=$(bash scripts/node-lts.sh)
PATH="$lts:$PATH" exec npx vitest run "$@"

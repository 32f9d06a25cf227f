#!/usr/bin/env bash
# `npm test`: what a fresh clone needs to run every test, then the tests. The Debian packages the
# tests drive for real (scripts/install-test-deps.sh, as `npm start` installs etcd), the Node LTS
# the project runs on (scripts/node-lts.sh), the npm dependencies when missing or older than the
# lock file, then lint, build and vitest, all on that Node.
# Arguments go to vitest: `npm test -- e2e/src/restart.test.ts`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-test-deps.sh
# Everything below runs on the Node LTS the image ships (docs/deploy.md, "Node"): the machine's
# own Node only fetches it.
PATH="$(bash scripts/node-lts.sh):$PATH"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run lint
npm run build
exec npx vitest run "$@"

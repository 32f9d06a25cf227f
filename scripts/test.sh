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
npm run lint
npm run build
exec npx vitest run "$@"

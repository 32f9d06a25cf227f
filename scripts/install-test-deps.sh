#!/usr/bin/env bash
# Installs the Debian packages the tests drive for real (run by `npm test` first; as root, or it
# names what is missing and how to install it): etcd, and libiscsi's initiator tools.
# qemu-system-x86 boots the Linux guest of e2e/src/linux-guest.test.ts (its kernel and tools
# are fetched with apt-get download by scripts/build-guest.sh, not installed here).
# Ceph (mon, osd, radosgw) is the real S3 of offsite/src/testing/rgw.ts; zstd and curl run the
# shell pipeline that `npm run bench:offsite` compares the offsite engine with.
set -euo pipefail
packages=(etcd-server etcd-client libiscsi-bin libiscsi7 qemu-system-x86)
packages+=(ceph-mon ceph-osd radosgw ceph-common uuid-runtime zstd curl iproute2)
# What building LTFS for e2e/src/ltfs-guest.test.ts takes (../shared/peers/build-ltfs.sh installs
# them too when missing); its programs and their libraries then go into the guest.
packages+=(autoconf automake libtool pkg-config make gcc libfuse-dev libxml2-dev libicu-dev uuid-dev uthash-dev)
# The chart's render tests (crds/src/chart-render.test.ts) build charts/render from Debian's Go
# and its template, YAML and JSON-schema libraries; the image tests build the image
# (deploy/image/build.sh: mmdebstrap) and run it in Debian's Docker (deploy/image/docker-up.sh).
packages+=(golang-go golang-github-masterminds-sprig-dev golang-gopkg-yaml.v3-dev golang-github-xeipuuv-gojsonschema-dev)
packages+=(docker.io mmdebstrap)
# The FC guest tests run Node from the npm registry in the QEMU guest; it needs libatomic (not in
# the guest image), copied from the host. vtl-tcmu is built static with the kernel UAPI headers.
packages+=(libatomic1 linux-libc-dev)
# Debian's Chromium is the browser of e2e/src/console.test.ts (driven by playwright-core).
packages+=(chromium chromium-driver)
# `npm run bench:emulator` compares the emulator with tgt's tape emulation, with fio's
# O_DIRECT I/O on the same disk (the disk's limit) and with bare loopback TCP, a C program it
# compiles (emulator/bench/loopback.c: the transport's limit).
packages+=(tgt fio build-essential)
# Shared storage (docs/storage.md) is btrfs over loop devices in the tests: btrfs-progs makes and
# grows it, compsize reads its figures, duperemove runs the dedup pass.
packages+=(btrfs-progs btrfs-compsize duperemove)
# kubectl builds the CRD directories with `kubectl kustomize` (crds/src/kustomize.test.ts):
# Debian's kubernetes-client, unless a kubectl is installed already (its file would clash).
command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)
# The Git source's credentials are checked by real authenticating servers
# (controller/src/gitops/testing/git-servers.ts): lighttpd (Basic auth) in front of git's
# git-http-backend, and OpenSSH's sshd started by the test on its own port.
packages+=(lighttpd openssh-server)
# promtool (Debian's prometheus package) lints a real scrape (e2e/src/metrics-and-system.test.ts)
# and the chart's alerting rules (crds/src/chart-alerts.test.ts).
packages+=(prometheus)
missing=()
if ! command -v dpkg >/dev/null 2>&1; then
  echo "scripts/install-test-deps.sh: no dpkg here; install the equivalents of these Debian packages yourself: ${packages[*]}" >&2
  exit 0
fi
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "The tests need these Debian packages, which are not installed: ${missing[*]}" >&2
    echo "Install them as root, then run the tests again:" >&2
    echo "  sudo bash scripts/install-test-deps.sh" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

#!/usr/bin/env bash
# Builds vtl-tcmu, the TCMU handler's front end (emulator/src/tcmu/native/vtl-tcmu.c, docs/fc.md),
# as one static binary: it runs where the kernel's target core is (an appliance node, the guest
# tests' QEMU guest, the image) whatever C library is there. Needs gcc and the kernel's UAPI
# headers (Debian: gcc, linux-libc-dev).
#
# Usage: scripts/build-vtl-tcmu.sh OUTPUT
set -euo pipefail
out=${1:?usage: build-vtl-tcmu.sh OUTPUT}
src=$(cd "$(dirname "$0")/.." && pwd)/emulator/src/tcmu/native/vtl-tcmu.c
mkdir -p "$(dirname "$out")"
gcc -O2 -Wall -Wextra -Wno-format-truncation -static -o "$out.tmp" "$src"
mv "$out.tmp" "$out"

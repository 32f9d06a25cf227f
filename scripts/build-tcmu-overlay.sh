#!/usr/bin/env bash
# Builds what the Fibre Channel guest test adds to the Linux guest (scripts/build-guest.sh):
# the Linux target core's modules from the same Debian cloud kernel package (target_core_mod,
# target_core_user, tcm_loop, iscsi_target_mod, uio, configfs) with a modules.dep covering
# the whole kernel, and the TCMU handler front end (emulator/src/tcmu/native/vtl-tcmu.c)
# built statically with gcc. Cached by kernel version and the inputs' hashes.
#
# Usage: scripts/build-tcmu-overlay.sh GUEST_IMAGE_DIR [CACHE_DIR]
# Prints the overlay directory (a root tree to append to the initramfs) as its last line.
set -euo pipefail

image=$1
cache_root=${2:-${VTL_TCMU_CACHE:-/var/cache/vtl-guest-tcmu}}
mkdir -p "$cache_root" 2>/dev/null && [ -w "$cache_root" ] || {
  cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/vtl-guest-tcmu"
  mkdir -p "$cache_root"
}
repo=$(cd "$(dirname "$0")/.." && pwd)
source_c=$repo/emulator/src/tcmu/native/vtl-tcmu.c
log() { echo "build-tcmu-overlay: $*" >&2; }

kernel=$(sed -n 's/^\(linux-image-[^=]*\)=\(.*\)$/\1=\2/p' "$image/packages.txt" | head -n 1)
[ -n "$kernel" ] || {
  log "no linux-image package in $image/packages.txt"
  exit 1
}
key=$( (
  echo "$kernel"
  sha256sum "$0" "$source_c" "$repo/scripts/build-vtl-tcmu.sh" | cut -d' ' -f1
) | sha256sum | cut -c1-16)
out=$cache_root/$key
if [ -f "$out/ready" ]; then
  log "cached: $out"
  echo "$out"
  exit 0
fi

work=$(mktemp -d "$cache_root/.build-XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download -qq "$kernel" busybox-static >&2)
mkdir -p "$work/src" "$work/root"
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/src"; done
kver=${kernel%%=*}
kver=${kver#linux-image-}
busybox=$work/src/bin/busybox
"$busybox" depmod -b "$work/src" "$kver"
moddir=lib/modules/$kver
for m in target_core_mod target_core_user tcm_loop iscsi_target_mod uio configfs; do
  line=$(grep -E "(^|/)$m\.ko:" "$work/src/$moddir/modules.dep") || {
    log "module $m not in $kernel"
    exit 1
  }
  for f in ${line%%:*} ${line#*:}; do
    mkdir -p "$work/root/$moddir/$(dirname "$f")"
    cp "$work/src/$moddir/$f" "$work/root/$moddir/$f"
  done
done
# The whole kernel's modules.dep: the base image's modules and these resolve alike.
cp "$work/src/$moddir/modules.dep" "$work/src/$moddir/modules.builtin" "$work/root/$moddir/"
bash "$repo/scripts/build-vtl-tcmu.sh" "$work/root/usr/sbin/vtl-tcmu"
touch "$work/root/ready"
rm -rf "$out"
mv "$work/root" "$out"
for old in "$cache_root"/*; do
  if [[ $(basename "$old") =~ ^[0-9a-f]{16}$ && $old != "$out" ]]; then rm -rf "$old"; fi
done
log "built $out"
echo "$out"

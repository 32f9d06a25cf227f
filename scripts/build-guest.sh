#!/usr/bin/env bash
# Builds the Linux guest the host-tier e2e test boots under QEMU: a Debian cloud kernel and an
# initramfs holding busybox, open-iscsi, mtx, mt-st, sg3-utils, lsscsi, GNU tar and stenc (with their
# shared libraries), all from Debian packages fetched with `apt-get download` (nothing is
# installed on the host). The result lands in a cache directory keyed by the package versions
# and this script's own hash, so a machine builds it once; later runs print the cached path.
#
# Usage: scripts/build-guest.sh [CACHE_DIR]   (default $VTL_GUEST_CACHE or /var/cache/vtl-guest)
# Prints the image directory (holding vmlinuz, initrd.img, packages.txt) as its last line.
set -euo pipefail

cache_root=${1:-${VTL_GUEST_CACHE:-/var/cache/vtl-guest}}
if ! mkdir -p "$cache_root" 2>/dev/null || [ ! -w "$cache_root" ]; then
  # Not root: a per-user cache instead.
  cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/vtl-guest"
  mkdir -p "$cache_root"
fi

# The tools the guest runs. The kernel is resolved from the cloud meta-package below.
tools=(busybox-static open-iscsi mtx mt-st sg3-utils lsscsi tar stenc)
# Kernel modules the guest loads (modprobe pulls their dependencies, resolved at build time).
# fuse: LTFS mounts a cartridge through it (the LTFS overlay, scripts/build-ltfs-overlay.sh).
modules=(virtio_pci virtio_net iscsi_tcp st ch sg fuse)

log() { echo "build-guest: $*" >&2; }

candidate_versions() {
  apt-cache show --no-all-versions "$@" 2>/dev/null | awk '/^Package:/ {p=$2} /^Version:/ {print p "=" $2}'
}

kernel_package() {
  apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}'
}

if [ -z "$(kernel_package)" ]; then
  log "apt has no package lists yet: running apt-get update"
  apt-get update -qq >&2
fi
kernel=$(kernel_package)
[ -n "$kernel" ] || {
  log "cannot resolve linux-image-cloud-amd64: is a Debian apt source configured?"
  exit 1
}

# Shared libraries: follow Depends/PreDepends of the tools, keeping only lib* packages (the
# rest, like udev or debconf, are maintainer-script needs, not run-time ones).
# One apt-cache call per level of the dependency tree: each call costs a cache load.
declare -A seen=()
level=("${tools[@]}")
libs=()
while [ ${#level[@]} -gt 0 ]; do
  next=()
  for dep in $(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "${level[@]}" | awk '/Depends:/ && $2 ~ /^lib/ {print $2}' | sort -u); do
    [ -n "${seen[$dep]:-}" ] && continue
    seen[$dep]=1
    libs+=("$dep")
    next+=("$dep")
  done
  level=("${next[@]}")
done

packages=("$kernel" "${tools[@]}" "${libs[@]}")
versions=$(candidate_versions "${packages[@]}" | sort)
key=$( (
  echo "$versions"
  sha256sum "$0" | cut -d' ' -f1
) | sha256sum | cut -c1-16)
out="$cache_root/$key"
if [ -f "$out/ready" ]; then
  log "cached: $out"
  echo "$out"
  exit 0
fi

started=$(date +%s)
work=$(mktemp -d "$cache_root/.build-XXXXXX")
trap 'rm -rf "$work"' EXIT
log "downloading ${#packages[@]} packages: ${packages[*]}"
download() { (cd "$work" && apt-get download -qq "${packages[@]}" >&2); }
if ! download; then
  log "download failed: the package lists may be stale, running apt-get update and retrying"
  apt-get update -qq >&2
  download
fi
mkdir -p "$work/unpacked" "$work/root"
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/unpacked"; done

kver=${kernel#linux-image-}
src=$work/unpacked
root=$work/root
busybox=$src/bin/busybox

# Userland: everything the packages ship except docs, locales, gconv, init/systemd glue.
(cd "$src" && find . \( -path ./boot -o -path ./lib/modules -o -path ./usr/share -o -path ./usr/lib/x86_64-linux-gnu/gconv \
  -o -path ./lib/systemd -o -path ./etc/init.d -o -path ./lib/udev -o -path ./usr/lib/systemd \) -prune -o -print |
  "$busybox" cpio -o -H newc 2>/dev/null) | (cd "$root" && "$busybox" cpio -idm 2>/dev/null)

# Kernel modules: the wanted ones plus their dependencies, per a modules.dep made by busybox.
"$busybox" depmod -b "$src" "$kver"
moddir=lib/modules/$kver
declare -A want=()
resolve() {
  local name=$1 line file
  line=$(grep -E "(^|/)${name//_/[_-]}\.ko:" "$src/$moddir/modules.dep" || true)
  [ -n "$line" ] || {
    grep -qE "(^|/)${name//_/[_-]}\.ko$" "$src/$moddir/modules.builtin" && return 0
    log "module $name is neither a module nor built in"
    exit 1
  }
  file=${line%%:*}
  [ -n "${want[$file]:-}" ] && return 0
  want[$file]=1
  for dep in ${line#*:}; do resolve "$(basename "$dep" .ko)"; done
}
for m in "${modules[@]}"; do resolve "$m"; done
for f in "${!want[@]}"; do
  mkdir -p "$root/$moddir/$(dirname "$f")"
  cp "$src/$moddir/$f" "$root/$moddir/$f"
done
cp "$src/$moddir/modules.builtin" "$root/$moddir/"
"$busybox" depmod -b "$root" "$kver"

mkdir -p "$root"/{dev,proc,sys,run,tmp,var/lib/iscsi,var/lock,etc/iscsi}
echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"
# /init: the fixed part of the guest's boot. The test's own steps arrive as /test.sh in a
# second cpio archive the runner appends to this initramfs.
cat >"$root/init" <<EOF
#!/bin/busybox sh
# Busybox applets go last on PATH: the packaged tar, lsscsi and mt-st win over its own.
/bin/busybox mkdir -p /bb
/bin/busybox --install -s /bb
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:/bb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
# Kernel messages would split the result lines the host parses off the console.
dmesg -n 1
for m in ${modules[*]}; do modprobe \$m || echo "RESULT boot fail modprobe \$m"; done
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
if [ -f /test.sh ]; then sh /test.sh; else echo "RESULT boot fail no /test.sh in the initramfs"; fi
echo "GUEST-DONE"
sync
poweroff -f
EOF
chmod +x "$root/init"

mkdir -p "$work/image"
cp "$src/boot/vmlinuz-$kver" "$work/image/vmlinuz"
(cd "$root" && find . | "$busybox" cpio -o -H newc 2>/dev/null) | gzip -1 >"$work/image/initrd.img"
for deb in "$work"/*.deb; do echo "$(dpkg-deb -f "$deb" Package)=$(dpkg-deb -f "$deb" Version)"; done |
  sort >"$work/image/packages.txt"
touch "$work/image/ready"
rm -rf "$out"
mv "$work/image" "$out"
# Earlier builds (other package versions) are not needed any more.
for old in "$cache_root"/*; do
  if [[ $(basename "$old") =~ ^[0-9a-f]{16}$ && $old != "$out" ]]; then rm -rf "$old"; fi
done
log "built $out in $(($(date +%s) - started)) s ($(du -sh "$out" | cut -f1))"
echo "$out"

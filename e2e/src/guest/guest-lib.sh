# The helpers of every guest session (busybox sh), first in the guest's /test.sh after the
# parameters guest-script.ts puts in front: every step prints one `RESULT <step> ok|fail <detail>`
# line for the host to assert; `LOG <step> <line>` lines carry tool output for failure messages.
set -u
# Busybox sh runs its own applets before anything on PATH: name the packaged tools by path.
tar=/bin/tar
lsscsi=/usr/bin/lsscsi
START1=-1 START2=-1 START3=-1 START4=-1 END=-1

ok() { echo "RESULT $1 ok ${2:-}"; }
fail() { echo "RESULT $1 fail ${2:-}"; }
log() {
  step=$1
  shift
  printf '%s\n' "$@" | while IFS= read -r line; do echo "LOG $step $line"; done
}
oneline() { tr '\n' ' ' | sed 's/  */ /g; s/ $//'; }
# Polls a command for up to $1 seconds (the guest's own clock: emulation makes it slow).
wait_until() {
  n=$(($1 * 5))
  shift
  while [ $n -gt 0 ]; do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
    n=$((n - 1))
  done
  return 1
}
# Runs a tool for a step: fail with its output (and return 1) when it exits non-zero.
step_run() {
  step=$1
  shift
  out=$("$@" 2>&1)
  rc=$?
  if [ $rc -ne 0 ]; then
    log "$step" "$* => exit $rc" "$out"
    fail "$step" "$* failed: $(echo "$out" | tail -n 2 | oneline)"
    return 1
  fi
  return 0
}
tell() { mt-st -f "$TAPE" tell 2>&1 | sed -n 's/^At block \([0-9]*\)\..*/\1/p'; }
# Compares a restored archive with what was written, file by file (md5 of every file).
same_files() { (cd "$1/set$2" && md5sum -c -s "/tmp/set$2.md5"); }
# "slot=barcode,..." of the full storage slots, as `mtx status` lists them.
slot_tags() {
  echo "$1" | sed -n 's/^ *Storage Element \([0-9]*\):Full *:VolumeTag=\([^ ]*\).*/\1=\2/p' | tr '\n' ',' | sed 's/,$//'
}


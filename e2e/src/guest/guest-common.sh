# The start of every guest session, run by the guest's /init as /test.sh (busybox sh):
# guest-script.ts puts the parameters in front (IQN, PORTAL, DRIVE_SERIAL, NUM_DRIVES, CHAP_USER,
# CHAP_SECRET, CHAP_TARGET_USER, CHAP_TARGET_SECRET (empty: no CHAP), and what the steps after
# this need), then this, then the steps (guest-steps.sh, ltfs-steps.sh). Every step prints one
# `RESULT <step> ok|fail <detail>` line for the host to assert; `LOG <step> <line>` lines carry
# tool output for failure messages. This part logs in and finds the changer (CH) and the tape
# drive whose serial is DRIVE_SERIAL (TAPE).
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

# --- login ---------------------------------------------------------------------------------
# LOCAL_FABRIC (the FC tests): the target core runs in this guest; fabric_setup, defined by the
# script placed before this one, builds it and the devices appear without an iSCSI login.
if [ -n "${LOCAL_FABRIC:-}" ]; then
fabric_setup || exit 0
else
# What the package's maintainer scripts and systemd units would have prepared.
mkdir -p /run/lock/iscsi /etc/iscsi/nodes /etc/iscsi/send_targets /etc/iscsi/ifaces
echo "InitiatorName=$IQN" >/etc/iscsi/initiatorname.iscsi
step_run iscsid iscsid || exit 0
# Values below go through word splitting: CHAP names and secrets hold no spaces (the API refuses them).
dauth() { iscsiadm -m discoverydb -t sendtargets -p "$PORTAL" -o update -n "discovery.sendtargets.auth.$1" -v "$2"; }
if [ -n "$CHAP_USER" ]; then
  # The target asks a discovery session for the same CHAP as a normal one.
  step_run discovery iscsiadm -m discoverydb -t sendtargets -p "$PORTAL" -o new || exit 0
  for kv in "authmethod CHAP" "username $CHAP_USER" "password $CHAP_SECRET" \
    "username_in $CHAP_TARGET_USER" "password_in $CHAP_TARGET_SECRET"; do
    step_run discovery dauth $kv || exit 0
  done
  disc=$(iscsiadm -m discoverydb -t sendtargets -p "$PORTAL" --discover 2>&1)
else
  disc=$(iscsiadm -m discovery -t sendtargets -p "$PORTAL" -o nonpersistent 2>&1)
fi
TARGET=$(echo "$disc" | awk '/iqn\./ {print $2; exit}')
if [ -z "$TARGET" ]; then
  log discovery "$disc"
  fail discovery "no target in: $(echo "$disc" | oneline)"
  exit 0
fi
ok discovery "$TARGET"
# Discovery answers with the target's own portal (the host's loopback): log in through ours.
step_run login iscsiadm -m node -o new -T "$TARGET" -p "$PORTAL" || exit 0
nauth() { iscsiadm -m node -T "$TARGET" -p "$PORTAL" -o update -n "node.session.auth.$1" -v "$2"; }
if [ -n "$CHAP_USER" ]; then
  # First a secret the target does not know: the login must be refused.
  for kv in "authmethod CHAP" "username $CHAP_USER" "password Wrong-Chap-Secret-0"; do
    step_run chap-refused nauth $kv || exit 0
  done
  out=$(iscsiadm -m node -T "$TARGET" -p "$PORTAL" --login 2>&1)
  rc=$?
  log chap-refused "exit $rc" "$out"
  if [ $rc -eq 0 ]; then
    fail chap-refused "a login with a wrong CHAP secret got in"
    iscsiadm -m node -T "$TARGET" -p "$PORTAL" --logout >/dev/null 2>&1
  else
    ok chap-refused "exit=$rc"
  fi
  # Then the right one, and mutual CHAP: open-iscsi checks the target's answer too.
  for kv in "password $CHAP_SECRET" "username_in $CHAP_TARGET_USER" "password_in $CHAP_TARGET_SECRET"; do
    step_run login nauth $kv || exit 0
  done
fi
step_run login iscsiadm -m node -T "$TARGET" -p "$PORTAL" --login || exit 0
ok login "$TARGET"
fi

# --- devices -------------------------------------------------------------------------------
tapes() { ls /sys/class/scsi_tape | grep -c '^nst[0-9]*$'; }
if ! wait_until 60 sh -c "[ -e /dev/sch0 ] && [ \$(ls /sys/class/scsi_tape | grep -c '^nst[0-9]*\$') -ge $NUM_DRIVES ]"; then
  log devices "$("$lsscsi" -g 2>&1)"
  fail devices "expected /dev/sch0 and $NUM_DRIVES tapes, have: $("$lsscsi" 2>&1 | oneline)"
  exit 0
fi
log devices "$("$lsscsi" -g 2>&1)"
CH=
for d in /sys/class/scsi_generic/sg*; do
  [ "$(cat "$d/device/type")" = 8 ] && CH=/dev/${d##*/}
done
TAPE=
for d in /sys/class/scsi_tape/nst*; do
  case ${d##*/} in nst[0-9] | nst[0-9][0-9]) ;; *) continue ;; esac
  sg=$(ls "$d/device/scsi_generic")
  serial=$(sg_vpd -p sn "/dev/$sg" 2>/dev/null | sed -n 's/.*Unit serial number: *//p')
  [ "$serial" = "$DRIVE_SERIAL" ] && TAPE=/dev/${d##*/}
done
if [ -z "$CH" ] || [ -z "$TAPE" ]; then
  fail devices "changer sg '$CH', tape with serial $DRIVE_SERIAL '$TAPE'"
  exit 0
fi
ok devices "changer=$CH sch=/dev/sch0 tape=$TAPE tapes=$(tapes)"


# The start of every guest session, run by the guest's /init as /test.sh (busybox sh):
# guest-script.ts puts the parameters in front (IQN, PORTAL, DRIVE_SERIAL, NUM_DRIVES, CHAP_USER,
# CHAP_SECRET, CHAP_TARGET_USER, CHAP_TARGET_SECRET (empty: no CHAP), and what the steps after
# this need), guest-lib.sh, then this, then the steps (guest-steps.sh, ltfs-steps.sh). This part
# logs in and finds the changer (CH) and the tape drive whose serial is DRIVE_SERIAL (TAPE).
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


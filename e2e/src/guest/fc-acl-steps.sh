# The FC ACL rules on a real target core (after guest-lib.sh and fc-setup.sh): LIO's iscsi fabric
# has the same TPG, node ACL and mapped-LUN semantics as qla2xxx, so the nodeagent's own driver
# (Node in the guest, /opt/vtl/lio-apply.mjs) builds the target with hard-deny node ACLs, and this
# guest's open-iscsi logs in through three interfaces with three initiator names: one registered
# for every library (ALL), one for library A only (SCOPED), one not registered (STRANGER).
# Commands then go LIO -> TCMU -> vtl-tcmu -> the emulator on the host. Last, the emulator is
# killed during a write (the host test kills it when it reads VTL-KILL-EMULATOR).
# Parameters: TCMU_ENDPOINT, ITARGET, LPORTAL, IQN_ALL, IQN_SCOPED, IQN_STRANGER, REQ_APPLY,
# REQ_SCOPE (the scope change), REQ_OBSERVE (driver requests, JSON), SLOT_A (a full slot of A).
session_of() { # initiator name -> iscsi_session sysfs name ('' when not logged in)
  for s in /sys/class/iscsi_session/session*; do
    [ -e "$s/initiatorname" ] && [ "$(cat "$s/initiatorname")" = "$1" ] && echo "${s##*/}" && return
  done
}
# "lun:type,..." of the SCSI devices of an initiator's session (type 1 tape, 8 changer).
luns_of() {
  s=$(session_of "$1")
  [ -n "$s" ] || { echo none; return; }
  for d in /sys/class/iscsi_session/"$s"/device/target*/*:*:*:*; do
    [ -e "$d/type" ] && echo "${d##*:}:$(cat "$d/type")"
  done | sort -n | tr '\n' ',' | sed 's/,$//'
}
dev_of() { # initiator, type -> the device directory of its first device of that type
  s=$(session_of "$1")
  for d in /sys/class/iscsi_session/"$s"/device/target*/*:*:*:*; do
    [ -e "$d/type" ] && [ "$(cat "$d/type")" = "$2" ] && echo "$d" && return
  done
}
# Logs in through an interface (its own initiator name); iscsiadm's exit status. The node record
# is made right before: open-iscsi keeps one record per target and portal here.
login_as() {
  iscsiadm -m node -o new -T "$ITARGET" -p "$LPORTAL" -I "$1" >/dev/null 2>&1
  iscsiadm -m node -T "$ITARGET" -p "$LPORTAL" -I "$1" --login >/tmp/login-"$1".out 2>&1
}
logout_of() { # initiator name
  s=$(session_of "$1")
  [ -n "$s" ] && iscsiadm -m session -r "${s#session}" -u
}
count_of() { [ "$1" = none ] && echo 0 || echo "$1" | tr ',' '\n' | grep -c .; }
wait_luns() { # initiator, count
  wait_until 60 sh -c "[ \$(ls -d /sys/class/iscsi_session/$(session_of "$1")/device/target*/*:*:*:*/type 2>/dev/null | wc -l) -ge $2 ]"
}

# --- the target, built by the nodeagent's driver ---------------------------------------------
tcmu_core_setup iscsi_target_mod || exit 0
ok fabric "handler=$HANDLER_PID"
lio_apply acl-apply "$REQ_APPLY" || exit 0
TPG=$CFS/iscsi/$ITARGET/tpgt_1
ok acl-apply "generate_node_acls=$(cat "$TPG/attrib/generate_node_acls") enable=$(cat "$TPG/enable") acls=$(ls "$TPG/acls" | oneline) $LIO"

# --- three initiators log in -----------------------------------------------------------------
mkdir -p /run/lock/iscsi /etc/iscsi/nodes /etc/iscsi/send_targets /etc/iscsi/ifaces
echo "InitiatorName=$IQN_ALL" >/etc/iscsi/initiatorname.iscsi
step_run acl-login iscsid || exit 0
for h in all:"$IQN_ALL" scoped:"$IQN_SCOPED" stranger:"$IQN_STRANGER"; do
  step_run acl-login iscsiadm -m iface -I "${h%%:*}" -o new &&
    step_run acl-login iscsiadm -m iface -I "${h%%:*}" -o update -n iface.initiatorname -v "${h#*:}" || exit 0
done
login_as all
rc_all=$?
login_as scoped
rc_scoped=$?
login_as stranger
rc_stranger=$?
log acl-login "$(cat /tmp/login-*.out)"
ok acl-login "all=$rc_all scoped=$rc_scoped stranger=$rc_stranger"
wait_luns "$IQN_ALL" 4
wait_luns "$IQN_SCOPED" 2
log acl-luns "$("$lsscsi" -t 2>&1)"
ok acl-luns "all=$(luns_of "$IQN_ALL") scoped=$(luns_of "$IQN_SCOPED") stranger=$(luns_of "$IQN_STRANGER")"
lio_apply acl-observe "$REQ_OBSERVE" && ok acl-observe "$LIO"

# --- commands through the scoped host reach the emulator's devices ----------------------------
CH_DEV=$(dev_of "$IQN_SCOPED" 8)
TAPE_DEV=$(dev_of "$IQN_SCOPED" 1)
if [ -z "$CH_DEV" ] || [ -z "$TAPE_DEV" ]; then
  fail acl-io "the scoped host has no changer or tape: $(luns_of "$IQN_SCOPED")"
else
  SCH=/dev/$(ls "$CH_DEV/scsi_generic")
  STAPE=/dev/$(ls "$TAPE_DEV/scsi_tape" | grep '^nst[0-9]*$')
  head -c $((16 * 65536)) /dev/urandom >/tmp/adata
  if step_run acl-io sg_inq "$SCH"; then
    product=$(echo "$out" | sed -n 's/^ *Product identification: *//p' | oneline)
    if step_run acl-io mtx -f "$SCH" load "$SLOT_A" 0 && wait_until 60 mt-st -f "$STAPE" status &&
      step_run acl-io mt-st -f "$STAPE" rewind && step_run acl-io dd if=/tmp/adata of="$STAPE" bs=65536 &&
      step_run acl-io mt-st -f "$STAPE" rewind && step_run acl-io dd if="$STAPE" of=/tmp/aback bs=65536 count=16; then
      cmp -s /tmp/adata /tmp/aback && same=same || same=differs
      ok acl-io "changer=$product blocks=16 read-back=$same"
    fi
    mt-st -f "$STAPE" offline >/dev/null 2>&1
    mtx -f "$SCH" unload "$SLOT_A" 0 >/dev/null 2>&1
  fi
fi

# --- a scope change: the scoped host moves to library B; only its session bounces -------------
if lio_apply scope-change "$REQ_SCOPE"; then
  ok scope-change "$LIO"
  # open-iscsi logs in again by itself; a new login then scans the new LUN map.
  sleep 2
  step_run scope-relogin logout_of "$IQN_SCOPED"
  login_as scoped
  rc=$?
  wait_luns "$IQN_SCOPED" 2
  log scope-relogin "$(cat /tmp/login-scoped.out)" "$("$lsscsi" -t 2>&1)"
  ok scope-relogin "login=$rc all=$(luns_of "$IQN_ALL") scoped=$(luns_of "$IQN_SCOPED")"
  lio_apply scope-observe "$REQ_OBSERVE" && ok scope-observe "$LIO"
fi

# --- the emulator killed during a write -------------------------------------------------------
# Through the host registered for everything, on library A's drive: the host test kills the
# emulator when it reads the marker; commands in flight fail (no kernel hang), the nodeagent
# starts the emulator again, the handler reconnects, and every acknowledged block reads back.
# The drive runs unbuffered for it (`drvbuffer 0`): in buffered mode, the default, a WRITE's
# GOOD comes once its block has its place on the tape, before its bytes reach the image, and
# only WRITE FILEMARKS, REWIND and UNLOAD make data durable (README, "Backup hosts"), so a
# block acknowledged just before the kill may rightly be lost; a CI run under load found one.
ECH=/dev/$(ls "$(dev_of "$IQN_ALL" 8)/scsi_generic")
ETAPE=/dev/$(ls "$(dev_of "$IQN_ALL" 1)/scsi_tape" | grep '^nst[0-9]*$')
head -c $((512 * 65536)) /dev/urandom >/tmp/edata
if step_run emulator-kill mtx -f "$ECH" load "$SLOT_A" 0 && wait_until 60 mt-st -f "$ETAPE" status &&
  step_run emulator-kill mt-st -f "$ETAPE" rewind && step_run emulator-kill mt-st -f "$ETAPE" drvbuffer 0; then
  dd if=/tmp/edata of="$ETAPE" bs=65536 2>/tmp/dd.err &
  dd_pid=$!
  sleep 3
  echo "VTL-KILL-EMULATOR"
  wait $dd_pid
  dd_rc=$?
  acked=$(sed -n 's/^\([0-9]*\)+[0-9]* records out.*/\1/p' /tmp/dd.err | tail -n 1)
  log emulator-kill "dd exit $dd_rc: $(oneline </tmp/dd.err)" "$(tail -n 8 /tmp/vtl-tcmu.log)"
  # The emulator comes back (its journal keeps the cartridge where it was): the drive answers
  # again, maybe after unit attentions, and the host reloads the cartridge if it was unloaded.
  wait_until 120 mt-st -f "$ETAPE" status
  if ! mt-st -f "$ETAPE" status 2>&1 | grep -q ONLINE; then
    mtx -f "$ECH" status >/tmp/mtx.out 2>&1
    log emulator-kill "after the restart: $(oneline </tmp/mtx.out)"
    grep -q 'Data Transfer Element 0:Full' /tmp/mtx.out || mtx -f "$ECH" load "$SLOT_A" 0 >/dev/null 2>&1
    wait_until 60 sh -c "mt-st -f $ETAPE status | grep -q ONLINE"
  fi
  if [ -z "$acked" ]; then
    fail emulator-kill "dd reported no record count"
  elif step_run emulator-kill mt-st -f "$ETAPE" rewind &&
    step_run emulator-kill dd if="$ETAPE" of=/tmp/eback bs=65536 count="$acked"; then
    if [ "$acked" -gt 0 ] && cmp -s -n $((acked * 65536)) /tmp/edata /tmp/eback; then
      # And the host goes on writing after it.
      step_run emulator-kill mt-st -f "$ETAPE" eod && step_run emulator-kill mt-st -f "$ETAPE" weof 1 &&
        ok emulator-kill "dd-exit=$dd_rc acked=$acked of 512 read-back=same"
    else
      fail emulator-kill "the $acked acknowledged blocks did not read back as written"
    fi
  fi
  mt-st -f "$ETAPE" offline >/dev/null 2>&1
  mtx -f "$ECH" unload "$SLOT_A" 0 >/dev/null 2>&1
fi
log handler "$(tail -n 20 /tmp/vtl-tcmu.log)"
logout_of "$IQN_ALL" >/dev/null 2>&1
logout_of "$IQN_SCOPED" >/dev/null 2>&1
sleep 2

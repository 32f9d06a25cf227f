# The Fibre Channel tests' fabric set-up (runs before guest-common.sh, which calls fabric_setup
# instead of an iSCSI login when LOCAL_FABRIC is set). The guest's own Linux target core serves
# the library: TCMU backstores (one per LUN, dev_config naming the emulator's device) behind a
# tcm_loop target, built by the nodeagent's own LIO driver (Node in the guest), so this kernel's
# SCSI layer (st, ch, sg) sees them as it would FC LUNs.
# The handler front end (vtl-tcmu) maps each backstore's ring and forwards the commands to the
# emulator on the host (TCMU_ENDPOINT, forwarded by QEMU). fc-acl-steps.sh uses tcmu_core_setup
# alone. Parameters: TCMU_ENDPOINT, LOOP_WWN (the tcm_loop target), DRIVER_REQUEST (the driver's
# request: the loopback fabric, its nexus and the LUN table).
CFS=/sys/kernel/config/target
HANDLER_PID=
start_handler() {
  /usr/sbin/vtl-tcmu "$TCMU_ENDPOINT" >>/tmp/vtl-tcmu.log 2>&1 &
  HANDLER_PID=$!
}
fabric_fail() {
  log fabric "$(cat /tmp/vtl-tcmu.log 2>/dev/null)" "$(dmesg | tail -n 30)"
  fail fabric "$1"
  return 1
}
# The target core with TCMU and one fabric module ($1), configfs, and the handler running.
tcmu_core_setup() {
  # LIO keeps persistent reservation state under its db_root (/etc/target by default; targetcli's
  # package makes it): without it every PERSISTENT RESERVE OUT fails as "not ready".
  mkdir -p /etc/target/pr
  for m in target_core_user "$1"; do
    modprobe "$m" || { fabric_fail "modprobe $m"; return 1; }
  done
  grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs configfs /sys/kernel/config ||
    { fabric_fail "mount configfs"; return 1; }
  start_handler
}
NODE=/usr/local/bin/node
LIO_APPLY=/opt/vtl/lio-apply.mjs
# Runs the nodeagent's LIO driver (driver-overlay.ts) on a request; LIO holds its JSON line
# (problems, verify, built, acls).
lio_apply() { # step request
  printf '%s' "$2" >/tmp/lio-request.json
  out=$("$NODE" "$LIO_APPLY" /tmp/lio-request.json 2>&1)
  rc=$?
  LIO=$(echo "$out" | sed -n 's/^LIO-APPLY //p')
  if [ $rc -ne 0 ] || [ -z "$LIO" ]; then
    log "$1" "exit $rc" "$out" "$(dmesg | tail -n 20)"
    fail "$1" "the driver failed: $(echo "$out" | tail -n 3 | oneline)"
    return 1
  fi
}
# The loopback fabric as the nodeagent builds it: the driver makes the backstores, the tcm_loop
# target and its nexus (before the LUNs: tcm_loop probes each LUN as it is linked).
fabric_setup() {
  tcmu_core_setup tcm_loop || return 1
  lio_apply fabric "$DRIVER_REQUEST" || return 1
  ok fabric "luns=$(ls "$CFS/loopback/$LOOP_WWN/tpgt_1/lun" | grep -c '^lun_') handler=$HANDLER_PID built=$(echo "$LIO" | sed -n 's/.*"built":\[\([^]]*\)\].*/\1/p')"
}

# The Fibre Channel tests' fabric set-up (runs before guest-common.sh, which calls fabric_setup
# instead of an iSCSI login when LOCAL_FABRIC is set). The guest's own Linux target core serves
# the library: TCMU backstores (one per LUN, dev_config naming the emulator's device) behind a
# tcm_loop target, so this kernel's SCSI layer (st, ch, sg) sees them as it would FC LUNs.
# The handler front end (vtl-tcmu) maps each backstore's ring and forwards the commands to the
# emulator on the host (TCMU_ENDPOINT, forwarded by QEMU). fc-acl-steps.sh uses tcmu_core_setup
# alone (the driver builds its fabric). Parameters: TCMU_ENDPOINT,
# LUNS ("lun,backstore,dev_config ..."), LOOP_WWN (the tcm_loop target), LOOP_NEXUS.
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
fabric_setup() {
  tcmu_core_setup tcm_loop || return 1
  # The nexus (the local SCSI host's I_T nexus) first: tcm_loop probes each LUN as it is linked.
  mkdir -p "$CFS/loopback/$LOOP_WWN/tpgt_1" && echo "$LOOP_NEXUS" >"$CFS/loopback/$LOOP_WWN/tpgt_1/nexus" ||
    { fabric_fail "tcm_loop nexus"; return 1; }
  for entry in $LUNS; do
    lun=${entry%%,*}
    rest=${entry#*,}
    name=${rest%%,*}
    cfg=${rest#*,}
    b=$CFS/core/user_1/$name
    mkdir -p "$b" && echo "dev_config=$cfg" >"$b/control" && echo "dev_size=0" >"$b/control" &&
      echo 1 >"$b/enable" || { fabric_fail "backstore $name"; return 1; }
    d=$CFS/loopback/$LOOP_WWN/tpgt_1/lun/lun_$lun
    mkdir -p "$d" && ln -s "$b" "$d/$name" || { fabric_fail "tcm_loop LUN $lun"; return 1; }
  done
  ok fabric "luns=$(echo $LUNS | wc -w) handler=$HANDLER_PID"
}

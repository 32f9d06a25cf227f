# After guest-steps.sh on the local fabric (fc-setup.sh): the handler front end is killed and
# started again while dd writes to the tape; the host must get an error for what was in flight
# (no kernel hang), every block dd was told is written must read back, and I/O must go on.
# --- handler restart during I/O --------------------------------------------------------------
RESTART_SLOT=${RESTART_SLOT:-3}
head -c $((1024 * 65536)) /dev/urandom >/tmp/rdata
if step_run restart mtx -f "$CH" load "$RESTART_SLOT" 0 && wait_until 60 mt-st -f "$TAPE" status &&
  step_run restart mt-st -f "$TAPE" rewind; then
  dd if=/tmp/rdata of="$TAPE" bs=65536 2>/tmp/dd.err &
  dd_pid=$!
  # Let some blocks land (st allows one open: nothing can ask the drive meanwhile), then kill
  # the handler with commands in its ring.
  sleep 2
  kill -9 "$HANDLER_PID"
  sleep 1
  start_handler
  wait $dd_pid
  dd_rc=$?
  acked=$(sed -n 's/^\([0-9]*\)+[0-9]* records out.*/\1/p' /tmp/dd.err | tail -n 1)
  log restart "dd exit $dd_rc: $(cat /tmp/dd.err | oneline)" "$(cat /tmp/vtl-tcmu.log | tail -n 8)"
  # The host carries on: status, rewind, and every acknowledged block reads back as written.
  if [ -z "$acked" ]; then
    fail restart "dd reported no record count"
  elif step_run restart mt-st -f "$TAPE" rewind &&
    step_run restart dd if="$TAPE" of=/tmp/rback bs=65536 count="$acked"; then
    if [ "$acked" -gt 0 ] && cmp -s -n $((acked * 65536)) /tmp/rdata /tmp/rback; then
      # A new write after recovery lands too.
      if step_run restart mt-st -f "$TAPE" eod && step_run restart mt-st -f "$TAPE" weof 1; then
        ok restart "dd-exit=$dd_rc acked=$acked of 1024 read-back=same"
      fi
    else
      fail restart "the $acked acknowledged blocks did not read back as written"
    fi
  fi
  step_run restart mt-st -f "$TAPE" offline
  step_run restart mtx -f "$CH" unload "$RESTART_SLOT" 0
fi

# --- nodeagent killed during I/O ---------------------------------------------------------------
# The host test kills the appliance's nodeagent (SIGKILL) when it reads the marker below: it is
# not on the data path, so the write goes on untouched and reads back whole.
if step_run agent-restart mtx -f "$CH" load "$RESTART_SLOT" 0 && wait_until 60 mt-st -f "$TAPE" status &&
  step_run agent-restart mt-st -f "$TAPE" rewind; then
  dd if=/tmp/rdata of="$TAPE" bs=65536 count=512 2>/tmp/dd.err &
  dd_pid=$!
  sleep 1
  echo "VTL-KILL-NODEAGENT"
  wait $dd_pid
  dd_rc=$?
  if [ $dd_rc -ne 0 ]; then
    fail agent-restart "dd failed while the nodeagent restarted: $(cat /tmp/dd.err | oneline)"
  elif step_run agent-restart mt-st -f "$TAPE" rewind &&
    step_run agent-restart dd if="$TAPE" of=/tmp/rback bs=65536 count=512 &&
    cmp -s -n $((512 * 65536)) /tmp/rdata /tmp/rback; then
    ok agent-restart "dd-exit=0 blocks=512 read-back=same"
  else
    fail agent-restart "the 512 blocks did not read back as written"
  fi
  mt-st -f "$TAPE" offline
  mtx -f "$CH" unload "$RESTART_SLOT" 0
fi

# --- throughput: the same drive through tcm_loop/TCMU and through the emulator's iSCSI target --
# Software emulation: only the ratio means something. Both paths end in the same emulator drive.
now_cs() { cut -d' ' -f1 /proc/uptime | tr -d .; }
rate() { echo "$((PERF_MB * 1024 * 100 / ($2 - $1 + 1)))"; }
PERF_MB=32
timed_dd() {
  t0=$(now_cs)
  dd "$@" bs=262144 count=$((PERF_MB * 4)) 2>/dev/null || return 1
  t1=$(now_cs)
  echo "$(rate "$t0" "$t1")"
}
perf_path() { # device [a command run before the write, between write and read, and after]
  mark=${2:-true}
  mt-st -f "$1" rewind || return 1
  $mark
  w=$(timed_dd if=/tmp/rdata of="$1") || return 1
  $mark
  mt-st -f "$1" rewind || return 1
  r=$(timed_dd if="$1" of=/dev/null) || return 1
  $mark
  echo "write=$w read=$r"
}
# The handler's timing counters (SIGUSR1 logs each backstore's and resets them).
handler_stats() {
  kill -USR1 "$HANDLER_PID"
  sleep 1
}
mkdir -p /run/lock/iscsi /etc/iscsi/nodes /etc/iscsi/send_targets /etc/iscsi/ifaces
echo "InitiatorName=$IQN" >/etc/iscsi/initiatorname.iscsi
if step_run perf iscsid && step_run perf mtx -f "$CH" load "$RESTART_SLOT" 0 && wait_until 60 mt-st -f "$TAPE" status; then
  disc=$(iscsiadm -m discovery -t sendtargets -p "$PORTAL" -o nonpersistent 2>&1)
  ITARGET=$(echo "$disc" | awk '/iqn\./ {print $2; exit}')
  ITAPE=
  if [ -n "$ITARGET" ] && step_run perf iscsiadm -m node -o new -T "$ITARGET" -p "$PORTAL" &&
    step_run perf iscsiadm -m node -T "$ITARGET" -p "$PORTAL" --login &&
    wait_until 60 sh -c "[ \$(ls /sys/class/scsi_tape | grep -c '^nst[0-9]*\$') -ge $((NUM_DRIVES * 2)) ]"; then
    for d in /sys/class/scsi_tape/nst*; do
      case ${d##*/} in nst[0-9] | nst[0-9][0-9]) ;; *) continue ;; esac
      [ "/dev/${d##*/}" = "$TAPE" ] && continue
      sg=$(ls "$d/device/scsi_generic")
      serial=$(sg_vpd -p sn "/dev/$sg" 2>/dev/null | sed -n 's/.*Unit serial number: *//p')
      [ "$serial" = "$DRIVE_SERIAL" ] && ITAPE=/dev/${d##*/}
    done
  fi
  if [ -z "$ITAPE" ]; then
    log perf "$disc" "$("$lsscsi" 2>&1)"
    fail perf "the drive over iSCSI was not found (target '$ITARGET')"
  else
    # st wants a clean open on the iSCSI path: a first status clears its unit attentions.
    mt-st -f "$ITAPE" status >/dev/null 2>&1
    tcmu=$(perf_path "$TAPE" handler_stats) && iscsi=$(perf_path "$ITAPE") &&
      ok perf "KiB/s tcmu: $tcmu iscsi: $iscsi" || fail perf "a timed dd failed (tcmu '$tcmu')"
    # Where a TCMU command's time went, writing then reading (vtl-tcmu's counters, in µs).
    drive_stats=$(grep 'drive0: stats' /tmp/vtl-tcmu.log | tail -n 2 | sed 's/.*: stats //' | tr '\n' '|')
    ok perf-profile "$drive_stats"
  fi
  iscsiadm -m node -T "$ITARGET" -p "$PORTAL" --logout >/dev/null 2>&1
  mt-st -f "$TAPE" offline
  mtx -f "$CH" unload "$RESTART_SLOT" 0
fi
log handler "$(tail -n 12 /tmp/vtl-tcmu.log)"
# The serial port drains slowly under emulation, and /init powers off right after GUEST-DONE.
sleep 2

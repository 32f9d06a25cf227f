# An archive host's session after guest-common.sh has logged in and found the devices (CH, TAPE):
# the LTFS reference implementation formats a cartridge (mkltfs), mounts it through FUSE (ltfs),
# files are copied in, unmounted, mounted again and read back; ltfsck checks the volume; sg3-utils
# show the partitions. Then the same files go to a second cartridge with tar, for the timing
# beside LTFS's, and a WORM cartridge takes an append but refuses an overwrite through st.
# Parameters: LTFS (install prefix), LOAD_SLOT (the LTFS cartridge), TAR_SLOT, WORM_SLOT,
# ROUNDTRIP_SIGNAL (the label the host mints once the S3 round trip is done), STENC_KEY (hex).
LTFS_BIN=$LTFS/bin
MNT=/mnt/ltfs
now() { awk '{print $1}' /proc/uptime; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
mounted() { grep -q " $MNT fuse" /proc/mounts; }
# Runs an LTFS tool for a step with its output streamed as LOG lines while it runs (LTFS talks a
# lot, and a hang shows where it stopped), bounded to $2 seconds; out= keeps the output. Exit
# codes in OK_RC (default 0) pass.
step_stream() {
  step=$1 limit=$2
  shift 2
  rm -f /tmp/rc
  { timeout "$limit" "$@" 2>&1; echo $? >/tmp/rc; } | while IFS= read -r line; do
    echo "LOG $step $line"
    echo "$line" >>"/tmp/$step.out"
  done
  rc=$(cat /tmp/rc)
  out=$(cat "/tmp/$step.out" 2>/dev/null)
  rm -f "/tmp/$step.out"
  case " ${OK_RC:-0} " in *" $rc "*) return 0 ;; esac
  fail "$step" "$* => exit $rc: $(echo "$out" | grep -E 'E |rror' | tail -n 2 | oneline)"
  return 1
}
# LTFS writes its index on unmount: wait until its daemon has gone.
unmount_ltfs() {
  umount "$MNT" 2>&1
  wait_until 300 sh -c '! pidof ltfs'
}
# ltfs runs in the foreground (-f) in the background of this shell, its output streamed as LOG
# lines: the mount is there once /proc/mounts lists it, and unmounting ends the process.
mount_ltfs() { # step
  : >"/tmp/$1.log"
  "$LTFS_BIN/ltfs" -f -o tape_backend=sg -o devname="$TAPE_SG" "$MNT" >"/tmp/$1.log" 2>&1 &
  tail -f "/tmp/$1.log" | sed "s/^/LOG $1 /" &
  tailer=$!
  if ! wait_until 600 mounted; then
    kill $tailer 2>/dev/null
    fail "$1" "ltfs did not mount: $(grep -E 'E |rror' "/tmp/$1.log" | tail -n 3 | oneline)"
    return 1
  fi
  kill $tailer 2>/dev/null
}
# What a mount's log (complete once ltfs has exited) says of the drive: whether LTFS had to run a
# full medium consistency check (11026I: the volume change reference the drive reports differs
# from the one LTFS kept in the MAM coherency attributes), and how often it could not parse a
# cartridge health parameter of log page 17h (30235I).
mount_report() { # step
  full=no
  grep -q '11026I' "/tmp/$1.log" && full=yes
  echo "full-check=$full health-parse-errors=$(grep -c '30235I' "/tmp/$1.log")"
}

if ! step_run load mtx -f "$CH" load "$LOAD_SLOT" 0 || ! wait_until 60 sh -c "mt-st -f $TAPE status | grep -q ONLINE"; then
  fail load "the LTFS cartridge did not come online"
  exit 0
fi
ok load "slot $LOAD_SLOT -> drive 0"
TAPE_SG=/dev/$(ls "/sys/class/scsi_tape/${TAPE##*/}/device/scsi_generic")

# --- mkltfs ------------------------------------------------------------------------------------
if step_stream mkltfs 900 "$LTFS_BIN/mkltfs" -e sg -d "$TAPE_SG" -f; then
  ok mkltfs "$(echo "$out" | grep -E 'Volume UUID|formatted successfully' | oneline)"
else
  exit 0
fi

# --- the partitions as sg3-utils show them -------------------------------------------------------
if step_run partitions sg_modes -p 0x11 "$TAPE_SG"; then
  modes=$out
  step_run partitions sg_logs -p 0x17 "$TAPE_SG" && logs=$out
  step_run partitions sg_read_attr -p 1 "$TAPE_SG" && attrs=$out
  log partitions "$modes" "${logs:-}" "${attrs:-}"
  # sg_modes prints the page's bytes: byte 3 of page 11h is the number of additional partitions.
  added=$(echo "$modes" | awk '/^ *00 +11 /{print $5; exit}')
  coherency=$(echo "${attrs:-}" | grep -ci 'coherency')
  ok partitions "additional=$added coherency-attrs=$coherency"
fi

# --- files in, through the FUSE mount ------------------------------------------------------------
mkdir -p "$MNT" /data/tree/sub /restore
head -c 8388608 /dev/urandom >/data/tree/big
head -c 100003 /dev/urandom >/data/tree/sub/odd
echo hello >/data/tree/sub/tiny
for i in $(seq 1 20); do head -c $((i * 4099)) /dev/urandom >"/data/tree/f$i"; done
(cd /data/tree && find . -type f | sort | xargs md5sum) >/tmp/tree.md5
BYTES=$(du -sk /data/tree | awk '{print $1}')
mount_ltfs mount || exit 0
ok mount
t0=$(now)
if step_run copy-in cp -r /data/tree "$MNT/"; then
  sync
  t1=$(now)
  ok copy-in "kib=$BYTES seconds=$(elapsed "$t0" "$t1")"
fi
unmount_ltfs && ok unmount "$(mount_report mount)" || fail unmount "ltfs still running: $(pidof ltfs)"

# --- mounted again: the same files, byte for byte ------------------------------------------------
mount_ltfs remount || exit 0
t0=$(now)
if step_run copy-out cp -r "$MNT/tree" /restore/; then
  t1=$(now)
  if (cd /restore/tree && md5sum -c -s /tmp/tree.md5); then
    ok copy-out "identical files=$(wc -l </tmp/tree.md5) seconds=$(elapsed "$t0" "$t1")"
  else
    fail copy-out "the files read back differ from those written"
  fi
fi
listed=$(ls "$MNT/tree" | wc -l)
unmount_ltfs && ok remount "entries=$listed $(mount_report remount)"

# --- ltfsck ----------------------------------------------------------------------------------------
# ltfsck's check mode (no -g/-r/-n/-l) answers 1 for every volume it checked, on any drive: in the
# LTFS source (src/utils/ltfsck.c, check_ltfs_volume) a successful ltfs_mount is followed by
# ltfs_unmount(SYNC_CHECK), message 16022I "Volume is consistent" and `return LTFSCK_CORRECTED`,
# which is PROG_TREAT_SUCCESS, 0x01; no path of that mode returns LTFSCK_NO_ERRORS (0). Its mount
# passes force_full=true, so the full medium check (11026I) runs whatever the volume change
# reference says: it is no sign of a VCR that differs from the MAM coherency attribute (the mount
# and remount above report full-check=no, so the VCR does match). 1 and "Volume is consistent"
# is the pass; 4 (uncorrected) or 8 (operational error) fails.
if OK_RC='1' step_stream ltfsck 900 "$LTFS_BIN/ltfsck" -e sg "$TAPE_SG"; then
  ok ltfsck "$(echo "$out" | grep -E 'Volume is' | tail -n 1 | sed 's/^LTFS[0-9]*I //' | oneline)"
fi
step_run unload mtx -f "$CH" unload "$LOAD_SLOT" 0 && ok unload

# --- after an S3 round trip: the host exports, evicts and imports the LTFS cartridge, then mints
# $ROUNDTRIP_SIGNAL as its sign that the cartridge is back; LTFS mounts it again, files intact.
ok roundtrip-ready "slot $LOAD_SLOT"
if ! wait_until 900 sh -c "mtx -f $CH status | grep -q '$ROUNDTRIP_SIGNAL'"; then
  fail roundtrip "the host did not bring the cartridge back from S3 in time"
elif step_run roundtrip mtx -f "$CH" load "$LOAD_SLOT" 0 && wait_until 60 sh -c "mt-st -f $TAPE status | grep -q ONLINE" &&
  mount_ltfs roundtrip; then
  rm -rf /restore/tree
  if step_run roundtrip cp -r "$MNT/tree" /restore/ && (cd /restore/tree && md5sum -c -s /tmp/tree.md5); then
    ok roundtrip "identical files=$(wc -l </tmp/tree.md5)"
  else
    fail roundtrip "the files read back after the S3 round trip differ from those written"
  fi
  unmount_ltfs
  step_run roundtrip mtx -f "$CH" unload "$LOAD_SLOT" 0
fi

# --- the same files with tar, on a second cartridge ------------------------------------------------
if step_run tar mtx -f "$CH" load "$TAR_SLOT" 0 && wait_until 60 sh -c "mt-st -f $TAPE status | grep -q ONLINE"; then
  t0=$(now)
  if step_run tar /bin/tar -b 1024 -cf "$TAPE" -C /data tree; then
    t1=$(now)
    ok tar "kib=$BYTES seconds=$(elapsed "$t0" "$t1")"
  fi
  # --- drive encryption with stenc on the same cartridge: a key set, a block written encrypted,
  # unreadable with the key cleared, readable again with it.
  printf '%s\n%s\n' "$STENC_KEY" 'vtl-e2e-key' >/tmp/tape.key
  mkdir -p /var/log
  if step_run stenc stenc -f "$TAPE" -e on -k /tmp/tape.key -a 1 && step_run stenc mt-st -f "$TAPE" eod &&
    at=$(tell) && step_run stenc dd if=/data/tree/f3 of="$TAPE" bs=12297 count=1 &&
    step_run stenc mt-st -f "$TAPE" seek "$at"; then
    on=$(stenc -f "$TAPE" --detail 2>&1)
    log stenc "$on"
    step_run stenc stenc -f "$TAPE" -e off
    off=$(stenc -f "$TAPE" --detail 2>&1)
    log stenc "$off"
    if dd if="$TAPE" of=/tmp/enc.out bs=12297 count=1 2>/dev/null; then
      fail stenc "an encrypted block was read without its key"
    else
      step_run stenc mt-st -f "$TAPE" seek "$at"
      step_run stenc stenc -f "$TAPE" -e on -k /tmp/tape.key -a 1
      if dd if="$TAPE" of=/tmp/enc.out bs=12297 count=1 2>/dev/null && cmp -s /tmp/enc.out /data/tree/f3; then
        detail=$(echo "$off" | grep 'Volume Encryption' | sed 's/ *Volume Encryption: *//' | oneline)
        ok stenc "keyless-read=refused with-key=identical volume=$detail"
      else
        fail stenc "the encrypted block did not read back with its key"
      fi
      stenc -f "$TAPE" -e off >/dev/null 2>&1
    fi
  fi
  step_run tar mtx -f "$CH" unload "$TAR_SLOT" 0
fi

# --- a WORM cartridge through st: appending works, overwriting does not ---------------------------
if step_run worm mtx -f "$CH" load "$WORM_SLOT" 0 && wait_until 60 sh -c "mt-st -f $TAPE status | grep -q ONLINE"; then
  WORM_SG=/dev/$(ls "/sys/class/scsi_tape/${TAPE##*/}/device/scsi_generic")
  medium=$(sg_modes -6 -p 0 "$WORM_SG" 2>&1 | sed -n 's/.*[Mm]edium type=\(0x[0-9a-f]*\).*/\1/p' | head -n 1)
  if step_run worm mt-st -f "$TAPE" eod && step_run worm dd if=/data/tree/f1 of="$TAPE" bs=4099 count=1; then
    appended=yes
  fi
  step_run worm mt-st -f "$TAPE" rewind
  if dd if=/data/tree/f2 of="$TAPE" bs=8198 count=1 2>/tmp/worm.err; then
    fail worm "an overwrite at BOT of a WORM cartridge was accepted"
  else
    ok worm "medium=$medium appended=${appended:-no} overwrite=refused"
  fi
  mt-st -f "$TAPE" rewind >/dev/null 2>&1
  step_run worm mtx -f "$CH" unload "$WORM_SLOT" 0
fi

step_run logout iscsiadm -m node -T "$TARGET" -p "$PORTAL" --logout && ok logout

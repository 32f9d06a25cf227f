# The backup host's session after guest-common.sh has logged in and found the devices (CH,
# TAPE): the changer, mt-st and tar, positioning, reservations, unload.
# --- the changer ---------------------------------------------------------------------------
if step_run mtx-status mtx -f "$CH" status; then
  log mtx-status "$out"
  ok mtx-status "$(slot_tags "$out")"
fi
if step_run mtx-load mtx -f "$CH" load "$LOAD_SLOT" 0; then
  if wait_until 60 sh -c "mt-st -f $TAPE status | grep -q ONLINE"; then
    # mtx names the loaded volume and the slot it came from.
    step_run mtx-load mtx -f "$CH" status && log mtx-load "$out" &&
      ok mtx-load "$(echo "$out" | sed -n 's/^Data Transfer Element 0:Full (Storage Element \([0-9]*\) Loaded):VolumeTag = \([^ ]*\).*/drive0=\2 source=\1/p')"
  else
    fail mtx-load "$TAPE never became ONLINE: $(mt-st -f "$TAPE" status 2>&1 | oneline)"
  fi
fi
if step_run mt-status mt-st -f "$TAPE" status; then
  log mt-status "$out"
  case $out in
    *"File number=0, block number=0"*BOT*ONLINE*) ok mt-status "$(echo "$out" | oneline)" ;;
    *) fail mt-status "not at BOT and online: $(echo "$out" | oneline)" ;;
  esac
fi

# --- what inspection tools read ----------------------------------------------------------------
# mtx's tapeinfo and loaderinfo, and sg3-utils' mode, log and opcode listings, as an admin runs
# them to check a new device; each must succeed, and the first two name what they found.
TAPE_SG=/dev/$(ls "/sys/class/scsi_tape/${TAPE##*/}/device/scsi_generic")
if step_run tapeinfo tapeinfo -f "$TAPE_SG"; then
  log tapeinfo "$out"
  ok tapeinfo "$(echo "$out" | sed -n "s/^\(Product ID\|SerialNumber\|Ready\|BOP\|MaxBlock\): *'\{0,1\}\([^']*\)'\{0,1\} *$/\1=\2/p" | oneline)"
fi
if step_run loaderinfo loaderinfo -f "$CH"; then
  log loaderinfo "$out"
  ok loaderinfo "$(echo "$out" | sed -n 's/^Number of \(Storage\|Data Transfer\|Import\/Export\|Medium Transport\) Element[s]*: *\([0-9]*\).*/\1=\2/p' | oneline)"
fi
inspected=ok
for dev in "$TAPE_SG" "$CH"; do
  for tool in "sg_modes -a" "sg_logs -a" "sg_opcodes"; do
    # shellcheck disable=SC2086 # the tool's options split on purpose
    if step_run inspect $tool "$dev"; then log inspect "$tool $dev:" "$out"; else inspected=fail; fi
  done
done
if step_run inspect sg_read_attr "$TAPE_SG"; then log inspect "sg_read_attr $TAPE_SG:" "$out"; else inspected=fail; fi
step_run inspect mt-st -f "$TAPE" compression 1 || inspected=fail
step_run inspect mtx -f "$CH" inventory || inspected=fail
[ $inspected = ok ] && ok inspect

# --- three tar archives, one per tape file ---------------------------------------------------
mkdir -p /data/set1/sub /data/set2 /data/set3
head -c 307200 /dev/urandom >/data/set1/big
head -c 17001 /dev/urandom >/data/set1/sub/odd
echo one >/data/set1/sub/tiny
head -c 1048576 /dev/urandom >/data/set2/mebibyte
for i in $(seq 1 24); do head -c $((i * 997)) /dev/urandom >"/data/set3/f$i"; done
for k in 1 2 3; do (cd "/data/set$k" && find . -type f | sort | xargs md5sum) >"/tmp/set$k.md5"; done

if step_run write mt-st -f "$TAPE" rewind; then
  written=ok
  for k in 1 2 3; do
    eval "START$k=$(tell)"
    # The non-rewinding device writes a filemark when tar closes it.
    step_run write "$tar" -b 20 -cf "$TAPE" -C /data "set$k" || written=fail
  done
  END=$(tell)
  START4=$END
  [ $written = ok ] && ok write "starts=$START1,$START2,$START3 end=$END"
fi

# --- positioning -----------------------------------------------------------------------------
expect_at() { # step expected-block detail
  at=$(tell)
  if [ "$at" = "$2" ]; then ok "$1" "at block $at ${3:-}"; else fail "$1" "at block $at, expected $2 ${3:-}"; fi
}
if step_run rewind mt-st -f "$TAPE" rewind && step_run rewind mt-st -f "$TAPE" status; then
  case $out in
    *"File number=0, block number=0"*BOT*) expect_at rewind 0 ;;
    *) fail rewind "not at BOT: $(echo "$out" | oneline)" ;;
  esac
fi
step_run fsf mt-st -f "$TAPE" fsf 1 && expect_at fsf "$START2" "(start of file 1)"
step_run bsf mt-st -f "$TAPE" bsf 1 && expect_at bsf $((START2 - 1)) "(before filemark 1)"
step_run eod mt-st -f "$TAPE" eod && expect_at eod "$END" "(end of data)"
step_run seek mt-st -f "$TAPE" seek "$START3" && expect_at seek "$START3" "(start of file 2)"

# --- reading back ----------------------------------------------------------------------------
# The archive at the seek position: the third.
mkdir -p /restore/seek /restore/fsf /restore/seq
if step_run read-seek "$tar" -b 20 -xf "$TAPE" -C /restore/seek; then
  if same_files /restore/seek 3; then ok read-seek "set3 matches"; else fail read-seek "set3 differs"; fi
fi
# The second archive, found by spacing over one filemark from the beginning.
if step_run read-fsf mt-st -f "$TAPE" rewind && step_run read-fsf mt-st -f "$TAPE" fsf 1 &&
  step_run read-fsf "$tar" -b 20 -xf "$TAPE" -C /restore/fsf; then
  if same_files /restore/fsf 2; then ok read-fsf "set2 matches"; else fail read-fsf "set2 differs"; fi
fi
# All three in order. tar stops at its end-of-archive record, before the filemark, and the st
# driver (BSD semantics, its default) leaves the tape there on close: space over the filemark.
if step_run read-all mt-st -f "$TAPE" rewind; then
  matched=
  for k in 1 2 3; do
    step_run read-all "$tar" -b 20 -xf "$TAPE" -C /restore/seq || continue
    eval "next=\$START$((k + 1))"
    at=$(tell)
    if [ "$at" != $((next - 1)) ]; then
      fail read-all "after reading set$k at block $at, expected $((next - 1)) (before its filemark)"
    fi
    step_run read-all mt-st -f "$TAPE" fsf 1
    same_files /restore/seq "$k" && matched="$matched set$k"
  done
  if [ "$matched" = " set1 set2 set3" ]; then ok read-all "${matched# }"; else fail read-all "only$matched matched"; fi
fi

# --- persistent reservations ---------------------------------------------------------------
# What cluster-aware backup software does before it uses a shared drive: register a key, take an
# exclusive-access reservation, use the drive, release, unregister (sg_persist from sg3-utils).
pr() { step_run persistent-reserve sg_persist "$@" "$TAPE_SG"; }
if pr --out --register --param-sark=5a17e1 && pr --out --reserve --param-rk=5a17e1 --prout-type=3; then
  pr --in --read-keys && keys=$(echo "$out" | sed -n 's/^ *\(0x[0-9a-f]*\)$/\1/p' | oneline)
  pr --in --read-reservation && log persistent-reserve "$out" &&
    held=$(echo "$out" | sed -n 's/^ *Key=\(0x[0-9a-f]*\).*/\1/p; s/.*scope:.*type: \(.*\)$/\1/p' | oneline)
  # The holder's own I/O goes on as before.
  step_run persistent-reserve mt-st -f "$TAPE" rewind && used=$(tell)
  if pr --out --release --param-rk=5a17e1 --prout-type=3 && pr --out --register --param-rk=5a17e1 --param-sark=0 &&
    pr --in --read-keys; then
    left=$(echo "$out" | grep -c '^ *0x')
    ok persistent-reserve "keys=${keys:-} held=${held:-} rewound-to=${used:-} keys-after=$left"
  fi
fi

# --- unload and move -------------------------------------------------------------------------
step_run offline mt-st -f "$TAPE" offline && ok offline
step_run mtx-unload mtx -f "$CH" unload "$LOAD_SLOT" 0 && ok mtx-unload "drive 0 -> slot $LOAD_SLOT"
step_run mtx-transfer mtx -f "$CH" transfer "$FROM_SLOT" "$TO_SLOT" && ok mtx-transfer "slot $FROM_SLOT -> slot $TO_SLOT"
if step_run mtx-status-after mtx -f "$CH" status; then
  log mtx-status-after "$out"
  ok mtx-status-after "$(slot_tags "$out")"
fi

# --- logout ----------------------------------------------------------------------------------
[ -n "${LOCAL_FABRIC:-}" ] || { step_run logout iscsiadm -m node -T "$TARGET" -p "$PORTAL" --logout && ok logout; }

/** Settings of a one-node test cluster (shared/TEST-INFRA.md: what mattered and why). */
export function cephConf(opts: {
  dir: string;
  fsid: string;
  monPort: number;
  rgwPort: number;
  memstoreBytes: number;
}): string {
  const { dir } = opts;
  return `[global]
fsid = ${opts.fsid}
mon host = v2:127.0.0.1:${opts.monPort}
mon initial members = a
public network = 127.0.0.0/8
public addr = 127.0.0.1
cluster addr = 127.0.0.1
# No cephx: a throwaway cluster on loopback.
auth cluster required = none
auth service required = none
auth client required = none
# radosgw loops on "get_initial_auth_request returned -13" without this.
ms mon client mode = crc secure
# Cuts start-up from ~15 s to ~3 s.
paxos propose interval = 0.1
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon warn on pool no redundancy = false
osd objectstore = memstore
memstore device bytes = ${opts.memstoreBytes}
# Let large chunks through the gateway without throttling against the single OSD.
objecter inflight op bytes = 1073741824
objecter inflight ops = 4096
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
pid file = ${dir}/run/$name.pid
log file = ${dir}/log/$name.log
mon cluster log file = ${dir}/log/cluster.log
mon data = ${dir}/mon/$id
osd data = ${dir}/osd/$id
keyring = ${dir}/keyring

[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:${opts.rgwPort}
rgw dns name = 127.0.0.1
`;
}

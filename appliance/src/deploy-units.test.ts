import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const dir = path.resolve(import.meta.dirname, '../../deploy/systemd');

/** A unit file as systemd reads it: sections of keys, continuation lines joined, comments dropped. */
async function parseUnit(file: string): Promise<Record<string, Record<string, string[]>>> {
  const text = (await fs.readFile(path.join(dir, file), 'utf8')).replace(/\\\n/g, ' ');
  const unit: Record<string, Record<string, string[]>> = {};
  let section: Record<string, string[]> | undefined;
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[([A-Za-z]+)\]$/.exec(line);
    if (header) {
      section = unit[header[1]!] = {};
      continue;
    }
    const kv = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (!kv || !section) throw new Error(`${file}:${i + 1}: not a key=value line in a section: ${raw}`);
    (section[kv[1]!] ??= []).push(kv[2]!);
  }
  return unit;
}

const hasSystemdAnalyze = await promisify(execFile)('systemd-analyze', ['--version']).then(
  () => true,
  () => false,
);

describe('the systemd unit set under deploy/systemd', () => {
  it('groups etcd, apiserver, controller and nodeagent under vtl.target, the emulator in a unit of its own', async () => {
    const target = await parseUnit('vtl.target');
    const members = ['vtl-etcd', 'vtl-apiserver', 'vtl-controller', 'vtl-nodeagent'];
    expect(target.Unit!.Wants!.join(' ').split(/\s+/).sort()).toEqual(
      members.map((m) => `${m}.service`).sort(),
    );
    for (const name of members) {
      const unit = await parseUnit(`${name}.service`);
      expect(unit.Unit!.PartOf, name).toEqual(['vtl.target']);
      expect(unit.Install!.WantedBy, name).toEqual(['vtl.target']);
      // The project's Node LTS installed as /usr/local/bin/node (docs/systemd.md), Debian's etcd.
      expect(unit.Service!.ExecStart![0], name).toMatch(/^(\/usr\/local\/bin\/node|\/usr\/bin\/etcd) /);
      // The service manager's SIGTERM must reach the process: no npm or shell in between.
      expect(unit.Service!.ExecStart![0], name).not.toMatch(/npm|bash|sh -c/);
      expect(unit.Service!.EnvironmentFile, name).toEqual(['/etc/vtl/vtl.env']);
      if (name !== 'vtl-etcd') expect(unit.Unit!.After, name).toEqual(['vtl-etcd.service']);
    }
    const emulator = await parseUnit('vtl-emulator.service');
    // Stopping the control plane leaves host sessions up: the emulator is not part of the target.
    expect(emulator.Unit!.PartOf).toBeUndefined();
    expect(emulator.Service!.ExecStart![0]).toContain(
      'emulator/dist/main.js --config /var/lib/vtl/emulator/config.json',
    );
    // The FC hosts' handler is kept up on its own too, and always restarted: the kernel waits on it.
    const tcmu = await parseUnit('vtl-tcmu.service');
    expect(tcmu.Unit!.PartOf).toBeUndefined();
    expect(tcmu.Service!.ExecStart).toEqual(['/usr/local/sbin/vtl-tcmu unix:${VTL_TCMU_LISTEN}']);
    expect(tcmu.Service!.Restart).toEqual(['always']);
    expect(tcmu.Install!.WantedBy).toEqual(['multi-user.target']);
    const env = await fs.readFile(path.join(dir, 'vtl.env'), 'utf8');
    expect(env).toMatch(/^VTL_EMULATOR_UNIT=vtl-emulator\.service$/m);
    // etcd TLS placeholders (docs/security.md): the CA for all, each process its own pair.
    expect(env).toContain('VTL_ETCD_CA_FILE=/var/lib/vtl/pki/ca.crt');
    for (const name of ['apiserver', 'controller', 'nodeagent']) {
      const text = await fs.readFile(path.join(dir, `vtl-${name}.service`), 'utf8');
      expect(text).toContain(
        `VTL_ETCD_CERT_FILE=/var/lib/vtl/pki/${name}.crt VTL_ETCD_KEY_FILE=/var/lib/vtl/pki/${name}.key`,
      );
    }
  });

  it.runIf(hasSystemdAnalyze)('passes systemd-analyze verify without a warning', async () => {
    // verify checks that ExecStart's binary exists: point node at this one (it may not be /usr/local/bin/node).
    const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-units-'));
    try {
      const files = (await fs.readdir(dir)).filter((f) => /\.(service|target)$/.test(f));
      for (const f of files) {
        const text = await fs.readFile(path.join(dir, f), 'utf8');
        // vtl-tcmu is installed by the image or the installer, not on a test machine.
        const runnable = text
          .replaceAll('/usr/local/bin/node ', `${process.execPath} `)
          .replaceAll('/usr/local/sbin/vtl-tcmu ', '/bin/true ');
        await fs.writeFile(path.join(tmp, f), runnable);
      }
      const hasEtcd = await fs.access('/usr/bin/etcd').then(
        () => true,
        () => false,
      );
      const verified = files.filter((f) => hasEtcd || f !== 'vtl-etcd.service').map((f) => path.join(tmp, f));
      const { stderr } = await promisify(execFile)('systemd-analyze', ['verify', '--man=no', ...verified]);
      expect(stderr).toBe('');
    } finally {
      await fs.rm(tmp, { recursive: true, force: true });
    }
  });
});

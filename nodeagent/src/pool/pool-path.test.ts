import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VtlError } from '@vtl/api';
import { checkPoolPath } from './pool-path.js';

describe('checkPoolPath', () => {
  let root: string;
  let state: string;
  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-pool-path-'));
    state = path.join(root, 'state');
    await fs.mkdir(path.join(state, 'etcd'), { recursive: true });
    await fs.symlink(path.join(state, 'etcd'), path.join(root, 'link'));
  });
  afterAll(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  const refusal = async (p: string) => {
    const err = await checkPoolPath(p, state).catch((e: unknown) => e);
    expect(err, p).toBeInstanceOf(VtlError);
    return (err as VtlError).message;
  };

  it('refuses the state dir, its parents, `..` and symlinks into it', async () => {
    expect(await refusal(path.join(state, 'etcd'))).toMatch(/inside the appliance's state directory/);
    expect(await refusal(state)).toMatch(/state directory/);
    expect(await refusal(root)).toMatch(/contains the appliance's state directory/);
    expect(await refusal(`${state}/pools/../etcd/x`)).toMatch(/resolves to .*etcd\/x/);
    expect(await refusal(path.join(root, 'link', 'new'))).toMatch(/resolves to .*state directory/);
  });

  it('refuses system directories, inside them and their parents', async () => {
    for (const p of [
      '/',
      '/etc',
      '/etc/vtl',
      '/usr/local/x',
      '/boot',
      '/proc/1',
      '/sys',
      '/dev/shm/x',
      '/run',
      '/var',
    ])
      expect(await refusal(p)).toMatch(/system directory/);
  });

  it('refuses an overlap with another pool on the resolved paths, either way round', async () => {
    // A symlink into the state dir's pool area: allowed as a pool on its own ...
    await fs.mkdir(path.join(state, 'pools', 'a'), { recursive: true });
    const intoPools = path.join(root, 'to-pools-a');
    await fs.symlink(path.join(state, 'pools', 'a'), intoPools);
    expect(await checkPoolPath(intoPools, state)).toBe(intoPools);
    // ... but not its parent, a child or the same directory once a pool sits there.
    const linked = [{ name: 'linked', path: intoPools }];
    expect(await refusal2(path.join(state, 'pools'), linked)).toMatch(/overlaps pool "linked".*resolves to/);
    expect(await refusal2(path.join(state, 'pools', 'a', 'b'), linked)).toMatch(/overlaps pool "linked"/);
    expect(await refusal2(path.join(state, 'pools', 'a'), linked)).toMatch(/overlaps pool "linked"/);
    // And the symlink itself over a pool that exists as written.
    const plain = [{ name: 'plain', path: path.join(state, 'pools') }];
    expect(await refusal2(intoPools, plain)).toMatch(/resolves to .*overlaps pool "plain"/);
    expect(await checkPoolPath(path.join(state, 'pools', 'c'), state, linked)).toBe(
      path.join(state, 'pools', 'c'),
    );
  });

  const refusal2 = async (p: string, pools: { name: string; path: string }[]) => {
    const err = await checkPoolPath(p, state, pools).catch((e: unknown) => e);
    expect(err, p).toBeInstanceOf(VtlError);
    return (err as VtlError).message;
  };

  it('accepts data directories and the state dir pool areas, normalised', async () => {
    expect(await checkPoolPath('/srv/vtl/pool-2/', state)).toBe('/srv/vtl/pool-2');
    expect(await checkPoolPath(path.join(state, 'pool'), state)).toBe(path.join(state, 'pool'));
    expect(await checkPoolPath(path.join(state, 'pools', 'p2'), state)).toBe(path.join(state, 'pools', 'p2'));
  });
});

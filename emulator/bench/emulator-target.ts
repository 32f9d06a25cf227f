import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import {
  DataPlane,
  type EmulatorConfig,
  cartridgeDir,
  iscsiTransport,
  mintCartridge,
  nodeTargetName,
} from '@vtl/emulator';

/**
 * The emulator side of the benchmark, in its own process: one library with `--drives` LTO-8
 * drives (default 1) served by the production iSCSI transport (as `emulator/dist/main.js`
 * wires it, minus the control socket), with a cartridge minted into `--dir` and threaded in
 * each drive. Prints one JSON line (portal, target, the drives' LUNs and cartridge
 * directories) once it is serving, and syncs and exits on SIGTERM.
 */
const NODE = 'bench';
const label = (drive: number) => `BENCH${drive + 1}L8`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { dir: { type: 'string' }, port: { type: 'string' }, drives: { type: 'string', default: '1' } },
  });
  const drives = Number(values.drives);
  if (!values.dir || !(drives >= 1 && drives <= 4)) {
    throw new Error('usage: emulator-target.js --dir <media dir> [--port N] [--drives 1..4]');
  }
  const mediaDir = join(values.dir, 'lib1');
  const config: EmulatorConfig = {
    node: NODE,
    generation: 1,
    socket: join(values.dir, 'unused.sock'),
    iscsi: { bind: '127.0.0.1', port: Number(values.port ?? 0), open: true, allowed_initiators: [] },
    libraries: [
      {
        id: 1,
        name: 'bench',
        serial: 'BENCH0001',
        product: '3573-TL',
        vendor: 'IBM',
        drive_product: 'ULT3580-TD8',
        drive_serials: Array.from({ length: drives }, (_, i) => String(1000000001 + i)),
        num_slots: 4,
        num_ie: 1,
        media_dir: mediaDir,
        generation: 8,
      },
    ],
  };
  const logger = pino({ level: 'warn', base: { component: 'bench-emulator' } });
  const dp = await DataPlane.open(config, logger);
  const inventory = dp.library(1).inventory;
  const existing = await readdir(mediaDir).catch(() => [] as string[]);
  for (let d = 0; d < drives; d++) {
    if (!existing.includes(label(d))) {
      await mintCartridge({ mediaDir, label: label(d), generation: 8 });
      await inventory.place(label(d), d + 1);
    }
    await inventory.load(d, label(d));
  }
  // VTL_ISCSI_OPEN warns on purpose in production; the benchmark's target is loopback only.
  const transport = await iscsiTransport(pino({ level: 'error' }))(dp);
  process.stdout.write(
    `${JSON.stringify({
      portal: transport.portal,
      target: nodeTargetName(NODE),
      // LUN 0 is the changer, then the drives in order (@vtl/api lunOrder).
      luns: Array.from({ length: drives }, (_, d) => d + 1),
      cartridgeDirs: Array.from({ length: drives }, (_, d) => cartridgeDir(mediaDir, label(d))),
    })}\n`,
  );
  process.once('SIGTERM', () => {
    transport.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'stop failed');
        process.exit(1);
      },
    );
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});

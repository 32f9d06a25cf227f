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
 * The emulator side of the benchmark, in its own process: one library with one LTO-8 drive
 * served by the production iSCSI transport (as `emulator/dist/main.js` wires it, minus the
 * control socket), with a cartridge minted into `--dir` and threaded in the drive. Prints one
 * JSON line (portal, target, drive LUN, cartridge directory) once it is serving, and syncs
 * and exits on SIGTERM.
 */
const LABEL = 'BENCH1L8';
const NODE = 'bench';
const DRIVE_LUN = 1;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { dir: { type: 'string' }, port: { type: 'string' } } });
  if (!values.dir) throw new Error('usage: emulator-target.js --dir <media dir> [--port N]');
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
        drive_serials: ['1000000001'],
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
  if (!existing.includes(LABEL)) {
    await mintCartridge({ mediaDir, label: LABEL, generation: 8 });
    await inventory.place(LABEL, 1);
  }
  await inventory.load(0, LABEL);
  // VTL_ISCSI_OPEN warns on purpose in production; the benchmark's target is loopback only.
  const transport = await iscsiTransport(pino({ level: 'error' }))(dp);
  process.stdout.write(
    `${JSON.stringify({
      portal: transport.portal,
      target: nodeTargetName(NODE),
      lun: DRIVE_LUN,
      cartridgeDir: cartridgeDir(mediaDir, LABEL),
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

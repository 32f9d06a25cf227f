import net from 'node:net';

/**
 * Run by QEMU's user-mode network for each guest connection to the forwarded portal
 * (`guestfwd=...-cmd:node tcp-forward.js HOST PORT`): stdin/stdout are the guest's TCP stream,
 * piped to the appliance's iSCSI target on the host's loopback.
 */
const [host, port] = process.argv.slice(2);
const upstream = net.connect(Number(port), host);
upstream.setNoDelay(true);
process.stdin.pipe(upstream);
upstream.pipe(process.stdout);
upstream.on('close', () => process.exit(0));
// No message: QEMU hands this process the guest's connection as stderr too, so text written
// there would reach the guest as stream bytes. The guest sees the connection close.
upstream.on('error', () => process.exit(1));
process.stdin.on('error', () => upstream.destroy());

// SSE clients for control-plane.ts, run in a worker thread: `count` connections to the event
// stream; reports how many connected and, per event, its delay from the event's timestamp.
import https from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';

const { url, token, count } = workerData;
const agent = new https.Agent({ keepAlive: true, maxSockets: count + 10, rejectUnauthorized: false });
for (let i = 0; i < count; i++) {
  const req = https.get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
    let buf = '';
    res.setEncoding('utf8');
    res.on('data', (chunk) => {
      const now = Date.now();
      buf += chunk;
      const delays = [];
      for (let end = buf.indexOf('\n\n'); end >= 0; end = buf.indexOf('\n\n')) {
        const frame = buf.slice(0, end);
        buf = buf.slice(end + 2);
        if (frame.startsWith(': connected')) parentPort.postMessage({ connected: 1 });
        const data = frame.split('\n').find((l) => l.startsWith('data: '));
        if (data) delays.push(now - Date.parse(JSON.parse(data.slice(6)).ts));
      }
      if (delays.length) parentPort.postMessage({ delays });
    });
  });
  req.on('error', () => undefined);
}

// Preloaded (--import) by profile-views.ts into the appliance's processes: profiles the one named by
// PROF_ONLY (default apiserver) between the files PROF_DIR/start and PROF_DIR/stop appearing.
import inspector from 'node:inspector';
import fs from 'node:fs';
import { setInterval, clearInterval } from 'node:timers';
const who = (process.argv[1] ?? '').split('/').slice(-3).join('_');
const dir = process.env.PROF_DIR;
if (who.includes(process.env.PROF_ONLY ?? 'apiserver')) {
  const s = new inspector.Session();
  s.connect();
  s.post('Profiler.enable');
  s.post('Profiler.setSamplingInterval', { interval: 250 });
  let state = 'idle';
  const t = setInterval(() => {
    if (state === 'idle' && fs.existsSync(`${dir}/start`)) {
      s.post('Profiler.start');
      state = 'on';
    } else if (state === 'on' && fs.existsSync(`${dir}/stop`)) {
      state = 'done';
      clearInterval(t);
      s.post('Profiler.stop', (err, r) => {
        fs.writeFileSync(`${dir}/${who}-${process.pid}.cpuprofile`, JSON.stringify(r.profile));
      });
    }
  }, 200);
  t.unref();
}

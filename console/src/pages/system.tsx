import { api, unwrap } from '../api/client';
import { bytes, ErrorLine, Page, Progress } from '../components/common';
import { useLive } from '../live';
import { ACTIVE_JOB_STATES, loadJobs } from '../status';
import { jobRates, Spark, useHistorySeed } from '../components/throughput';

const load = () => unwrap(api.GET('/api/system'));

/** Version and uptime, and the throughput of the jobs under way (bytes done over time). */
export function SystemPage() {
  const system = useLive(load, [], 10_000);
  const jobs = useLive(() => loadJobs(50), [], 2000);
  useHistorySeed();
  const s = system.data;
  const running = (jobs.data ?? []).filter((j) => ACTIVE_JOB_STATES.has(j.state));
  return (
    <Page title="System">
      <ErrorLine error={system.error} />
      {s && (
        <dl class="facts">
          <dt>System</dt>
          <dd>
            {s.system_name} ({s.system_uuid})
          </dd>
          <dt>Version</dt>
          <dd>{s.version}</dd>
          <dt>Up since</dt>
          <dd>
            <time dateTime={s.started_at}>{new Date(s.started_at).toLocaleString()}</time> (
            {Math.round(s.uptime_sec / 60)} min)
          </dd>
          <dt>Active jobs</dt>
          <dd>{s.active_jobs}</dd>
          <dt>Draining</dt>
          <dd>{s.draining ? 'yes: a graceful restart waits for jobs' : 'no'}</dd>
          <dt>API keys</dt>
          <dd>{s.apikeys_enabled ? 'enabled' : 'ignored (setting apikeys.enabled)'}</dd>
        </dl>
      )}
      <h2>Job throughput</h2>
      {running.length === 0 && <p>No job is running.</p>}
      <ul class="job-rates">
        {running.map((j) => {
          const secs = j.started_at ? (Date.now() - Date.parse(j.started_at)) / 1000 : 0;
          return (
            <li key={j.id}>
              #{j.id} {j.kind} {j.label}: {bytes(j.bytes_done)}{' '}
              {secs > 0 ? `at ${bytes(j.bytes_done / secs)}/s` : ''}
              <Progress value={j.bytes_done} max={j.logical_bytes} label={`Job ${j.id}`} />
              <Spark
                points={jobRates(j.id, j.bytes_done).map((p) => ({ ...p, v: p.v / 1e6 }))}
                label={`Job ${j.id}`}
                unit="MB/s"
              />
            </li>
          );
        })}
      </ul>
    </Page>
  );
}

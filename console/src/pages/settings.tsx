import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { canWrite, ErrorLine, Notice, Page, useAction, ListTable } from '../components/common';
import { useLive } from '../live';
import { SETTINGS, textProblem, type SettingMeta } from './settings-meta';

const load = async () => {
  const [settings, remotes] = await Promise.all([
    unwrap(api.GET('/api/settings')) as Promise<Record<string, string>>,
    unwrap(api.GET('/api/remotes')),
  ]);
  return { settings, remotes };
};

type Remote = Awaited<ReturnType<typeof load>>['remotes'][number];

const meta = (key: string): SettingMeta =>
  SETTINGS[key] ?? { title: key, description: '', control: { kind: 'text', hint: '' } };

/** How a value reads for a person: on/off for switches, the remote's name for an id. */
function shown(m: SettingMeta, value: string, remotes: Remote[]): string {
  switch (m.control.kind) {
    case 'flag':
    case 'reserved':
      return value === '1' || value === 'on' ? 'on' : 'off';
    case 'remote':
      return value ? (remotes.find((r) => String(r.id) === value)?.name ?? `#${value}`) : 'none';
    case 'text':
      return value || '—';
  }
}

/**
 * Every setting with what it means and a control of its type: switches save at once, text saves
 * with its button after the same check the API makes (PUT is all or nothing, one key at a time).
 */
export function SettingsPage() {
  const data = useLive(load, [], 30_000);
  const action = useAction();
  const [edit, setEdit] = useState<Record<string, string>>({});
  const [notice, setNotice] = useState<string>();
  const write = canWrite();
  const remotes = data.data?.remotes ?? [];
  useEffect(() => {
    const loaded = data.data?.settings ?? {};
    setEdit((e) => Object.fromEntries(Object.entries(e).filter(([k, v]) => loaded[k] !== v)));
  }, [data.data]);
  /** Saves one key; the edit stays on screen until the reload shows it (a refusal drops a switch's). */
  const save = async (key: string, value: string) => {
    const ok = await action.run(() => unwrap(api.PUT('/api/settings', { body: { [key]: value } })));
    if (ok) setNotice(`${meta(key).title} set to ${shown(meta(key), value, remotes)}.`);
    // A saved switch keeps its edit until the reload shows the new value (no flicker back).
    if (ok ? meta(key).control.kind === 'text' : meta(key).control.kind !== 'text')
      setEdit((e) => {
        const { [key]: _, ...rest } = e;
        return rest;
      });
    if (ok) data.reload();
  };
  const control = (key: string, value: string) => {
    const m = meta(key);
    const id = `setting-${key.replace(/\W/g, '-')}`;
    const c = m.control;
    if (!write) return shown(m, value, remotes);
    if (c.kind === 'reserved') return <span>{shown(m, value, remotes)} (no effect)</span>;
    if (c.kind === 'flag')
      return (
        <label class="check switch">
          <input
            type="checkbox"
            role="switch"
            aria-describedby={`${id}-about`}
            checked={(edit[key] ?? value) === c.on}
            disabled={action.busy}
            onChange={(e) => {
              const next = e.currentTarget.checked ? c.on : c.off;
              setEdit({ ...edit, [key]: next });
              void save(key, next);
            }}
          />
          {m.title}: {(edit[key] ?? value) === c.on ? 'on' : 'off'}
        </label>
      );
    if (c.kind === 'remote')
      return (
        <select
          aria-label={m.title}
          aria-describedby={`${id}-about`}
          value={value}
          disabled={action.busy}
          onChange={(e) => void save(key, e.currentTarget.value)}
        >
          <option value="">none</option>
          {remotes.map((r) => (
            <option key={r.id} value={String(r.id)}>
              {r.name}
            </option>
          ))}
          {value && !remotes.some((r) => String(r.id) === value) && <option value={value}>#{value}</option>}
        </select>
      );
    const text = edit[key] ?? value;
    const problem = textProblem(c, text);
    return (
      <form
        class="inline"
        onSubmit={async (e) => {
          e.preventDefault();
          if (!problem) await save(key, text);
        }}
      >
        <input
          aria-label={m.title}
          aria-describedby={`${id}-about${problem ? ` ${id}-problem` : ''}`}
          aria-invalid={problem ? true : undefined}
          value={text}
          placeholder={c.placeholder}
          onInput={(e) => setEdit({ ...edit, [key]: e.currentTarget.value })}
        />
        <button type="submit" aria-label={`Save ${m.title}`} disabled={!!problem || text === value}>
          Save
        </button>
        {problem && (
          <small class="field-error" id={`${id}-problem`}>
            {problem}
          </small>
        )}
      </form>
    );
  };
  return (
    <Page title="Settings">
      <ErrorLine error={data.error} />
      <ErrorLine error={action.error} />
      <Notice text={notice} />
      <ListTable caption="Settings" columns={['Setting', 'Value', 'What it does']}>
        {Object.entries(data.data?.settings ?? {}).map(([key, value]) => {
          const m = meta(key);
          const id = `setting-${key.replace(/\W/g, '-')}`;
          return (
            <tr key={key}>
              <th scope="row">
                {m.title}
                <br />
                <code class="key">{key}</code>
              </th>
              <td>{control(key, value)}</td>
              <td class="about" id={`${id}-about`}>
                {m.description}
              </td>
            </tr>
          );
        })}
      </ListTable>
    </Page>
  );
}

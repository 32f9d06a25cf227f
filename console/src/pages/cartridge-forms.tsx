import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { ErrorLine, useAction, CardForm } from '../components/common';
import { useLive } from '../live';

const loadLibraries = () => unwrap(api.GET('/api/libraries'));

/** POST /api/cartridges: `count` new cartridges with generated labels, or one given label. */
export function MintForm({ onMinted }: { onMinted: (note: string) => void }) {
  const libs = useLive(loadLibraries, [], 30_000);
  const action = useAction();
  const [library, setLibrary] = useState(0);
  const [count, setCount] = useState(1);
  const [label, setLabel] = useState('');
  const active = libs.data?.filter((l) => l.state === 'active') ?? [];
  const lib = library || active[0]?.id || 0;
  return (
    <CardForm
      id="mint-title"
      title="Mint cartridges"
      onSubmit={async () => {
        await action.run(async () => {
          const r = await unwrap(
            api.POST('/api/cartridges', { body: label ? { library: lib, label } : { library: lib, count } }),
          );
          onMinted(`Minted ${r.created.map((c) => c.label).join(', ')} (${r.size_gb} GB each).`);
          setLabel('');
        });
      }}
    >
      <label>
        Library
        <select value={lib} onChange={(e) => setLibrary(Number(e.currentTarget.value))}>
          {active.map((l) => (
            <option key={l.id} value={l.id}>
              {l.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Count{' '}
        <input
          type="number"
          min={1}
          max={400}
          value={count}
          onInput={(e) => setCount(Number(e.currentTarget.value))}
        />
      </label>
      <label>
        Or one label{' '}
        <input value={label} onInput={(e) => setLabel(e.currentTarget.value)} placeholder="generated" />
      </label>
      <ErrorLine error={action.error} />
      <button type="submit" disabled={action.busy}>
        Mint
      </button>
    </CardForm>
  );
}

/** POST /api/cartridges/{label}/import: a generation from a remote's catalog back into a library. */
export function ImportForm(props: {
  remotes: { id: number; name: string }[];
  onStarted: (note: string) => void;
}) {
  const action = useAction();
  const [f, setF] = useState({ label: '', generation: '', remote: 0, system_name: '' });
  const remote = f.remote || props.remotes[0]?.id || 0;
  return (
    <CardForm
      id="import-title"
      title="Import from a remote"
      onSubmit={async () => {
        await action.run(async () => {
          const j = await unwrap(
            api.POST('/api/cartridges/{label}/import', {
              params: { path: { label: f.label } },
              body: {
                remote_id: remote,
                generation: f.generation,
                ...(f.system_name ? { system_name: f.system_name } : {}),
              },
            }),
          );
          props.onStarted(`Job #${j.id}: import of ${j.label} ${j.state}.`);
        });
      }}
    >
      <label>
        Label <input value={f.label} required onInput={(e) => setF({ ...f, label: e.currentTarget.value })} />
      </label>
      <label>
        Remote
        <select value={remote} onChange={(e) => setF({ ...f, remote: Number(e.currentTarget.value) })}>
          {props.remotes.map((r) => (
            <option key={r.id} value={r.id}>
              {r.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Generation{' '}
        <input
          value={f.generation}
          required
          onInput={(e) => setF({ ...f, generation: e.currentTarget.value })}
        />
      </label>
      <label>
        From system{' '}
        <input
          value={f.system_name}
          onInput={(e) => setF({ ...f, system_name: e.currentTarget.value })}
          placeholder="this one"
        />
      </label>
      <ErrorLine error={action.error} />
      <button type="submit" disabled={action.busy}>
        Import
      </button>
    </CardForm>
  );
}

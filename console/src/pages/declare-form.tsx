import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { ErrorLine, useAction, CardForm } from '../components/common';
import { useLive } from '../live';

const loadChoices = async () => {
  const [models, pools] = await Promise.all([unwrap(api.GET('/api/models')), unwrap(api.GET('/api/pools'))]);
  return { models, pools };
};

/** Declares a library (POST /api/libraries); it goes live at the next apply. */
export function DeclareForm({ onDeclared }: { onDeclared: (note: string) => void }) {
  const choices = useLive(loadChoices, [], 60_000);
  const action = useAction();
  const [f, setF] = useState({
    name: '',
    product: '3573-TL',
    drive_product: 'ULT3580-TD8',
    num_drives: 2,
    num_slots: 20,
    num_map: 2,
    label_prefix: '',
    pool_id: 0,
  });
  const set =
    (k: keyof typeof f, numeric = false) =>
    (e: Event) => {
      const v = (e.currentTarget as HTMLInputElement).value;
      setF({ ...f, [k]: numeric ? Number(v) : v });
    };
  const variants = choices.data?.models.libraries.flatMap((m) => m.variants.filter((v) => v.creatable)) ?? [];
  const pools = choices.data?.pools.filter((p) => p.state === 'active') ?? [];
  const poolId = f.pool_id || pools[0]?.id || 0;
  return (
    <CardForm
      id="declare-title"
      title="Declare a library"
      onSubmit={async () => {
        await action.run(async () => {
          const r = await unwrap(
            api.POST('/api/libraries', { body: { ...f, name: f.name || undefined, pool_id: poolId } }),
          );
          onDeclared(`Declared library ${r.library} (${r.serial}): ${r.note}`);
        });
      }}
    >
      <label>
        Name <input name="name" value={f.name} onInput={set('name')} />
      </label>
      <label>
        Model
        <select name="product" value={f.product} onChange={set('product')}>
          {variants.map((v) => (
            <option key={v.product} value={v.product}>
              {v.display} ({v.product})
            </option>
          ))}
        </select>
      </label>
      <label>
        Drive
        <select name="drive_product" value={f.drive_product} onChange={set('drive_product')}>
          {choices.data?.models.drives.map((d) => (
            <option key={d.product} value={d.product}>
              {d.display} ({d.product})
            </option>
          ))}
        </select>
      </label>
      <label>
        Drives{' '}
        <input
          name="num_drives"
          type="number"
          min={1}
          value={f.num_drives}
          onInput={set('num_drives', true)}
        />
      </label>
      <label>
        Slots{' '}
        <input
          name="num_slots"
          type="number"
          min={1}
          max={400}
          value={f.num_slots}
          onInput={set('num_slots', true)}
        />
      </label>
      <label>
        I/E slots{' '}
        <input
          name="num_map"
          type="number"
          min={0}
          max={32}
          value={f.num_map}
          onInput={set('num_map', true)}
        />
      </label>
      <label>
        Label prefix{' '}
        <input name="label_prefix" value={f.label_prefix} onInput={set('label_prefix')} required />
      </label>
      <label>
        Pool
        <select name="pool_id" value={poolId} onChange={set('pool_id', true)}>
          {pools.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <ErrorLine error={action.error} />
      <button type="submit" disabled={action.busy}>
        Declare
      </button>
    </CardForm>
  );
}

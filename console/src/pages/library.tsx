import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { LibraryGrid, type Drive } from '../components/library-grid';
import { canWrite, Confirm, ErrorLine, Notice, Page, useAction, ListTable } from '../components/common';
import { useLive } from '../live';
import { cartridgeSets, loadJobs, loadStatus } from '../status';
import { DeclareForm } from './declare-form';

type LibraryRow = Awaited<ReturnType<typeof loadLibraries>>[number];
const loadLibraries = () => unwrap(api.GET('/api/libraries'));

/** Load/unload by click: pick a cartridge in a slot, then an empty drive; a loaded drive unloads. */
function LiveLibraries() {
  const status = useLive(loadStatus);
  const jobs = useLive(() => loadJobs(100));
  const [selected, setSelected] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const action = useAction();
  const { evicted, exporting } = cartridgeSets(status.data, jobs.data);
  const write = canWrite();

  const onDrive = (lib: number) => async (d: Drive) => {
    setNotice(undefined);
    if (d.loaded) {
      const ok = await action.run(() =>
        unwrap(
          api.POST('/api/libraries/{lib}/drives/{index}/unload', {
            params: { path: { lib: String(lib), index: String(d.index) } },
          }),
        ),
      );
      if (ok) setNotice(`Drive ${d.index}: ${d.loaded} returned to its slot.`);
    } else if (selected) {
      const label = selected;
      const ok = await action.run(() =>
        unwrap(
          api.POST('/api/libraries/{lib}/drives/{index}/load', {
            params: { path: { lib: String(lib), index: String(d.index) } },
            body: { label },
          }),
        ),
      );
      if (ok) {
        setNotice(`Drive ${d.index}: ${label} loaded.`);
        setSelected(undefined);
      }
    } else {
      action.setError(`Pick a cartridge in a slot first, then the empty drive to load it into.`);
    }
    status.reload();
  };

  return (
    <>
      <ErrorLine error={status.error} />
      {write && (
        <p class="hint">
          {selected
            ? `Selected ${selected}: click an empty drive to load it.`
            : 'Click a cartridge, then an empty drive, to load it; click a loaded drive to unload it.'}
        </p>
      )}
      <ErrorLine error={action.error} />
      <Notice text={notice} />
      {status.data?.libraries.map((lib) => (
        <article class="library" key={lib.library.id} aria-labelledby={`live-${lib.library.id}`}>
          <h2 id={`live-${lib.library.id}`}>
            {lib.library.name} <small>{lib.library.serial}</small>
          </h2>
          <LibraryGrid
            lib={lib}
            evicted={evicted}
            exporting={exporting}
            interactive={
              write
                ? {
                    selected,
                    onSlot: (label) => setSelected((s) => (s === label ? undefined : label)),
                    onDrive: (d) => void onDrive(lib.library.id)(d),
                  }
                : undefined
            }
          />
        </article>
      ))}
    </>
  );
}

/** The controller's Ready condition: its reason as a badge, its message as the tooltip. */
function ReadyBadge({ row }: { row: LibraryRow }) {
  const ready = row.conditions.find((c) => c.type === 'Ready');
  if (!ready) return <span class="badge off">{row.phase}</span>;
  return (
    <span class={`badge ${ready.status === 'True' ? 'ok' : 'off'}`} title={ready.message}>
      {ready.reason}
    </span>
  );
}

export function LibraryPage() {
  const libs = useLive(loadLibraries);
  const [dialog, setDialog] = useState<'apply' | LibraryRow>();
  const [notice, setNotice] = useState<string>();
  const action = useAction();
  const write = canWrite();
  const pending = libs.data?.some((l) => l.state === 'pending_restart');

  return (
    <Page title="Library">
      <ErrorLine error={libs.error} />
      <Notice text={notice} />
      <ListTable
        caption="Declared libraries"
        columns={['Name', 'Model', 'Serial', 'Drives', 'State', 'Ready', write && 'Actions']}
      >
        {libs.data?.map((l) => (
          <tr key={l.id}>
            <td>{l.name}</td>
            <td>
              {l.product} / {l.drive_model}
            </td>
            <td>{l.serial}</td>
            <td>{l.num_drives}</td>
            <td>{l.state === 'active' ? 'active' : 'pending apply'}</td>
            <td>
              <ReadyBadge row={l} />
            </td>
            {write && (
              <td>
                <button
                  type="button"
                  class="danger"
                  onClick={() => (action.setError(undefined), setDialog(l))}
                >
                  Delete {l.name}
                </button>
              </td>
            )}
          </tr>
        ))}
      </ListTable>
      {write && (
        <>
          <DeclareForm onDeclared={(note) => (setNotice(note), libs.reload())} />
          <p>
            <button
              type="button"
              class={pending ? 'primary' : ''}
              onClick={() => (action.setError(undefined), setDialog('apply'))}
            >
              Apply declared libraries
            </button>
          </p>
        </>
      )}
      {dialog === 'apply' && (
        <Confirm
          title="Apply the declared libraries?"
          action="Apply"
          error={action.error}
          onClose={() => setDialog(undefined)}
          onConfirm={() =>
            action.run(async () => {
              const r = await unwrap(api.POST('/api/libraries/apply', { body: { confirm: 'apply' } }));
              setNotice(`Applied: ${r.steps.join('; ')}`);
              libs.reload();
            })
          }
        >
          <p>
            The tape emulator restarts and every host session drops for a minute or two. Afterwards, vary the
            host's device descriptions off and on.
          </p>
        </Confirm>
      )}
      {dialog && dialog !== 'apply' && (
        <Confirm
          title={`Delete library ${dialog.name}?`}
          action="Delete library"
          typed={dialog.name}
          acknowledge="I understand: every cartridge of this library is erased"
          error={action.error}
          onClose={() => setDialog(undefined)}
          onConfirm={() =>
            action.run(async () => {
              const r = await unwrap(
                api.DELETE('/api/libraries/{lib}', {
                  params: { path: { lib: String(dialog.id) } },
                  body: { confirm: dialog.name, acknowledge: 'I understand' },
                }),
              );
              setNotice(`Deleted ${r.name}: ${r.cartridges_deleted} cartridge(s) erased.`);
              libs.reload();
            })
          }
        >
          <p>Its cartridges are erased. A live library makes the appliance reboot.</p>
        </Confirm>
      )}
      <LiveLibraries />
    </Page>
  );
}

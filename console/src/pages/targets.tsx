import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { canWrite, ErrorLine, Page, useAction, ListTable, CardForm, RowButton } from '../components/common';
import { useLive } from '../live';
import { FcPorts } from './fc-ports';
import {
  EditScopeDialog,
  LibraryScopePicker,
  libraryScopeLabel,
  parseScope,
  scopeLabel,
  type InitiatorRow,
} from './initiator-scope';
import { useNames } from '../names';

const load = () => unwrap(api.GET('/api/targets'));

/** Initiators (iSCSI IQNs and FC WWPNs) with their scope, the LUN table and the FC ports. */
export function TargetsPage() {
  const targets = useLive(load);
  const action = useAction();
  const write = canWrite();
  const [f, setF] = useState({
    wwpn: '',
    alias: '',
    fabric: 'iscsi' as 'iscsi' | 'fc',
    ports: '',
    libraries: undefined as number[] | undefined,
  });
  const names = useNames();
  const [editing, setEditing] = useState<InitiatorRow>();
  const t = targets.data;
  return (
    <Page title="Targets and initiators">
      <ErrorLine error={targets.error ?? t?.error} />
      <ListTable
        caption="Registered initiators"
        columns={['Initiator', 'Alias', 'Fabric', 'Ports', 'Libraries', 'Logged in', write && 'Actions']}
      >
        {t?.initiators.map((i) => (
          <tr key={i.wwpn}>
            <td>{i.wwpn}</td>
            <td>{i.alias}</td>
            <td>{i.fabric}</td>
            <td>{i.fabric === 'fc' ? scopeLabel(i.ports) : '—'}</td>
            <td>{libraryScopeLabel(i.libraries, names.library)}</td>
            <td>{i.logged_in ? 'yes' : 'no'}</td>
            {write && (
              <td>
                <button type="button" aria-label={`Edit scope of ${i.wwpn}`} onClick={() => setEditing(i)}>
                  Edit scope
                </button>
                <RowButton
                  danger
                  label={`Deregister ${i.wwpn}`}
                  action={action}
                  run={async () => {
                    await unwrap(
                      api.DELETE('/api/targets/acls/{wwpn}', { params: { path: { wwpn: i.wwpn } } }),
                    );
                    targets.reload();
                  }}
                >
                  Deregister
                </RowButton>
              </td>
            )}
          </tr>
        ))}
      </ListTable>
      <ErrorLine error={action.error} />
      {editing && (
        <EditScopeDialog
          initiator={editing}
          libraries={names.libraries}
          onClose={() => setEditing(undefined)}
          onSaved={targets.reload}
        />
      )}
      {write && (
        <CardForm
          id="register-title"
          title="Register an initiator"
          onSubmit={async () => {
            await action.run(async () => {
              const libraries = f.libraries;
              const ports = f.fabric === 'fc' ? parseScope(f.ports) : undefined;
              await unwrap(
                api.POST('/api/targets/acls', {
                  body: {
                    wwpn: f.wwpn,
                    alias: f.alias,
                    fabric: f.fabric,
                    ...(ports ? { ports } : {}),
                    ...(libraries ? { libraries } : {}),
                  },
                }),
              );
              setF({ ...f, wwpn: '', alias: '' });
              targets.reload();
            });
          }}
        >
          <label>
            Fabric
            <select
              value={f.fabric}
              onChange={(e) => setF({ ...f, fabric: e.currentTarget.value as 'iscsi' | 'fc' })}
            >
              <option value="iscsi">iSCSI</option>
              <option value="fc">Fibre Channel</option>
            </select>
          </label>
          <label>
            {f.fabric === 'iscsi' ? 'Initiator IQN' : 'WWPN'}
            <input value={f.wwpn} required onInput={(e) => setF({ ...f, wwpn: e.currentTarget.value })} />
          </label>
          <label>
            Alias <input value={f.alias} onInput={(e) => setF({ ...f, alias: e.currentTarget.value })} />
          </label>
          {f.fabric === 'fc' && (
            <label>
              Port WWPNs (scope; empty for all, none for none)
              <input value={f.ports} onInput={(e) => setF({ ...f, ports: e.currentTarget.value })} />
            </label>
          )}
          <LibraryScopePicker
            value={f.libraries}
            libraries={names.libraries}
            onChange={(libraries) => setF({ ...f, libraries })}
          />
          <button type="submit" disabled={action.busy}>
            Register
          </button>
        </CardForm>
      )}
      <ListTable caption="LUNs" columns={['LUN', 'Device', 'Library']}>
        {t?.luns.map((l) => (
          <tr key={l.lun}>
            <td>{l.lun}</td>
            <td>{l.device}</td>
            <td>{names.library(l.library)}</td>
          </tr>
        ))}
      </ListTable>
      {t && <FcPorts noHba={t.fc.no_hba} ports={t.fc.ports} write={write} onChange={targets.reload} />}
    </Page>
  );
}

import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { canWrite, ErrorLine, Page, useAction, ListTable, CardForm, RowButton } from '../components/common';
import { useLive } from '../live';

const load = () => unwrap(api.GET('/api/targets'));

/** Initiators (iSCSI IQNs and FC WWPNs) with their library scope, and the FC ports. */
export function TargetsPage() {
  const targets = useLive(load);
  const action = useAction();
  const write = canWrite();
  const [f, setF] = useState({ wwpn: '', alias: '', fabric: 'iscsi' as 'iscsi' | 'fc', libraries: '' });
  const t = targets.data;
  return (
    <Page title="Targets and initiators">
      <ErrorLine error={targets.error ?? t?.error} />
      <ListTable
        caption="Registered initiators"
        columns={['Initiator', 'Alias', 'Fabric', 'Libraries', 'Logged in', write && 'Actions']}
      >
        {t?.initiators.map((i) => (
          <tr key={i.wwpn}>
            <td>{i.wwpn}</td>
            <td>{i.alias}</td>
            <td>{i.fabric}</td>
            <td>{i.libraries || 'all'}</td>
            <td>{i.logged_in ? 'yes' : 'no'}</td>
            {write && (
              <td>
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
      {write && (
        <CardForm
          id="register-title"
          title="Register an initiator"
          onSubmit={async () => {
            await action.run(async () => {
              const libraries = f.libraries
                .split(/[\s,]+/)
                .filter(Boolean)
                .map(Number);
              await unwrap(
                api.POST('/api/targets/acls', {
                  body: {
                    wwpn: f.wwpn,
                    alias: f.alias,
                    fabric: f.fabric,
                    ...(libraries.length ? { libraries } : {}),
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
          <label>
            Library ids (scope; empty for all)
            <input
              value={f.libraries}
              onInput={(e) => setF({ ...f, libraries: e.currentTarget.value })}
              placeholder="1, 2"
            />
          </label>
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
            <td>{l.library}</td>
          </tr>
        ))}
      </ListTable>
      <p>Fibre Channel: {t?.fc.no_hba ? 'no HBA on this node' : `${t?.fc.ports.length ?? 0} port(s)`}</p>
    </Page>
  );
}

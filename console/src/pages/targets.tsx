import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { canWrite, ErrorLine, Page, useAction } from '../components/common';
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
      <table class="list">
        <caption>Registered initiators</caption>
        <thead>
          <tr>
            <th scope="col">Initiator</th>
            <th scope="col">Alias</th>
            <th scope="col">Fabric</th>
            <th scope="col">Libraries</th>
            <th scope="col">Logged in</th>
            {write && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {t?.initiators.map((i) => (
            <tr key={i.wwpn}>
              <td>{i.wwpn}</td>
              <td>{i.alias}</td>
              <td>{i.fabric}</td>
              <td>{i.libraries || 'all'}</td>
              <td>{i.logged_in ? 'yes' : 'no'}</td>
              {write && (
                <td>
                  <button
                    type="button"
                    class="danger"
                    aria-label={`Deregister ${i.wwpn}`}
                    onClick={() =>
                      void action.run(async () => {
                        await unwrap(
                          api.DELETE('/api/targets/acls/{wwpn}', { params: { path: { wwpn: i.wwpn } } }),
                        );
                        targets.reload();
                      })
                    }
                  >
                    Deregister
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <ErrorLine error={action.error} />
      {write && (
        <form
          class="card form"
          aria-labelledby="register-title"
          onSubmit={async (e) => {
            e.preventDefault();
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
          <h2 id="register-title">Register an initiator</h2>
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
        </form>
      )}
      <table class="list">
        <caption>LUNs</caption>
        <thead>
          <tr>
            <th scope="col">LUN</th>
            <th scope="col">Device</th>
            <th scope="col">Library</th>
          </tr>
        </thead>
        <tbody>
          {t?.luns.map((l) => (
            <tr key={l.lun}>
              <td>{l.lun}</td>
              <td>{l.device}</td>
              <td>{l.library}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p>Fibre Channel: {t?.fc.no_hba ? 'no HBA on this node' : `${t?.fc.ports.length ?? 0} port(s)`}</p>
    </Page>
  );
}

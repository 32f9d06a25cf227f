import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { Confirm, ErrorLine, ListTable, RowButton, useAction } from '../components/common';

interface Port {
  host: string;
  wwpn: string;
  state: string;
  speed: string;
  serving: boolean;
  built: boolean;
}

const setServing = (wwn: string, serving: boolean) =>
  unwrap(api.PUT('/api/targets/ports', { body: { wwn, serving } }));

/**
 * The node's FC target ports. Stopping a port drops every session on it (spec §4.1 rule 3), so it
 * asks first; serving it again needs no confirmation.
 */
export function FcPorts(props: { noHba: boolean; ports: Port[]; write: boolean; onChange: () => void }) {
  const action = useAction();
  const [stopping, setStopping] = useState<Port>();
  if (props.noHba) return <p>Fibre Channel: no HBA on this node.</p>;
  return (
    <>
      <ListTable
        caption="Fibre Channel ports"
        columns={['Port', 'Adapter', 'Link', 'Speed', 'Serving', 'Built', props.write && 'Actions']}
      >
        {props.ports.map((p) => (
          <tr key={p.wwpn}>
            <td>{p.wwpn}</td>
            <td>{p.host}</td>
            <td>{p.state}</td>
            <td>{p.speed}</td>
            <td>{p.serving ? 'yes' : 'no'}</td>
            <td>{p.built ? 'yes' : 'no'}</td>
            {props.write && (
              <td>
                {p.serving ? (
                  <button
                    type="button"
                    class="danger"
                    aria-label={`Stop serving ${p.wwpn}`}
                    onClick={() => setStopping(p)}
                  >
                    Stop serving
                  </button>
                ) : (
                  <RowButton
                    label={`Serve ${p.wwpn}`}
                    action={action}
                    run={async () => {
                      await setServing(p.wwpn, true);
                      props.onChange();
                    }}
                  >
                    Serve
                  </RowButton>
                )}
              </td>
            )}
          </tr>
        ))}
      </ListTable>
      {!stopping && <ErrorLine error={action.error} />}
      {stopping && (
        <Confirm
          title={`Stop serving ${stopping.wwpn}?`}
          action="Stop serving"
          error={action.error}
          onClose={() => setStopping(undefined)}
          onConfirm={() =>
            action.run(async () => {
              await setServing(stopping.wwpn, false);
              props.onChange();
            })
          }
        >
          <p>
            Every host session on this port drops now. The port stays excluded (setting{' '}
            <code>fc.disabled_ports</code>) until it is served again.
          </p>
        </Confirm>
      )}
    </>
  );
}

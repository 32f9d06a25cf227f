import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { Confirm, useAction } from '../components/common';

/**
 * A scope as the operator types it: empty is "all" (the field is left out of the request, as the
 * spec's scope rules say), `none` or `-` is the empty list, anything else a comma list.
 */
export function parseScope(text: string): string[] | undefined {
  const t = text.trim();
  if (!t) return undefined;
  if (t === '-' || t.toLowerCase() === 'none') return [];
  return t.split(/[\s,]+/).filter(Boolean);
}

/** The targets view's scope string ('' all, '-' none, else a comma list) as the form shows it. */
export const scopeText = (s: string) => (s === '-' ? 'none' : s.split(',').join(', '));

export const scopeLabel = (s: string) => (s === '' ? 'all' : s === '-' ? 'none' : s);

export interface InitiatorRow {
  wwpn: string;
  alias: string;
  fabric: string;
  ports: string;
  libraries: string;
  logged_in: boolean;
}

/**
 * Edits one initiator's alias and scope (PUT /api/targets/acls/{wwpn}). A new LUN map bounces a
 * logged-in host's session (spec §4.1 rule 2), so the dialog says so before saving.
 */
export function EditScopeDialog(props: {
  initiator: InitiatorRow;
  onClose: () => void;
  onSaved: () => void;
}) {
  const i = props.initiator;
  const action = useAction();
  const [f, setF] = useState({
    alias: i.alias,
    ports: scopeText(i.ports),
    libraries: scopeText(i.libraries),
  });
  return (
    <Confirm
      title={`Scope of ${i.alias || i.wwpn}`}
      action="Save scope"
      error={action.error}
      onClose={props.onClose}
      onConfirm={() =>
        action.run(async () => {
          const ports = parseScope(f.ports);
          const libraries = parseScope(f.libraries)?.map(Number);
          await unwrap(
            api.PUT('/api/targets/acls/{wwpn}', {
              params: { path: { wwpn: i.wwpn } },
              body: {
                alias: f.alias,
                ...(ports ? { ports } : {}),
                ...(libraries ? { libraries } : {}),
              },
            }),
          );
          props.onSaved();
        })
      }
    >
      <p>
        Leave a scope empty for all, or type <code>none</code>.
        {i.logged_in && ' This host is logged in: a changed LUN map briefly bounces its session.'}
      </p>
      <label>
        Alias <input value={f.alias} onInput={(e) => setF({ ...f, alias: e.currentTarget.value })} />
      </label>
      {i.fabric === 'fc' && (
        <label>
          Port WWPNs
          <input value={f.ports} onInput={(e) => setF({ ...f, ports: e.currentTarget.value })} />
        </label>
      )}
      <label>
        Library ids
        <input value={f.libraries} onInput={(e) => setF({ ...f, libraries: e.currentTarget.value })} />
      </label>
    </Confirm>
  );
}

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

/** A library scope as the targets view gives it ('' all, '-' none, else ids) → ids, or undefined for all. */
export const libraryScope = (s: string): number[] | undefined =>
  s === '' ? undefined : s === '-' ? [] : s.split(',').map(Number);

/** The library scope by name: "all", "none" or the names, comma-separated. */
export const libraryScopeLabel = (s: string, name: (id: number) => string) =>
  s === '' || s === '-'
    ? scopeLabel(s)
    : s
        .split(',')
        .map((id) => name(Number(id)))
        .join(', ');

/**
 * Picks an initiator's libraries by name: all (the field is left out of the request), or only
 * the checked ones (none checked is the empty scope).
 */
export function LibraryScopePicker(props: {
  value: number[] | undefined;
  libraries: { id: number; name: string }[];
  onChange: (v: number[] | undefined) => void;
}) {
  const all = props.value === undefined;
  const chosen = props.value ?? [];
  return (
    <fieldset class="scope">
      <legend>Libraries</legend>
      <label class="check">
        <input type="radio" name="library-scope" checked={all} onChange={() => props.onChange(undefined)} />
        All libraries
      </label>
      <label class="check">
        <input type="radio" name="library-scope" checked={!all} onChange={() => props.onChange([])} />
        Only these libraries
      </label>
      {props.libraries.map((l) => (
        <label class="check indent" key={l.id}>
          <input
            type="checkbox"
            disabled={all}
            checked={!all && chosen.includes(l.id)}
            onChange={(e) =>
              props.onChange(e.currentTarget.checked ? [...chosen, l.id] : chosen.filter((id) => id !== l.id))
            }
          />
          {l.name}
        </label>
      ))}
    </fieldset>
  );
}

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
  libraries: { id: number; name: string }[];
  onClose: () => void;
  onSaved: () => void;
}) {
  const i = props.initiator;
  const action = useAction();
  const [f, setF] = useState({
    alias: i.alias,
    ports: scopeText(i.ports),
    libraries: libraryScope(i.libraries),
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
          const libraries = f.libraries;
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
        Leave the port scope empty for all, or type <code>none</code>.
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
      <LibraryScopePicker
        value={f.libraries}
        libraries={props.libraries}
        onChange={(libraries) => setF({ ...f, libraries })}
      />
    </Confirm>
  );
}

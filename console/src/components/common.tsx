import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from '../api/client';
import { session } from '../api/session';

export { bytes } from '../format';

export const canWrite = () => session.get()?.role === 'admin';

/** The API's refusal, worded as the error body says, in a live region screen readers announce. */
export function ErrorLine({ error }: { error: string | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

export function Notice({ text }: { text: string | undefined }) {
  return (
    <p class="notice" role="status" aria-live="polite">
      {text ?? ''}
    </p>
  );
}

/** Runs an action, keeping its error (the API's message) and busy state for the form. */
export function useAction() {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const run = async (fn: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await fn();
      return true;
    } catch (err) {
      setError(messageOf(err));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run, setError };
}

/** A bar with its percentage; `text` (e.g. "80 MB of 12 TB") is shown before the percentage. */
export function Progress(props: { value: number; max: number; label: string; text?: string }) {
  const { value, max, label, text } = props;
  const pct = max > 0 ? Math.min(100, Math.round((value / max) * 100)) : 0;
  return (
    <span
      class="progress"
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={pct}
    >
      <span class="bar" style={{ width: `${pct}%` }} />
      <span class="pct">{text ? `${text} · ${pct}%` : `${pct}%`}</span>
    </span>
  );
}

/**
 * A modal confirmation (native <dialog>: focus is trapped and Escape cancels). `typed`, when set,
 * is the text the operator must type, as the spec's confirmations require.
 */
export function Confirm(props: {
  title: string;
  children: ComponentChildren;
  typed?: string;
  acknowledge?: string;
  action: string;
  onConfirm: () => Promise<boolean>;
  onClose: () => void;
  error?: string | undefined;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [text, setText] = useState('');
  const [ack, setAck] = useState(false);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  const ready = (!props.typed || text === props.typed) && (!props.acknowledge || ack);
  return (
    <dialog ref={ref} onClose={props.onClose} aria-labelledby="confirm-title">
      <form
        method="dialog"
        onSubmit={async (e) => {
          e.preventDefault();
          if (ready && (await props.onConfirm())) ref.current?.close();
        }}
      >
        <h2 id="confirm-title">{props.title}</h2>
        <div>{props.children}</div>
        {props.typed && (
          <label>
            Type <code>{props.typed}</code> to confirm
            <input value={text} onInput={(e) => setText(e.currentTarget.value)} autoComplete="off" />
          </label>
        )}
        {props.acknowledge && (
          <label class="check">
            <input type="checkbox" checked={ack} onChange={(e) => setAck(e.currentTarget.checked)} />
            {props.acknowledge}
          </label>
        )}
        <ErrorLine error={props.error} />
        <div class="actions">
          <button type="button" onClick={() => ref.current?.close()}>
            Cancel
          </button>
          <button type="submit" class="danger" disabled={!ready}>
            {props.action}
          </button>
        </div>
      </form>
    </dialog>
  );
}

export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · VTL console`;
  }, [title]);
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">{title}</h1>
      {children}
    </section>
  );
}

/**
 * The pages' list table: a caption screen readers announce and column headers (with a class, e.g.
 * `opt` for one a narrow screen hides); a column given as `false` (e.g. Actions for a read-only
 * user) is left out. The rows are the children.
 */
export function ListTable(props: {
  caption: ComponentChildren;
  columns: (string | { label: string; class: string } | false)[];
  children: ComponentChildren;
}) {
  return (
    <table class="list">
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((c) =>
            typeof c === 'object' ? (
              <th key={c.label} scope="col" class={c.class}>
                {c.label}
              </th>
            ) : (
              c && (
                <th key={c} scope="col">
                  {c}
                </th>
              )
            ),
          )}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  );
}

/** A card form titled by its heading (its accessible name); submitting never reloads the page. */
export function CardForm(props: {
  id: string;
  title: string;
  onSubmit: () => unknown;
  children: ComponentChildren;
}) {
  return (
    <form
      class="card form"
      aria-labelledby={props.id}
      onSubmit={(e) => {
        e.preventDefault();
        void props.onSubmit();
      }}
    >
      <h2 id={props.id}>{props.title}</h2>
      {props.children}
    </form>
  );
}

/**
 * A table row's button: its accessible name says which row it acts on, and it runs through the
 * page's action so a refusal shows on the page's error line.
 */
export function RowButton(props: {
  label: string;
  danger?: boolean;
  action: ReturnType<typeof useAction>;
  run: () => Promise<unknown>;
  children: ComponentChildren;
}) {
  return (
    <button
      type="button"
      class={props.danger ? 'danger' : undefined}
      aria-label={props.label}
      onClick={() => void props.action.run(props.run)}
    >
      {props.children}
    </button>
  );
}

/**
 * A required text or password input under its label, bound to a state value (the login and
 * password forms). `problem` names the element that says what is wrong with the value.
 */
export function Field(props: {
  label: string;
  value: string;
  onValue: (value: string) => void;
  type?: 'text' | 'password';
  name?: string;
  autoComplete?: string;
  minLength?: number;
  problem?: string;
}) {
  return (
    <label>
      {props.label}{' '}
      <input
        name={props.name}
        // preact types a password input apart from a text one; both take the same attributes here.
        type={(props.type ?? 'text') as 'text'}
        autoComplete={props.autoComplete}
        minLength={props.minLength}
        value={props.value}
        aria-invalid={props.problem ? true : undefined}
        aria-describedby={props.problem}
        onInput={(e) => props.onValue(e.currentTarget.value)}
        required
      />
    </label>
  );
}

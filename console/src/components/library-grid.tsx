import { useLayoutEffect, useRef } from 'preact/hooks';
import type { paths } from '../api/client';

export type StatusView = paths['/api/status']['get']['responses']['200']['content']['application/json'];
export type LibraryView = StatusView['libraries'][number];
export type Drive = LibraryView['drives'][number];
export type CartridgeState = 'resident' | 'in-drive' | 'evicted' | 'exporting' | 'empty';

export interface GridProps {
  lib: LibraryView;
  /** Per label: evicted or resident (from the status view's cartridges). */
  evicted: Set<string>;
  /** Labels with an export or evict job under way. */
  exporting: Set<string>;
  /** Load/unload by click; absent for a read-only view. */
  interactive?: {
    selected: string | undefined;
    onSlot: (label: string) => void;
    onDrive: (drive: Drive) => void;
  };
}

function stateOf(label: string, evicted: Set<string>, exporting: Set<string>): CartridgeState {
  if (!label) return 'empty';
  if (exporting.has(label)) return 'exporting';
  if (evicted.has(label)) return 'evicted';
  return 'resident';
}

const STATE_TEXT: Record<CartridgeState, string> = {
  resident: 'resident',
  'in-drive': 'in drive',
  evicted: 'evicted',
  exporting: 'exporting',
  empty: 'empty',
};

function Tile(props: {
  name: string;
  label: string;
  state: CartridgeState;
  extra?: string | undefined;
  selected?: boolean;
  onClick?: (() => void) | undefined;
  kind: string;
}) {
  const text = `${props.name}: ${props.label || 'empty'}${props.label ? `, ${STATE_TEXT[props.state]}` : ''}${props.extra ? `, ${props.extra}` : ''}`;
  // One element and one text node per tile (the caption and activity come from data attributes
  // through CSS): a 400-slot library is 400 of these, and it must render within 100 ms.
  const cls = `tile ${props.kind} ${props.state}${props.selected ? ' selected' : ''}`;
  const attrs = { class: cls, 'aria-label': text, 'data-name': props.name, 'data-extra': props.extra };
  if (!props.onClick) return <li {...attrs}>{props.label || '—'}</li>;
  return (
    <li class="tile-cell">
      <button type="button" {...attrs} aria-pressed={props.selected} onClick={props.onClick}>
        {props.label || '—'}
      </button>
    </li>
  );
}

/** One library as an operator pictures it: drives, storage slots and import/export slots. */
export function LibraryGrid({ lib, evicted, exporting, interactive }: GridProps) {
  const id = lib.library.id;
  const ref = useRef<HTMLDivElement>(null);
  const start = performance.now();
  // How long a render of this grid takes up to laid-out DOM (the layout read forces it), kept as
  // a performance measure that the browser test reads: a 400-slot library must take < 100 ms.
  useLayoutEffect(() => {
    void ref.current?.offsetHeight;
    performance.measure(`vtl-grid-render:${lib.slots.length}`, { start, end: performance.now() });
  });
  const storage = lib.slots.filter((s) => s.kind === 'storage');
  const ie = lib.slots.filter((s) => s.kind === 'ie');
  const slotClick = (label: string) => (interactive && label ? () => interactive.onSlot(label) : undefined);
  return (
    <div class="library-grid" data-library={id} ref={ref}>
      <h3 class="grid-title">Drives</h3>
      <ul class="tiles drives" aria-label={`Drives of library ${lib.library.name}`}>
        {lib.drives.map((d) => (
          <Tile
            key={d.index}
            kind="drive"
            name={`Drive ${d.index}`}
            label={d.loaded}
            state={d.loaded ? 'in-drive' : 'empty'}
            extra={d.loaded ? d.activity : undefined}
            onClick={interactive ? () => interactive.onDrive(d) : undefined}
          />
        ))}
      </ul>
      <h3 class="grid-title">Storage slots ({storage.length})</h3>
      <ul class="tiles slots" aria-label={`Storage slots of library ${lib.library.name}`}>
        {storage.map((s) => (
          <Tile
            key={s.num}
            kind="slot"
            name={`Slot ${s.num}`}
            label={s.label}
            state={stateOf(s.label, evicted, exporting)}
            selected={!!s.label && interactive?.selected === s.label}
            onClick={slotClick(s.label)}
          />
        ))}
      </ul>
      {ie.length > 0 && (
        <>
          <h3 class="grid-title">Import/export slots ({ie.length})</h3>
          <ul class="tiles ie" aria-label={`Import/export slots of library ${lib.library.name}`}>
            {ie.map((s) => (
              <Tile
                key={s.num}
                kind="ie"
                name={`I/E ${s.num}`}
                label={s.label}
                state={stateOf(s.label, evicted, exporting)}
                selected={!!s.label && interactive?.selected === s.label}
                onClick={slotClick(s.label)}
              />
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

import { useEffect, useRef, useState } from 'preact/hooks';
import { followEvents, type LiveEvent } from './api/events';

type Listener = (e: LiveEvent) => void;
const listeners = new Set<Listener>();
const connListeners = new Set<(c: boolean) => void>();
let stop: (() => void) | undefined;
let connected = false;

/** Starts the one event stream of the page (after login) and fans it out to the hooks. */
export function startLive(): () => void {
  stop?.();
  stop = followEvents(
    (e) => listeners.forEach((l) => l(e)),
    (c) => {
      connected = c;
      connListeners.forEach((l) => l(c));
    },
  );
  return () => {
    stop?.();
    stop = undefined;
  };
}

export function onLiveEvent(l: Listener): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

export function useConnected(): boolean {
  const [c, setC] = useState(connected);
  useEffect(() => {
    connListeners.add(setC);
    return () => void connListeners.delete(setC);
  }, []);
  return c;
}

export interface Live<T> {
  data: T | undefined;
  error: string | undefined;
  reload: () => void;
}

/**
 * Data that follows the appliance: loaded once, then again shortly after any event (the stream
 * carries diffs; GET is the truth) and every `everyMs` as a fallback while the stream is down.
 */
export function useLive<T>(load: () => Promise<T>, deps: unknown[] = [], everyMs = 5000): Live<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const loadRef = useRef(load);
  loadRef.current = load;
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running = false;
    let again = false;
    const run = async () => {
      if (running) return void (again = true);
      running = true;
      try {
        const d = await loadRef.current();
        if (alive) {
          setData(() => d);
          setError(undefined);
        }
      } catch (err) {
        if (alive) setError(err instanceof Error ? err.message : String(err));
      } finally {
        running = false;
        if (again && alive) {
          again = false;
          void run();
        }
      }
    };
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void run(), 150);
    };
    void run();
    const off = onLiveEvent(soon);
    const poll = setInterval(() => void run(), everyMs);
    return () => {
      alive = false;
      off();
      clearInterval(poll);
      clearTimeout(timer);
    };
  }, [...deps, tick]);
  return { data, error, reload: () => setTick((t) => t + 1) };
}

import { useEffect, useState } from 'preact/hooks';

/** Hash routes (`#/cartridges`): the server serves one page, and no path can miss it. */
export function useRoute(): string[] {
  const read = () => (location.hash.replace(/^#\/?/, '') || 'overview').split('/');
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = () => setRoute(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

export const go = (path: string) => (location.hash = `#/${path}`);

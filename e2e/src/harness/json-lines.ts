/**
 * The keys that occur more than once in one object of a JSON text, at any depth (JSON.parse
 * keeps the last silently; log tools differ: some keep the first, some reject the line).
 * The text must be valid JSON (parse it first).
 */
export function duplicateKeys(json: string): string[] {
  const dups = new Set<string>();
  /** One entry per open container: the keys of an object, undefined for an array. */
  const open: (Set<string> | undefined)[] = [];
  let expectKey = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === '"') {
      let j = i + 1;
      while (json[j] !== '"') j += json[j] === '\\' ? 2 : 1;
      const keys = open.at(-1);
      if (expectKey && keys) {
        const key = JSON.parse(json.slice(i, j + 1)) as string;
        if (keys.has(key)) dups.add(key);
        keys.add(key);
        expectKey = false;
      }
      i = j;
    } else if (c === '{') {
      open.push(new Set());
      expectKey = true;
    } else if (c === '[') {
      open.push(undefined);
    } else if (c === '}' || c === ']') {
      open.pop();
    } else if (c === ',') {
      expectKey = open.at(-1) !== undefined;
    }
  }
  return [...dups];
}

/** The lines of a log stream that are not one JSON object each, or repeat a key: empty when clean. */
export function badLogLines(text: string): { line: string; why: string }[] {
  const bad: { line: string; why: string }[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      bad.push({ line, why: 'not JSON' });
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      bad.push({ line, why: 'not an object' });
    else if (duplicateKeys(line).length > 0)
      bad.push({ line, why: `repeats ${duplicateKeys(line).join(', ')}` });
  }
  return bad;
}

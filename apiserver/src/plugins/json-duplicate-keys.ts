/**
 * The first object key that occurs twice in one object of a JSON text, or undefined. Run on text
 * JSON.parse accepted (so it is well-formed): JSON.parse keeps the last of duplicate keys, which
 * would read one body two ways (a proxy or a logger may keep the first), so such bodies are refused.
 */
export function duplicateJsonKey(text: string): string | undefined {
  // One entry per open container: the keys seen so far for an object, undefined for an array.
  const stack: (Set<string> | undefined)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{') {
      stack.push(new Set());
      expectKey = true;
    } else if (c === '[') {
      stack.push(undefined);
      expectKey = false;
    } else if (c === '}' || c === ']') {
      stack.pop();
      expectKey = false;
    } else if (c === ',') {
      expectKey = stack.at(-1) !== undefined;
    } else if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        const keys = stack.at(-1)!;
        if (keys.has(key)) return key;
        keys.add(key);
        expectKey = false;
      }
      i = end;
    }
  }
  return undefined;
}

/**
 * A small, strict parser of the Prometheus text exposition format (0.0.4): it throws on anything
 * a Prometheus server would refuse, so a test that parses /metrics proves the endpoint scrapes.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES = ['_bucket', '_count', '_sum'];

/**
 * A sample's value as Prometheus reads it (Go's ParseFloat: NaN and Inf in any case). prom-client
 * writes an empty event-loop histogram's mean as `Nan`, which Prometheus and promtool accept.
 */
function parseValue(text: string, line: string): number {
  const special = text.toLowerCase();
  if (special === 'nan') return NaN;
  if (special === '+inf' || special === 'inf') return Infinity;
  if (special === '-inf') return -Infinity;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value in: ${line}`);
  return Number(text);
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    const name = text.slice(i, eq);
    if (eq < 0 || !LABEL.test(name)) throw new Error(`bad label name in: ${line}`);
    if (name in labels) throw new Error(`duplicate label ${name} in: ${line}`);
    if (text[eq + 1] !== '"') throw new Error(`unquoted label value in: ${line}`);
    let value = '';
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] !== '\\') {
        value += text[j];
        continue;
      }
      const next = text[++j];
      if (next === 'n') value += '\n';
      else if (next === '\\' || next === '"') value += next;
      else throw new Error(`bad escape in: ${line}`);
    }
    if (j >= text.length) throw new Error(`unterminated label value in: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (i < text.length) throw new Error(`expected , between labels in: ${line}`);
  }
  return labels;
}

export function parsePrometheus(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  let current: Family | undefined;
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) {
      f = { name, type: 'untyped', help: '', samples: [] };
      families.set(name, f);
    } else if (f !== current && f.samples.length > 0) throw new Error(`family ${name} is not contiguous`);
    current = f;
    return f;
  };
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, what, name, rest] = meta as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      const f = family(name);
      if (what === 'HELP') f.help = rest;
      else {
        if (!TYPES.has(rest)) throw new Error(`bad type in: ${line}`);
        if (f.samples.length > 0) throw new Error(`TYPE after samples in: ${line}`);
        f.type = rest;
      }
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(line);
    if (!m) throw new Error(`unparsable sample: ${line}`);
    const [, name, labelText, valueText] = m as unknown as [string, string, string | undefined, string];
    const base = SUFFIXES.find((s) => name.endsWith(s) && families.has(name.slice(0, -s.length)));
    const f = family(base ? name.slice(0, -(base as string).length) : name);
    const labels = parseLabels(labelText ?? '', line);
    const id = `${name}{${Object.entries(labels)
      .sort()
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(',')}}`;
    if (seen.has(id)) throw new Error(`duplicate series ${id}`);
    seen.add(id);
    f.samples.push({ name, labels, value: parseValue(valueText, line) });
  }
  return families;
}

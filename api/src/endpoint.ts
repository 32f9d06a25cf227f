/**
 * S3 endpoint syntax: `host`, `host:port` or an `http(s)://host[:port]` URL (no path, query or
 * credentials). The host is an IPv4 address, a bracketed IPv6 address, `localhost`, a dotted DNS
 * name whose last label is not all digits, or a single-label name with an explicit port (a
 * container's service name such as `minio:9000`). That refuses what only looks like a host:
 * `..`, `NaN`, `1`, `1.2.3`.
 */
const LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/;

export interface ParsedEndpoint {
  /** `host` or `host:port`, as stored. */
  hostPort: string;
  /** Set when the input was a URL: whether its scheme is https. */
  useSsl?: boolean;
}

function validHost(host: string, hasPort: boolean): boolean {
  if (host.startsWith('[')) {
    try {
      return new URL(`http://${host}/`).hostname === host.toLowerCase();
    } catch {
      return false;
    }
  }
  if (IPV4.test(host)) return true;
  if (host.length > 253) return false;
  const labels = host.split('.');
  if (!labels.every((l) => LABEL.test(l))) return false;
  if (labels.length === 1) return host.toLowerCase() === 'localhost' || (hasPort && !/^\d+$/.test(host));
  return !/^\d+$/.test(labels[labels.length - 1] as string);
}

/** Parses an endpoint as the API accepts it; a string saying what is wrong when it does not. */
export function parseEndpoint(input: string): ParsedEndpoint | string {
  const what = `endpoint "${input}" must be host, host:port or an http(s):// URL`;
  let rest = input;
  let useSsl: boolean | undefined;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(input);
  if (scheme) {
    const proto = (scheme[1] as string).toLowerCase();
    if (proto !== 'http' && proto !== 'https') return `${what}; the scheme is http or https`;
    useSsl = proto === 'https';
    rest = input.slice(scheme[0].length).replace(/\/$/, '');
    if (/[/?#@]/.test(rest)) return `${what}; a URL endpoint has no path, query or credentials`;
  }
  const m = HOST_PORT.exec(rest);
  if (!m) return what;
  const host = m[1] as string;
  const port = m[2];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535))
    return `${what}; the port is 1 to 65535`;
  if (!validHost(host, port !== undefined))
    return `${what}; "${host}" is not a host name or IP address (a name without a dot needs a port)`;
  return {
    hostPort: port === undefined ? host : `${host}:${port}`,
    ...(useSsl === undefined ? {} : { useSsl }),
  };
}

/**
 * WWNs stay `naa.<16 hex>` everywhere in the appliance; the kernel edge speaks other dialects.
 * qla2xxx names targets and node ACLs in configfs as colon-separated lower-case bytes
 * (`21:00:00:24:ff:3d:cb:5a`), and sysfs fc_host reports `0x21000024ff3dcb5a`.
 */

/** `naa.21000024ff3dcb5a` → `21:00:00:24:ff:3d:cb:5a` (a qla2xxx configfs directory name). */
export function toQlaWwn(naa: string): string {
  const hex = naa.replace(/^naa\./, '');
  return hex.match(/../g)!.join(':');
}

/** A qla2xxx configfs name back to `naa.` form; undefined when it is not one. */
export function fromQlaWwn(name: string): string | undefined {
  const s = name.trim().toLowerCase();
  return /^[0-9a-f]{2}(:[0-9a-f]{2}){7}$/.test(s) ? `naa.${s.replaceAll(':', '')}` : undefined;
}

/** sysfs `port_name` (`0x21000024ff3dcb5a`) → `naa.` form; undefined when unreadable. */
export function fromSysfsPortName(value: string): string | undefined {
  const s = value.trim().toLowerCase().replace(/^0x/, '');
  return /^[0-9a-f]{16}$/.test(s) ? `naa.${s}` : undefined;
}

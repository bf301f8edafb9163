/**
 * RADIUS reply pairs as operators write them in a template (`Attribute op value`, one a line) and
 * as the profiles produce them, checked against the dictionary (dictionary.ts): FreeRADIUS refuses
 * a login whose group rows name an attribute it does not know, and a router refuses a value of the
 * wrong shape, so an unknown attribute or a bad value is an error naming it, before anything is
 * written.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { groupPairProblem } from '../domain/access';
import { attributeNamed, type AttributeDef } from './dictionary';

export interface ReplyPair {
  /** As FreeRADIUS reads it from a group row: the dictionary name, with `:tag` for a tagged one. */
  attribute: string;
  op: string;
  value: string;
}

const LINE = /^\s*([A-Za-z][A-Za-z0-9-]*)(?::(\d{1,2}))?\s*(:=|\+=|=)\s*(?:"((?:[^"\\]|\\.)*)"|([^\s"]+))\s*$/;
const UINT32_MAX = 4294967295;
/** 253 octets of value in an attribute, less the Vendor-Id, vendor type and length of a VSA. */
const MAX_STRING = 253;
const MAX_VSA_STRING = 247;

/** Why `value` does not fit `def`, or null. */
export function valueProblem(def: AttributeDef, value: string, tag?: number): string | null {
  if (tag !== undefined && !def.tagged) return `${def.name} takes no tag`;
  if (tag !== undefined && (tag < 1 || tag > 31)) return `${def.name}: tag ${tag} is not 1..31`;
  switch (def.type) {
    case 'integer': {
      if (def.values && value in def.values) return null;
      if (!/^\d{1,10}$/.test(value) || Number(value) > UINT32_MAX)
        return `${def.name}: ${JSON.stringify(value)} is not an integer 0..${UINT32_MAX}`;
      return null;
    }
    case 'ipaddr':
      return isIPv4(value) ? null : `${def.name}: ${JSON.stringify(value)} is not an IPv4 address`;
    case 'ipv6addr':
      return isIPv6(value) ? null : `${def.name}: ${JSON.stringify(value)} is not an IPv6 address`;
    case 'ipv6prefix': {
      const [address, length, extra] = value.split('/');
      const ok =
        extra === undefined && isIPv6(address ?? '') && /^\d{1,3}$/.test(length ?? '') && Number(length) <= 128;
      return ok ? null : `${def.name}: ${JSON.stringify(value)} is not an IPv6 prefix (address/length)`;
    }
    case 'string': {
      const max = def.vendorId === 0 ? MAX_STRING : MAX_VSA_STRING - (def.tagged ? 1 : 0);
      const octets = Buffer.byteLength(value, 'utf8');
      if (octets === 0) return `${def.name}: empty value`;
      return octets > max ? `${def.name}: value of ${octets} octets, more than ${max}` : null;
    }
  }
}

/**
 * Parses a template, one `Attribute op value` a line (blank lines skipped; a tag as `Name:1`).
 * Throws an Error whose message names the line and the attribute at fault; a subscriber's own
 * address or a value FreeRADIUS would expand is refused too (groupPairProblem), or left out when
 * `stored` (a template saved before that rule: every write rewriting the rows would fail on it).
 */
export function parseTemplate(text: string, stored = false): ReplyPair[] {
  const pairs: ReplyPair[] = [];
  for (const [i, line] of text.split(/\r?\n/).entries()) {
    if (line.trim() === '') continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`line ${i + 1} is not a RADIUS pair (Attribute := "value"): ${line.trim().slice(0, 80)}`);
    const def = attributeNamed(m[1]);
    if (!def) throw new Error(`line ${i + 1}: unknown attribute ${m[1]}`);
    const tag = m[2] === undefined ? undefined : Number(m[2]);
    const value = m[4] !== undefined ? m[4].replace(/\\(.)/g, '$1') : m[5];
    const problem = valueProblem(def, value, tag);
    if (problem) throw new Error(`line ${i + 1}: ${problem}`);
    if (groupPairProblem(def.name, value)) {
      if (stored) continue;
      throw new Error(`line ${i + 1}: ${groupPairProblem(def.name, value)}`);
    }
    pairs.push({ attribute: tag === undefined ? def.name : `${def.name}:${tag}`, op: m[3], value });
  }
  return pairs;
}

/** The definition and tag of a pair's attribute (`Name` or `Name:tag`). */
export function definitionOf(attribute: string): { def: AttributeDef; tag?: number } {
  const [name, tag] = attribute.split(':');
  const def = attributeNamed(name);
  if (!def) throw new Error(`unknown attribute ${name}`);
  return tag === undefined ? { def } : { def, tag: Number(tag) };
}

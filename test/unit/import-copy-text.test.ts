/**
 * The accounting history's chunks go to PostgreSQL as COPY text (shared/import/sessions.ts): every
 * value must come back as it was, whatever characters a NAS put in it.
 */
import { copyText } from '../../shared/import/session-copy';
import { importSession } from '../helpers/import-session';

const session = importSession;

/** COPY's reading of one line: fields split on tabs, `\N` null, escapes undone. */
const parse = (line: string) =>
  line
    .split('\t')
    .map((f) => (f === '\\N' ? null : f.replace(/\\(.)/g, (_m, c: string) => ({ t: '\t', n: '\n', r: '\r' })[c] ?? c)));

describe('copyText', () => {
  it('writes one line per session, nulls as \\N, numbers and octets as they are', () => {
    const text = copyText([session(), session({ uniqueId: 'u2', stop: 1700000100 })]);
    const lines = text.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    const first = parse(lines[0]);
    expect(first).toHaveLength(28);
    expect(first.slice(0, 5)).toEqual(['s1', 'u1', 'alice', null, '192.0.2.1']);
    expect(first.slice(7, 12)).toEqual(['1700000000', '1700000060.5', null, null, '60']);
    expect(first.slice(15, 17)).toEqual(['12', '9007199254740993']);
    expect(parse(lines[1])[9]).toBe('1700000100');
  });

  it('escapes tabs, newlines, carriage returns and backslashes, so a value cannot split a row', () => {
    const odd = 'a\tb\nc\rd\\e\\N';
    const [line, end] = copyText([session({ connectInfoStart: odd, class: '\\' })]).split('\n');
    expect(end).toBe('');
    const fields = parse(line);
    expect(fields).toHaveLength(28);
    expect(fields[13]).toBe(odd);
    expect(fields[27]).toBe('\\');
  });
});

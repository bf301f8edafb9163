/**
 * The gateway's duplicate-key check (services/gateway/validation.ts) scans the raw bytes of a body
 * JSON.parse accepted. Its answers are compared with a general JSON visitor's (jsonc-parser, what
 * the check used before) on explicit cases and on random nested texts.
 */
import { visit } from 'jsonc-parser';
import { duplicateKey } from '../../services/gateway/validation';

/** The first key repeated within one object, through jsonc-parser's visitor. */
function reference(text: string): string | null {
  const open: Set<string>[] = [];
  let found: string | null = null;
  visit(text, {
    onObjectBegin: () => {
      open.push(new Set());
    },
    onObjectEnd: () => {
      open.pop();
    },
    onObjectProperty: (key) => {
      const keys = open[open.length - 1];
      if (found === null) {
        if (keys.has(key)) found = key;
        keys.add(key);
      }
    },
  });
  return found;
}

const check = (text: string) => {
  JSON.parse(text);
  return duplicateKey(Buffer.from(text));
};

it('finds a key given twice in the same object, at any depth, the first in document order', () => {
  expect(check('{"notes":"a","notes":"b"}')).toBe('notes');
  expect(check('{"notes":"a","items":[{"description":"d","description":"e","qty":1}]}')).toBe('description');
  expect(check('{"a":{"b":1,"b":2},"c":1,"c":2}')).toBe('b');
  expect(check('{ "x" : 1 ,\n "y":[1,{"z":{}}] , "x":2 }')).toBe('x');
});

it('the same key in sibling or nested objects, or as a string value, is not a duplicate', () => {
  expect(check('{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}')).toBeNull();
  expect(check('{"a":"a","b":["a","a"],"c":{"d":"a"}}')).toBeNull();
  expect(check('{}')).toBeNull();
  expect(check('{"ids":[1,2,3],"action":"disconnect"}')).toBeNull();
});

it('keys are compared as the parser decodes them: escapes, quotes, brackets and commas inside strings', () => {
  expect(check('{"a":1,"\\u0061":2}')).toBe('a');
  expect(check('{"a\\"b":1,"a\\"b":2}')).toBe('a"b');
  expect(check('{"x\\\\":1,"x\\\\":2}')).toBe('x\\');
  expect(check('{"k":"{\\"k\\":1,","l":"]}","k2":"\\\\"}')).toBeNull();
  expect(check('{"é":1,"\\u00e9":2}')).toBe('é');
  expect(check('{"😀":1,"\\ud83d\\ude00":2}')).toBe('😀');
});

it('agrees with jsonc-parser on random nested texts', () => {
  const keys = ['a', 'b', '\\u0061', 'é', '\\"', 'x\\\\', '{', ',', ':', '[]', '\\ud83d\\ude00', '😀'];
  const scalars = ['1', '-2.5e3', 'true', 'null', '"s"', '"{,\\"[}"', '"\\\\"', '" , "'];
  const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)];
  const value = (depth: number): string => {
    const r = Math.random();
    if (depth > 4 || r < 0.3) return pick(scalars);
    const n = Math.floor(Math.random() * 4);
    if (r < 0.55) return `[${Array.from({ length: n }, () => value(depth + 1)).join(pick([',', ' , ']))}]`;
    return `{${Array.from({ length: n }, () => ` "${pick(keys)}" :${value(depth + 1)}`).join(',\n')}}`;
  };
  let duplicates = 0;
  const disagreements: { text: string; found: string | null; expected: string | null }[] = [];
  for (let i = 0; i < 10_000; i++) {
    const text = `{"k":${value(0)},"j":${value(0)}}`;
    const found = check(text);
    const expected = reference(text);
    if (found !== expected) disagreements.push({ text, found, expected });
    if (found !== null) duplicates++;
  }
  expect(disagreements).toEqual([]);
  expect(duplicates).toBeGreaterThan(500);
});

/**
 * Bad input never reaches the database as a 500: every operation of the OpenAPI document, walked
 * with malformed path ids, query values and bodies (broken JSON, wrong types, NUL and control
 * characters, huge numbers, duplicate and unknown keys, other content types). Any 5xx fails.
 */
import { adminToken, client, http, startTestApp, type TestApp } from '../helpers/app';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

type Schema = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  query: Record<string, Schema>;
  body?: Schema;
}

let t: TestApp;
let operations: Operation[];

const BAD_IDS = [
  '0x1',
  '-1',
  '0',
  '1e3',
  '1.5',
  '2147483648',
  '99999999999999999999',
  'abc',
  '%00',
  '%20',
  '%E2%80%AE1',
];
const BAD_QUERY_VALUES = [
  '',
  '%00',
  '%01',
  'x',
  '-1',
  '1e999',
  '99999999999999999999',
  '%FF',
  '[]',
  "'",
  '0x10',
  'true',
  'null',
  '2026-02-30',
];
const BAD_BODY_TEXTS = [
  '{',
  'null',
  '[]',
  '"x"',
  '1',
  'true',
  '{"__proto__":{"x":1}}',
  '{"a":1,"a":2}',
  '{"constructor":{"prototype":{}}}',
  '\u0000',
];
const BAD_VALUES: unknown[] = [
  null,
  123,
  -1,
  1.5,
  1e308,
  'x',
  '',
  '\u0000',
  'a\u0000b',
  '\u001b[31m',
  '9'.repeat(5000),
  true,
  [],
  {},
  [null],
  { a: 1 },
];

/** A value the schema accepts, where one is easy to name: the skeleton each bad field is put into. */
function plausible(schema: Schema | undefined): unknown {
  if (!schema) return undefined;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((x) => x !== 'null') : schema.type;
  switch (type) {
    case 'string':
      if (schema.format === 'date') return '2026-12-01';
      if (schema.format === 'date-time') return '2026-12-01T10:00:00Z';
      if (schema.format === 'ipv4') return '10.1.2.3';
      return 'x'.repeat(Math.max(1, Number(schema.minLength ?? 1)));
    case 'integer':
    case 'number':
      return Math.max(1, Number(schema.minimum ?? 1));
    case 'boolean':
      return false;
    case 'array':
      return Number(schema.minItems ?? 0) > 0 ? [plausible(schema.items as Schema)] : [];
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      return Object.fromEntries(((schema.required ?? []) as string[]).map((name) => [name, plausible(props[name])]));
    }
    default:
      return undefined;
  }
}

function fillPath(path: string, params: string[], value: (name: string) => string): string {
  return params.reduce((p, name) => p.replace(`{${name}}`, value(name)), path);
}

async function call(op: Operation, path: string, body?: { raw: string; type?: string }) {
  return http(t.baseUrl, op.method, path, {
    token: adminToken(),
    ...(body ? { rawBody: body.raw, headers: { 'content-type': body.type ?? 'application/json' } } : {}),
  });
}

beforeAll(async () => {
  t = await startTestApp();
  const r = await seedReseller(t.db, { name: 'Fuzz shop' });
  const plan = await seedPlan(t.db, { price: 1000 });
  const sub = await seedSubscriber(t.db, { resellerId: r.id, serviceId: plan.id });
  const api = client(t.baseUrl);
  await api.post(
    '/api/invoices',
    { subscriber_id: sub.id, items: [{ description: 'x', qty: 1, unit_price: 5 }] },
    { token: adminToken() },
  );
  await api.post('/api/nas', { name: 'fuzz', ip_address: '10.0.0.1', secret: 'secret-1' }, { token: adminToken() });
  const doc = (await api.get('/api/openapi.json')).body as { paths: Record<string, Record<string, Schema>> };
  operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => {
      const parameters = (op.parameters ?? []) as { name: string; in: string; schema: Schema }[];
      const content = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content;
      return {
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        query: Object.fromEntries(parameters.filter((p) => p.in === 'query').map((p) => [p.name, p.schema])),
        body: content?.['application/json']?.schema,
      };
    }),
  );
}, 60_000);
afterAll(() => t.close());

it('walks every operation with malformed ids, queries and bodies without a single 5xx', async () => {
  expect(operations.length).toBeGreaterThan(60);
  const failures: string[] = [];
  let requests = 0;
  const expectBelow500 = async (label: string, res: Promise<{ status: number; text: string }>) => {
    const { status, text } = await res;
    requests++;
    if (status >= 500) failures.push(`${label} -> ${status} ${text.slice(0, 120)}`);
  };
  for (const op of operations) {
    const validPath = fillPath(op.path, op.pathParams, () => '1');
    for (const name of op.pathParams) {
      for (const bad of BAD_IDS) {
        const path = fillPath(op.path, op.pathParams, (n) => (n === name ? bad : '1'));
        await expectBelow500(`${op.method} ${path}`, call(op, path));
      }
    }
    for (const name of Object.keys(op.query)) {
      for (const bad of BAD_QUERY_VALUES) {
        const path = `${validPath}?${name}=${bad}`;
        await expectBelow500(`${op.method} ${path}`, call(op, path));
      }
    }
    if (!op.body) continue;
    for (const raw of BAD_BODY_TEXTS)
      await expectBelow500(`${op.method} ${validPath} body ${JSON.stringify(raw)}`, call(op, validPath, { raw }));
    await expectBelow500(
      `${op.method} ${validPath} form body`,
      call(op, validPath, { raw: 'a=1', type: 'application/x-www-form-urlencoded' }),
    );
    await expectBelow500(`${op.method} ${validPath} text body`, call(op, validPath, { raw: '{}', type: 'text/plain' }));
    // One skeleton per value of each enum field (a manager's role, a bulk action), so that each
    // branch those values open is reached with every bad field.
    const properties = (op.body.properties ?? {}) as Record<string, Schema>;
    const base = (plausible(op.body) ?? {}) as Record<string, unknown>;
    const skeletons = [
      base,
      ...Object.entries(properties).flatMap(([name, prop]) =>
        Array.isArray(prop.enum) ? prop.enum.slice(1).map((value) => ({ ...base, [name]: value })) : [],
      ),
    ];
    for (const skeleton of skeletons) {
      for (const field of Object.keys(properties)) {
        for (const bad of BAD_VALUES) {
          const raw = JSON.stringify({ ...skeleton, [field]: bad });
          await expectBelow500(`${op.method} ${validPath} ${raw.slice(0, 80)}`, call(op, validPath, { raw }));
        }
      }
    }
  }
  expect(requests).toBeGreaterThan(2000);
  expect(failures).toEqual([]);
  // A hang guard, not a speed check: the walk grows with every route (555 s for 190-odd operations
  // beside an image build on 2 cores).
}, 1_200_000);

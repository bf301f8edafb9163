/**
 * Issue 27, printable card sheets through the real renderer (Chromium): pdftotext finds every serial
 * and PIN of the batch, the page count follows per_page, the QR code leads to the portal's redeem
 * form, Arabic is laid out right-to-left, and the PINs are shown once (a second print is 409, and the
 * stored ciphertext is gone). A batch prints in parts (from..to): each part holds exactly its cards,
 * erases exactly their PINs, prints once, and a failed render erases nothing.
 */
import { eq } from 'drizzle-orm';
import { decrypt } from '../../shared/auth/secrets';
import { cardBatches } from '../../shared/db/schema';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { decodeQr, fetchPdf, pdfInfo, pdfText } from './documents-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();
let plan: number;

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  const p = await api.post(
    '/api/services',
    { name: 'fiber 100', price: 20, duration_days: 30, currency: 'USD' },
    { token: admin },
  );
  plan = p.body.data.id;
  await api.put('/api/settings', { operator_name: 'Cedar Net', operator_phone: '+961 1 555 000' }, { token: admin });
});
afterAll(() => t.close());

async function mkBatch(body: Record<string, unknown>) {
  const res = await api.post('/api/cards/batches', body, { token: admin });
  expect(res.status).toBe(201);
  const lines = (res.body.csv as string).trim().split('\n').slice(1);
  return {
    id: res.body.data.id as number,
    cards: lines.map((l) => ({ serial: l.split(',')[0], pin: l.split(',')[1] })),
  };
}

describe('card sheets', () => {
  it('a money batch: every serial and PIN in the text, 10 a page, once only', async () => {
    const b = await mkBatch({ count: 23, value: 5, prefix: 'CED', expires_at: '2030-12-31' });
    const pdf = await fetchPdf(`${t.baseUrl}/api/cards/batches/${b.id}/pdf?paper=A4&per_page=10`, admin);
    expect(pdf.status).toBe(200);
    expect(pdf.type).toBe('application/pdf');
    const text = (await pdfText(pdf.body)).replace(/\s+/g, ' ');
    for (const c of b.cards) {
      expect(text).toContain(c.serial);
      expect(text.replace(/ /g, '')).toContain(c.pin);
    }
    expect(text).toContain('Cedar Net');
    expect(text).toContain('5.00 USD');
    expect(text).toContain('2030-12-31');
    expect((await pdfInfo(pdf.body)).pages).toBe(3);

    const [row] = await t.db.select().from(cardBatches).where(eq(cardBatches.id, b.id));
    expect(row.pinsEnc).toBeNull();
    expect(row.printedAt).not.toBeNull();
    const again = await api.get(`/api/cards/batches/${b.id}/pdf`, { token: admin });
    expect([again.status, again.body.message]).toEqual([
      409,
      'the PINs were shown once already: cards 1-23 were printed',
    ]);
  });

  it('a plan batch in Arabic: right-to-left, the plan named, serials found', async () => {
    const b = await mkBatch({ count: 4, service_id: plan });
    const pdf = await fetchPdf(`${t.baseUrl}/api/cards/batches/${b.id}/pdf?per_page=4&language=ar`, admin);
    expect(pdf.status).toBe(200);
    const text = await pdfText(pdf.body);
    for (const c of b.cards) expect(text).toContain(c.serial);
    expect(text).toContain('fiber 100');
    expect(text).toMatch(/الباقة|ةقابلا/);
    expect((await pdfInfo(pdf.body)).pages).toBe(1);
  });

  it("the QR code of a card leads to the portal's redeem form", async () => {
    const b = await mkBatch({ count: 1, value: 2 });
    const pdf = await fetchPdf(`${t.baseUrl}/api/cards/batches/${b.id}/pdf?per_page=1`, admin);
    expect(pdf.status).toBe(200);
    expect(await decodeQr(pdf.body)).toMatch(/\/portal#redeem$/);
  });

  it('a bad paper or per_page is 400 naming it, and the PINs stay', async () => {
    const b = await mkBatch({ count: 2, value: 1 });
    const r1 = await api.get(`/api/cards/batches/${b.id}/pdf?paper=B99`, { token: admin });
    expect(r1.status).toBe(400);
    expect(r1.body.message).toContain('paper');
    const r2 = await api.get(`/api/cards/batches/${b.id}/pdf?per_page=0`, { token: admin });
    expect(r2.status).toBe(400);
    expect(r2.body.message).toContain('per_page');
    const [row] = await t.db.select().from(cardBatches).where(eq(cardBatches.id, b.id));
    expect(row.pinsEnc).not.toBeNull();
  });

  it('a batch prints in parts: part 2 then part 1, exactly their cards, each once; the detail lists them', async () => {
    const b = await mkBatch({ count: 30, value: 3, prefix: 'PART' });
    const serialsIn = (text: string) => b.cards.filter((c) => text.includes(c.serial)).map((c) => c.serial);
    const storedPins = async () => {
      const [row] = await t.db.select().from(cardBatches).where(eq(cardBatches.id, b.id));
      return row.pinsEnc === null ? null : (JSON.parse(decrypt(row.pinsEnc)) as string[]);
    };

    const part2 = await fetchPdf(`${t.baseUrl}/api/cards/batches/${b.id}/pdf?per_page=10&from=11&to=20`, admin);
    expect(part2.status).toBe(200);
    expect(part2.headers.get('content-disposition')).toContain(`cards-batch-${b.id}-11-20.pdf`);
    const text2 = (await pdfText(part2.body)).replace(/\s+/g, ' ');
    expect(serialsIn(text2)).toEqual(b.cards.slice(10, 20).map((c) => c.serial));
    for (const c of b.cards.slice(10, 20)) expect(text2.replace(/ /g, '')).toContain(c.pin);
    expect((await pdfInfo(part2.body)).pages).toBe(1);
    let pins = await storedPins();
    expect(pins!.slice(10, 20)).toEqual(Array(10).fill(''));
    expect(pins!.filter(Boolean)).toEqual([...b.cards.slice(0, 10), ...b.cards.slice(20)].map((c) => c.pin));

    const part1 = await fetchPdf(`${t.baseUrl}/api/cards/batches/${b.id}/pdf?per_page=5&from=1&to=10`, admin);
    expect(part1.status).toBe(200);
    expect(serialsIn((await pdfText(part1.body)).replace(/\s+/g, ' '))).toEqual(
      b.cards.slice(0, 10).map((c) => c.serial),
    );
    expect((await pdfInfo(part1.body)).pages).toBe(2);

    const again = await api.get(`/api/cards/batches/${b.id}/pdf?from=11&to=20`, { token: admin });
    expect([again.status, again.body.message]).toEqual([
      409,
      'the PINs were shown once already: cards 11-20 were printed',
    ]);
    const overlap = await api.get(`/api/cards/batches/${b.id}/pdf?from=5&to=25`, { token: admin });
    expect([overlap.status, overlap.body.message]).toEqual([
      409,
      'the PINs were shown once already: cards 1-10, 11-20 were printed',
    ]);
    const beyond = await api.get(`/api/cards/batches/${b.id}/pdf?from=21&to=31`, { token: admin });
    expect([beyond.status, beyond.body.message]).toEqual([400, "to must be at most 30 (the batch's last card)"]);
    const reversed = await api.get(`/api/cards/batches/${b.id}/pdf?from=25&to=21`, { token: admin });
    expect([reversed.status, reversed.body.message]).toEqual([400, 'from must not be greater than to']);
    const zero = await api.get(`/api/cards/batches/${b.id}/pdf?from=0&to=5`, { token: admin });
    expect(zero.status).toBe(400);
    expect(zero.body.message).toContain('from');

    const detail = await api.get(`/api/cards/batches/${b.id}`, { token: admin });
    expect(
      detail.body.data.printed.map((r: Record<string, unknown>) => [r.from, r.to, r.first_serial, r.last_serial]),
    ).toEqual([
      [1, 10, `PART-${b.id}-000001`, `PART-${b.id}-000010`],
      [11, 20, `PART-${b.id}-000011`, `PART-${b.id}-000020`],
    ]);
    expect(detail.body.data.unprinted).toEqual([{ from: 21, to: 30 }]);
    expect(detail.body.data.printed_at).toBeNull();
    pins = await storedPins();
    expect(pins!.filter(Boolean)).toEqual(b.cards.slice(20).map((c) => c.pin));

    const rest = await fetchPdf(`${t.baseUrl}/api/cards/batches/${b.id}/pdf?from=21`, admin);
    expect(rest.status).toBe(200);
    expect(serialsIn((await pdfText(rest.body)).replace(/\s+/g, ' '))).toEqual(b.cards.slice(20).map((c) => c.serial));
    expect(await storedPins()).toBeNull();
    const done = await api.get(`/api/cards/batches/${b.id}`, { token: admin });
    expect(done.body.data.unprinted).toEqual([]);
    expect(done.body.data.printed_at).not.toBeNull();
  });

  it('a batch larger than one sheet is 400 without a range, and prints by parts', async () => {
    const b = await mkBatch({ count: 501, value: 1 });
    const whole = await api.get(`/api/cards/batches/${b.id}/pdf`, { token: admin });
    expect([whole.status, whole.body.message]).toEqual([
      400,
      'a sheet holds at most 500 cards (500 cards, 50 pages at per_page 10); cards 1-501 are 501: ' +
        'print them in parts with from and to, e.g. from=1&to=500',
    ]);
    const small = await api.get(`/api/cards/batches/${b.id}/pdf?per_page=1&from=1&to=51`, { token: admin });
    expect(small.status).toBe(400);
    expect(small.body.message).toContain('at most 50 cards');
    const last = await fetchPdf(`${t.baseUrl}/api/cards/batches/${b.id}/pdf?per_page=40&from=501`, admin);
    expect(last.status).toBe(200);
    expect(await pdfText(last.body)).toContain(b.cards[500].serial);
    const [row] = await t.db.select().from(cardBatches).where(eq(cardBatches.id, b.id));
    expect(row.printedRanges.map((r) => [r.from, r.to])).toEqual([[501, 501]]);
  });

  // Last: it takes the renderer away.
  it('a failed render erases nothing', async () => {
    const b = await mkBatch({ count: 3, value: 1 });
    const renderer = t.app.broker.getLocalService('pdf-renderer');
    await t.app.broker.destroyService(renderer);
    const failed = await api.get(`/api/cards/batches/${b.id}/pdf?from=1&to=2`, { token: admin });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    const [row] = await t.db.select().from(cardBatches).where(eq(cardBatches.id, b.id));
    expect(row.printedRanges).toEqual([]);
    expect(JSON.parse(decrypt(row.pinsEnc!))).toEqual(b.cards.map((c) => c.pin));
    const detail = await api.get(`/api/cards/batches/${b.id}`, { token: admin });
    expect(detail.body.data.unprinted).toEqual([{ from: 1, to: 3 }]);
  });
});

/**
 * Issue 27, printable card sheets through the real renderer (Chromium): pdftotext finds every serial
 * and PIN of the batch, the page count follows per_page, the QR code leads to the portal's redeem
 * form, Arabic is laid out right-to-left, and the PINs are shown once (a second print is 409, and the
 * stored ciphertext is gone).
 */
import { eq } from 'drizzle-orm';
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
      'the PINs were shown once already: the sheet was printed',
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
});

/**
 * The data of an upgrade fixture (test/fixtures/upgrade/): written through the API of the release
 * that makes the fixture, so every table a release fills is filled as that release fills it.
 */
import { resellerServiceLimits } from '../../shared/db/schema';
import { adminToken, client, type TestApp } from '../helpers/app';
import { seedPlan, seedReseller } from './billing-fixtures';

export async function seedRelease(t: TestApp): Promise<void> {
  const api = client(t.baseUrl);
  const admin = adminToken();
  const reseller = await seedReseller(t.db, { name: 'upgrade-reseller', commissionRate: '10' });
  const plan = await seedPlan(t.db, { price: 2500, name: 'upgrade-plan' });
  await t.db.insert(resellerServiceLimits).values({ resellerId: reseller.id, serviceId: plan.id });
  for (let i = 0; i < 6; i++) {
    const sub = await api.post(
      '/api/subscribers',
      { username: `upgrade-user-${i}`, password: `secret-${i}`, service_id: plan.id, reseller_id: reseller.id },
      { token: admin },
    );
    if (sub.status !== 201) throw new Error(`subscriber: ${sub.status} ${JSON.stringify(sub.body)}`);
    const inv = await api.post(
      '/api/invoices',
      { subscriber_id: sub.body.data.id, items: [{ description: 'month', qty: 1, unit_price: 25 }], tax_rate: 10 },
      { token: admin },
    );
    if (inv.status !== 201) throw new Error(`invoice: ${inv.status} ${JSON.stringify(inv.body)}`);
    if (i % 2 === 0) {
      const pay = await api.post(`/api/invoices/${inv.body.data.id}/payment`, { amount: 27.5 }, { token: admin });
      if (pay.status !== 200) throw new Error(`payment: ${pay.status}`);
    }
  }
}

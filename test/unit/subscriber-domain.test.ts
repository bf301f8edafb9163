import fc from 'fast-check';
import {
  addDays,
  clamp,
  intToIpv4,
  ipv4ToInt,
  isIPv4,
  isValidUsername,
  likePattern,
  normaliseMac,
  realmOf,
  renewalCharge,
  renewalPrice,
  renewedExpiry,
  swapRealm,
} from '../../shared/domain/subscriber';
import { permanentRateLimit } from '../../services/subscribers/bandwidth-rules.service';
import { ntHash } from '../../shared/access/radius-rows';
import { invoiceTotals } from '../../shared/domain/invoice-math';

describe('subscriber domain rules', () => {
  it('normalises every common MAC notation and refuses the rest', () => {
    for (const m of [
      'aa:bb:cc:dd:ee:ff',
      'AA-BB-CC-DD-EE-FF',
      'aabb.ccdd.eeff',
      'aabbccddeeff',
      ' aa:bb:cc:dd:ee:ff ',
    ]) {
      expect(normaliseMac(m)).toBe('AA:BB:CC:DD:EE:FF');
    }
    for (const m of ['aa:bb:cc:dd:ee', 'aa:bb-cc:dd:ee:ff', 'gg:bb:cc:dd:ee:ff', '', 'aabb.ccdd'])
      expect(normaliseMac(m)).toBeNull();
  });

  it('usernames: name or name@realm', () => {
    for (const u of ['ali', 'ali@isp', 'a.b-c_d@sub.isp.net']) expect(isValidUsername(u)).toBe(true);
    for (const u of ['', 'a b', 'a@', '@isp', 'a@b@c', 'a@isp..net', 'ä@isp']) expect(isValidUsername(u)).toBe(false);
    expect(realmOf('ali@isp')).toBe('isp');
    expect(realmOf('ali')).toBeNull();
  });

  it('bulk rename swaps only the realm suffix', () => {
    expect(swapRealm('ali@old', 'old', 'new')).toBe('ali@new');
    expect(swapRealm('ali@old.net', 'old', 'new')).toBeNull();
    expect(swapRealm('ali', 'old', 'new')).toBeNull();
  });

  it('IPv4: dotted quads without leading zeros; int round trip', () => {
    expect(isIPv4('10.0.0.1')).toBe(true);
    for (const ip of ['10.0.0.01', '256.0.0.1', '1.2.3', '1.2.3.4.5', 'a.b.c.d', '']) expect(isIPv4(ip)).toBe(false);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        (n) => ipv4ToInt(intToIpv4(n)) === n && isIPv4(intToIpv4(n)),
      ),
    );
  });

  it('clamps and dates', () => {
    expect(clamp(20000, 0, 10000)).toBe(10000);
    expect(clamp(-5, 0, 10000)).toBe(0);
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2024-03-01', -1)).toBe('2024-02-29');
    expect(renewedExpiry('2024-05-10', '2024-05-01', 30)).toBe('2024-06-09');
    expect(renewedExpiry('2024-04-01', '2024-05-01', 30)).toBe('2024-05-31');
  });

  it("charges the subscriber's own price only when it overrides the plan's", () => {
    const plan = { price: 2500 };
    expect(renewalPrice({ overridePrice: true, price: 1800 }, plan)).toBe(1800);
    expect(renewalPrice({ overridePrice: false, price: 1800 }, plan)).toBe(2500);
    expect(renewalPrice({ overridePrice: true, price: null }, plan)).toBe(2500);
  });

  it('search terms match % and _ literally', () => {
    expect(likePattern('50%_a\\b')).toBe('%50\\%\\_a\\\\b%');
  });
});

describe('RADIUS values', () => {
  it('NT hash is MD4 of the UTF-16LE password, upper-case hex', async () => {
    expect(await ntHash('password')).toBe('8846F7EAEE8FB117AD06BDD830B7586C');
    expect(await ntHash('')).toBe('31D6CFE0D16AE931B73C59D7E0C089C0');
  });

  it('permanent bandwidth rules win by priority; timed rules stay off the static reply', () => {
    const rule = (id: number, direction: string, rateKbps: number, priority = 8, startTime: string | null = null) => ({
      id,
      subscriberId: 1,
      direction,
      rateKbps,
      priority,
      startTime,
      endTime: startTime ? '06:00' : null,
      days: null,
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    expect(permanentRateLimit([], '5M/10M')).toBeNull();
    expect(permanentRateLimit([rule(1, 'upload', 512)], '5M/10M')).toBe('512k/10M');
    expect(permanentRateLimit([rule(1, 'download', 512)], null)).toBe('0/512k');
    expect(permanentRateLimit([rule(1, 'download', 512)], '`/bin/id`')).toBe('0/512k');
    expect(permanentRateLimit([rule(1, 'both', 100, 8), rule(2, 'download', 900, 1)], null)).toBe('100k/900k');
    expect(permanentRateLimit([rule(1, 'upload', 100, 1, '22:00')], '5M/10M')).toBeNull();
  });

  it("states a renewal's total as the renewal invoice computes it, to the minor unit", () => {
    expect(renewalCharge({ overridePrice: false, price: null }, { price: 2000 }, 7.5)).toEqual({
      price: 2000,
      taxAmount: 150,
      total: 2150,
    });
    // Half a minor unit rounds up, as percentOf does on the invoice.
    expect(renewalCharge({ overridePrice: true, price: 25_001 }, { price: 1 }, 5).taxAmount).toBe(1250);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000_000 }),
        fc.integer({ min: 0, max: 10_000 }).map((bp) => bp / 100),
        fc.option(fc.integer({ min: 0, max: 10_000_000_000 }), { nil: null }),
        (planPrice, rate, own) => {
          const s = { overridePrice: own !== null, price: own };
          const charge = renewalCharge(s, { price: planPrice }, rate);
          const invoice = invoiceTotals(
            [{ description: 'Renewal', qty: 1, unitPrice: renewalPrice(s, { price: planPrice }) }],
            rate,
            0,
          );
          expect(charge).toEqual({ price: invoice.amount, taxAmount: invoice.taxAmount, total: invoice.total });
        },
      ),
    );
  });
});

/**
 * The vendor profiles' pure parts (shared/vendors): the attribute table held to Debian's FreeRADIUS
 * dictionaries (/usr/share/freeradius, freeradius-common: a CI requirement, a missing file fails),
 * the rate read from a plan's rate string, each profile's rendering, and the template check that
 * makes an unknown attribute or a bad value a 400 naming it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ATTRIBUTES } from '../../shared/vendors/dictionary';
import { parseRadiusPairs } from '../../shared/domain/access';
import { parseTemplate } from '../../shared/vendors/pairs';
import { checkVendorTemplates, PROFILES, planPairs, tierPairs, VENDORS } from '../../shared/vendors/profiles';
import { parseRate } from '../../shared/vendors/rate';

const DICT_DIR = process.env.RADIUS_DICT_DIR ?? '/usr/share/freeradius';

/** name -> "vendorId number type [has_tag]" from one dictionary file, reading VENDOR / BEGIN-VENDOR blocks. */
function readDictionary(file: string): Map<string, string> {
  const text = fs.readFileSync(path.join(DICT_DIR, file), 'utf8');
  const vendorIds = new Map<string, number>();
  const out = new Map<string, string>();
  let vendor = 0;
  for (const raw of text.split('\n')) {
    const f = raw.replace(/#.*/, '').trim().split(/\s+/);
    if (f[0] === 'VENDOR') vendorIds.set(f[1], Number(f[2]));
    if (f[0] === 'BEGIN-VENDOR') vendor = vendorIds.get(f[1]) ?? -1;
    if (f[0] === 'END-VENDOR') vendor = 0;
    if (f[0] === 'ATTRIBUTE') out.set(f[1], [vendor, f[2], f[3], f[4] === 'has_tag' ? 'has_tag' : ''].join(' ').trim());
  }
  return out;
}

test("every attribute of the table is in Debian's dictionary with the same vendor, number, type and tag", () => {
  const files = new Map<string, Map<string, string>>();
  for (const a of ATTRIBUTES) {
    if (!files.has(a.file)) files.set(a.file, readDictionary(a.file));
    expect([a.name, files.get(a.file)!.get(a.name)]).toEqual([
      a.name,
      [a.vendorId, a.number, a.type, a.tagged ? 'has_tag' : ''].join(' ').trim(),
    ]);
  }
  // The numbers: Mikrotik 14988/8, 19, 22; Huawei 2011/2, 5.
  const code = (name: string) => ATTRIBUTES.find((a) => a.name === name)!;
  expect(
    [code('Mikrotik-Rate-Limit'), code('Mikrotik-Address-List'), code('Mikrotik-Delegated-IPv6-Pool')].map(
      (a) => `${a.vendorId}/${a.number}`,
    ),
  ).toEqual(['14988/8', '14988/19', '14988/22']);
  expect(
    [code('Huawei-Input-Average-Rate'), code('Huawei-Output-Average-Rate')].map((a) => `${a.vendorId}/${a.number}`),
  ).toEqual(['2011/2', '2011/5']);
});

test('a rate string is read as MikroTik writes it: rx (upload) / tx (download), k M G by 1000, bursts as the peak', () => {
  expect(parseRate('10M/20M')).toEqual({ upBps: 10e6, downBps: 20e6, peakUpBps: 10e6, peakDownBps: 20e6 });
  expect(parseRate('512k')).toEqual({ upBps: 512e3, downBps: 512e3, peakUpBps: 512e3, peakDownBps: 512e3 });
  expect(parseRate('2M/4M 3M/6M 1M/2M 10/10')).toEqual({ upBps: 2e6, downBps: 4e6, peakUpBps: 3e6, peakDownBps: 6e6 });
  // A burst field that is not a rate pair is MikroTik's business: the plain rates are the peak.
  expect(parseRate('1G/2G x')).toEqual({ upBps: 1e9, downBps: 2e9, peakUpBps: 1e9, peakDownBps: 2e9 });
  expect(() => parseRate('fast')).toThrow(/not a number/);
});

test("each profile renders a plan's rate and pool, and a tier with :=", () => {
  const plan = { poolName: 'home', rateLimit: '1500k/3M' };
  expect(planPairs('mikrotik', plan)).toEqual([
    { attribute: 'Framed-Pool', op: '=', value: 'home' },
    { attribute: 'Mikrotik-Rate-Limit', op: '=', value: '1500k/3M' },
  ]);
  expect(planPairs('accel-ppp', plan)[1]).toEqual({ attribute: 'Filter-Id', op: '=', value: '3000/1500' });
  expect(tierPairs('cisco', '1500k/3M')).toEqual([
    { attribute: 'Cisco-AVPair', op: ':=', value: 'ip:sub-qos-policy-in=billing-up-1500k' },
    { attribute: 'Cisco-AVPair', op: ':=', value: 'ip:sub-qos-policy-out=billing-down-3000k' },
  ]);
  expect(tierPairs('juniper', '1500k/3M')).toEqual([
    { attribute: 'ERX-Service-Activate:1', op: ':=', value: 'billing-rate(3000000,1500000)' },
  ]);
  // Huawei's 32-bit bit/s: 10 Gbit/s is sent as the largest rate it can say.
  expect(PROFILES.huawei.rate('10G/10G').map((p) => p.value)).toEqual(Array(4).fill('4294967295'));
  expect(planPairs('generic', plan)).toEqual([{ attribute: 'Framed-Pool', op: '=', value: 'home' }]);
  // The operator's template comes after the profile's rows.
  expect(planPairs('nokia', { ...plan, template: 'Alc-Subsc-Prof-Str = "residential"' }).at(-1)).toEqual({
    attribute: 'Alc-Subsc-Prof-Str',
    op: '=',
    value: 'residential',
  });
});

test("every profile's rendering and default garden pass the dictionary check", () => {
  for (const v of VENDORS) {
    const lines = [...PROFILES[v].rate('7M/9M'), ...PROFILES[v].coaRate('7M/9M')].map(
      (p) => `${p.attribute} := "${p.value}"`,
    );
    expect(() => parseTemplate([...lines, PROFILES[v].garden].join('\n'))).not.toThrow();
  }
});

test('a template names the line and attribute at fault: unknown attribute, bad value, tag where none is taken', () => {
  expect(parseTemplate('Cisco-AVPair += "ip:dns-servers=10.0.0.53"\n\nERX-Service-Activate:2 = "svc(1)"')).toEqual([
    { attribute: 'Cisco-AVPair', op: '+=', value: 'ip:dns-servers=10.0.0.53' },
    { attribute: 'ERX-Service-Activate:2', op: '=', value: 'svc(1)' },
  ]);
  expect(() => parseTemplate('Cisco-AVpair-X = "a"')).toThrow('line 1: unknown attribute Cisco-AVpair-X');
  expect(() => parseTemplate('Filter-Id := "a"\nHuawei-Input-Average-Rate := 10M')).toThrow(
    'line 2: Huawei-Input-Average-Rate: "10M" is not an integer 0..4294967295',
  );
  expect(() => parseTemplate('Huawei-Input-Average-Rate := 4294967296')).toThrow(/not an integer/);
  expect(() => parseTemplate('ERX-Primary-Dns := 10.0.0.300')).toThrow(
    'line 1: ERX-Primary-Dns: "10.0.0.300" is not an IPv4 address',
  );
  expect(() => parseTemplate('Framed-IPv6-Prefix := 2001:db8::/129')).toThrow(/not an IPv6 prefix/);
  expect(() => parseTemplate('Cisco-AVPair:1 = "x"')).toThrow('line 1: Cisco-AVPair takes no tag');
  expect(() => parseTemplate(`Cisco-AVPair = "${'x'.repeat(248)}"`)).toThrow(
    'line 1: Cisco-AVPair: value of 248 octets, more than 247',
  );
  expect(() => parseTemplate('Filter-Id')).toThrow(/line 1 is not a RADIUS pair/);
  expect(parseTemplate('Service-Type := Framed-User')).toEqual([
    { attribute: 'Service-Type', op: ':=', value: 'Framed-User' },
  ]);
  expect(() => checkVendorTemplates({ huawei: 'Huawei-PortalURL := "http://x/"', cisco: 'Bogus = 1' })).toThrow(
    'cisco: line 1: unknown attribute Bogus',
  );
  expect(() => checkVendorTemplates({ ericsson: 'Filter-Id = "a"' })).toThrow(/unknown vendor ericsson/);
});

test("a template holds no FreeRADIUS expansion and no subscriber's own address", () => {
  expect(() => parseTemplate('Filter-Id := "`%{sql:select secret from nas}`"')).toThrow(
    'line 1: Filter-Id: "`%{sql:select secret from nas}`" would be expanded by FreeRADIUS (a backtick, %{ or a value wrapped in quotes)',
  );
  expect(() => parseTemplate('Filter-Id := "a`b"')).toThrow(/would be expanded/);
  expect(() => parseTemplate('Filter-Id := "x%{User-Name}"')).toThrow(/would be expanded/);
  expect(() => parseTemplate(`Filter-Id := "'quoted'"`)).toThrow(/would be expanded/);
  expect(() => parseTemplate('Filter-Id := "\\"quoted\\""')).toThrow(/would be expanded/);
  expect(() => parseTemplate('Framed-IP-Address := 10.0.0.9')).toThrow(
    "line 1: Framed-IP-Address is each subscriber's own: set it on the subscriber, not for a group",
  );
  expect(() => parseTemplate('Delegated-IPv6-Prefix := 2001:db8::/56')).toThrow(/each subscriber's own/);
  expect(() => parseRadiusPairs('Framed-IPv6-Prefix := "2001:db8::/64"')).toThrow(/each subscriber's own/);
  expect(() => parseRadiusPairs('Filter-Id := "`id`"')).toThrow('line 1: Filter-Id: "`id`" would be expanded');
  expect(parseTemplate('Filter-Id := "it\'s 50%"')).toEqual([{ attribute: 'Filter-Id', op: ':=', value: "it's 50%" }]);
});

test("an imported plan's rate that the profiles cannot read reaches no other vendor, and breaks nothing", () => {
  expect(planPairs('huawei', { poolName: 'p', rateLimit: 'unlimited' })).toEqual([
    { attribute: 'Framed-Pool', op: '=', value: 'p' },
  ]);
  expect(tierPairs('cisco', 'unlimited')).toEqual([]);
});

test("each vendor's delegated IPv6 pool attribute is a string of the dictionary, the vendor's own where it has one", () => {
  const pools = Object.fromEntries(VENDORS.map((v) => [v, PROFILES[v].delegatedIpv6Pool]));
  expect(pools).toEqual({
    mikrotik: 'Mikrotik-Delegated-IPv6-Pool',
    'accel-ppp': 'Delegated-IPv6-Prefix-Pool',
    cisco: 'Delegated-IPv6-Prefix-Pool',
    juniper: 'ERX-IPv6-Delegated-Pool-Name',
    huawei: 'Delegated-IPv6-Prefix-Pool',
    nokia: 'Alc-Delegated-IPv6-Pool',
    generic: 'Delegated-IPv6-Prefix-Pool',
  });
  for (const name of Object.values(pools)) expect(ATTRIBUTES.find((a) => a.name === name)?.type).toBe('string');
});

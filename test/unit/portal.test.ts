import { sessionAddress } from '../../services/billing/portal/portal-data';
import { renderPortalHtml, type PortalModel } from '../../services/billing/portal/portal-template';

describe('captive portal', () => {
  it('matches a client address as radacct stores it, IPv4 or IPv6, and nothing else', () => {
    expect(sessionAddress('10.64.0.7')).toBe('10.64.0.7');
    // An IPv4 client of a dual-stack listener.
    expect(sessionAddress('::ffff:10.64.0.7')).toBe('10.64.0.7');
    expect(sessionAddress('2001:DB8:0::7')).toBe('2001:db8::7');
    for (const other of [
      undefined,
      '',
      'unknown',
      '10.64.0.256',
      "10.0.0.1' or 1=1",
      '::ffff:2001:db8::7',
      'fe80::1%eth0',
      '2001:db8::/64',
    ]) {
      expect(sessionAddress(other)).toBeNull();
    }
  });

  it('escapes what settings and rows put on the page, and drops a script logo', () => {
    const model: PortalModel = {
      language: 'en',
      operator: { name: 'A&B <ISP>', address: '', phone: '', email: '', logoUrl: 'javascript:alert(1)' },
      howToPay: '<img src=x onerror=alert(1)>\nline two',
      account: {
        username: 'ali',
        reason: null,
        expiryDate: '2030-01-01',
        renewal: { plan: 'Fibre "100" <fast>', days: 30, priceMinor: 1000, currency: 'USD' },
        invoices: [],
      },
    };
    const html = renderPortalHtml(model);
    expect(html).toContain('A&amp;B &lt;ISP&gt;');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;<br>line two');
    expect(html).toContain('Fibre &quot;100&quot; &lt;fast&gt;');
    expect(html).not.toContain('javascript:');
    expect(html).not.toContain('<img');
  });
});

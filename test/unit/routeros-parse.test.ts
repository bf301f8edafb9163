import { parseRosDuration, pingResult, torchResult } from '../../services/network-access/routeros/parse';

it('reads RouterOS durations', () => {
  expect(parseRosDuration('12ms345us')).toBeCloseTo(12.345);
  expect(parseRosDuration('12ms')).toBe(12);
  expect(parseRosDuration('1s200ms')).toBe(1200);
  expect(parseRosDuration('2m3s')).toBe(123_000);
  expect(parseRosDuration('00:00:01.5')).toBe(1500);
  expect(parseRosDuration('850us')).toBeCloseTo(0.85);
  expect(parseRosDuration('')).toBeUndefined();
  expect(parseRosDuration('fast')).toBeUndefined();
});

it('a ping with no replies is 100% loss with no round trips', () => {
  const r = pingResult('10.0.0.1', [
    { seq: '0', host: '10.0.0.1', status: 'timeout' },
    { seq: '1', host: '10.0.0.1', status: 'timeout' },
  ]);
  expect(r).toMatchObject({ sent: 2, received: 0, loss_percent: 100, min_ms: null, avg_ms: null, max_ms: null });
});

it('torch averages a flow over every sampled second, absent seconds counting as 0', () => {
  const row = (section: string, tx: string) => ({
    '.section': section,
    'ip-protocol': 'tcp',
    'src-address': '1.1.1.1',
    'src-port': '443',
    'dst-address': '10.0.0.2',
    'dst-port': '5000',
    tx,
    rx: '0',
  });
  const r = torchResult('<pppoe-x>', 3, [
    row('0', '300'),
    row('1', '600'),
    { '.section': '2', 'src-address': '', 'dst-address': '' },
  ]);
  expect(r.samples).toBe(3);
  expect(r.connections).toHaveLength(1);
  expect(r.connections[0].download_bps).toBe(300);
});

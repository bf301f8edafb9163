import { FAKE, suiteTransporter } from '../helpers/transporter';

it('runs on TRANSPORTER when set, and names it', () => {
  expect(suiteTransporter(FAKE, { TRANSPORTER: 'nats://127.0.0.1:4222', CI: 'true' })).toEqual({
    transporter: 'nats://127.0.0.1:4222',
    label: 'NATS (nats://127.0.0.1:4222)',
  });
});

it('falls back off CI, and says so in the label', () => {
  expect(suiteTransporter(FAKE, {})).toEqual({
    transporter: 'Fake',
    label: "Moleculer's in-process Fake transporter (TRANSPORTER not set)",
  });
});

it('refuses the fallback on CI', () => {
  expect(() => suiteTransporter(FAKE, { CI: 'true' })).toThrow('CI is set but TRANSPORTER is not');
});

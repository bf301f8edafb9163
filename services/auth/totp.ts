/**
 * TOTP (RFC 6238) as authenticator apps expect it: SHA-1, 6 digits, 30-second steps, a 160-bit
 * secret. A code is accepted one step either side of now (clock drift); which step it matched is
 * returned so the caller can refuse a step already used (replay).
 */
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';

const PERIOD_SECONDS = 30;

let clock: () => number = () => Date.now();

/** Tests pin the time codes are checked at (a fixed clock, no sleeps); nothing else calls this. */
export function setTotpClock(now: () => number): void {
  clock = now;
}

export const TOTP_CODE = /^\d{6}$/;

function totp(secretBase32: string, issuer = '', label = ''): TOTP {
  return new TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(secretBase32),
  });
}

/** A new secret in base32 (what the otpauth URI carries). */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The `otpauth://totp/...` URI an authenticator app reads from the QR code. */
export function enrolmentUri(secretBase32: string, issuer: string, username: string): string {
  return totp(secretBase32, issuer, username).toString();
}

export function qrDataUrl(uri: string): Promise<string> {
  return QRCode.toDataURL(uri, { errorCorrectionLevel: 'M', margin: 2, width: 240 });
}

/** The time step `code` belongs to, within one step of now; null when it matches none. */
export function matchingStep(secretBase32: string, code: string): number | null {
  if (!TOTP_CODE.test(code)) return null;
  const now = clock();
  const delta = totp(secretBase32).validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? null : Math.floor(now / 1000 / PERIOD_SECONDS) + delta;
}

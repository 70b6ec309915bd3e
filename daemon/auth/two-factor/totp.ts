import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';

/** RFC 6238 as every authenticator app reads it: SHA-1, 6 digits, 30 s steps. */
const PERIOD_S = 30;
const ISSUER = 'monctl';

/** A new random secret (160 bits, as RFC 4226 recommends), in base32. */
export function newSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** What an authenticator app scans: the secret, labelled with the daemon's name and the username. */
export async function enrolment(secret: string, username: string): Promise<{ secret: string; otpauthUri: string; qrSvg: string }> {
  const otpauthUri = totpOf(secret, username).toString();
  const qrSvg = await QRCode.toString(otpauthUri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return { secret, otpauthUri, qrSvg };
}

function totpOf(secret: string, username = ''): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label: username || ISSUER,
    secret: Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_S,
  });
}

/** Only six ASCII digits are a TOTP code (spaces ignored); anything else is taken for a recovery code. */
export function asTotpCode(code: string): string | undefined {
  const digits = code.replace(/\s+/g, '');
  return /^[0-9]{6}$/.test(digits) ? digits : undefined;
}

/**
 * The 30 s step a code belongs to, within one step either side of `now` (clock drift of the
 * phone), or undefined. The step, not the code, is what the replay guard stores.
 */
export function stepOf(secret: string, code: string, now: number): number | undefined {
  const delta = totpOf(secret).validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? undefined : TOTP.counter({ period: PERIOD_S, timestamp: now }) + delta;
}

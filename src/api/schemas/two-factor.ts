import { Type } from '@sinclair/typebox';
import { Body } from './common.ts';

/** A current 6-digit code of the authenticator app, or one of the recovery codes (spaces and dashes are ignored). */
export const TwoFactorCode = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'a current 6-digit code of the authenticator app, or an unused recovery code',
});

export const TwoFactorCodeBody = Body({ code: TwoFactorCode }, 'TwoFactorCode');

export const TwoFactorEnrolment = Type.Object(
  {
    secret: Type.String({ description: 'the TOTP secret (base32), for typing into an authenticator app' }),
    otpauthUri: Type.String({ description: 'otpauth://totp/… (SHA-1, 6 digits, 30 s)' }),
    qrSvg: Type.String({ description: 'the otpauth URI as a QR code, an SVG document' }),
  },
  { title: 'TwoFactorEnrolment' },
);

export const RecoveryCodes = Type.Object(
  { recoveryCodes: Type.Array(Type.String(), { description: 'ten one-time codes, shown this once' }) },
  { title: 'RecoveryCodes' },
);

export const TwoFactorStatus = Type.Object(
  {
    enabled: Type.Boolean({ description: 'a confirmed second factor: password logins ask for a code' }),
    pending: Type.Boolean({ description: 'an enrolment was started and awaits its confirmation code' }),
    required: Type.Boolean({ description: '--two-factor-required demands one of this user' }),
    recoveryCodesLeft: Type.Integer({ minimum: 0 }),
    canEnrol: Type.Boolean({ description: 'false for users of single sign-on, who have no password' }),
  },
  { title: 'TwoFactorStatus' },
);

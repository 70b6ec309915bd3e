import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { User } from '../schemas/auth.ts';
import { IdParams } from '../schemas/common.ts';
import { RecoveryCodes, TwoFactorCodeBody, TwoFactorEnrolment, TwoFactorStatus } from '../schemas/two-factor.ts';

const tag = 'Two-factor login';

/** Operations of TOTP second factors (docs/API.md#two-factor-login). */
export const twoFactorOperations = {
  getTwoFactor: defineOperation({
    id: 'getTwoFactor',
    method: 'GET',
    path: '/api/me/two-factor',
    tag,
    access: 'authenticated',
    summary: "The caller's second factor: enabled, pending, required, recovery codes left",
    response: TwoFactorStatus,
  }),
  enrolTwoFactor: defineOperation({
    id: 'enrolTwoFactor',
    method: 'POST',
    path: '/api/me/two-factor',
    tag,
    access: 'authenticated',
    summary: 'Start enrolling a TOTP second factor',
    description:
      'Answers a new secret, its otpauth URI and a QR code; nothing changes at login until `POST /api/me/two-factor/confirm` ' +
      'with a code of it. Starting again replaces an unconfirmed secret. 409 when a second factor is enabled; 400 for ' +
      'users of single sign-on (their provider has its own second factor).',
    bodyOptional: true,
    body: Type.Object({}, { additionalProperties: false, title: 'Empty' }),
    response: TwoFactorEnrolment,
    errors: [400, 409],
  }),
  confirmTwoFactor: defineOperation({
    id: 'confirmTwoFactor',
    method: 'POST',
    path: '/api/me/two-factor/confirm',
    tag,
    access: 'authenticated',
    summary: 'Confirm the enrolment with a code; answers the 10 recovery codes (shown once)',
    description: 'A wrong code is 400 naming `code`; after 5 failures, 429 with `Retry-After`. 409 without a started enrolment.',
    body: TwoFactorCodeBody,
    response: RecoveryCodes,
    errors: [400, 409, 429],
  }),
  disableTwoFactor: defineOperation({
    id: 'disableTwoFactor',
    method: 'DELETE',
    path: '/api/me/two-factor',
    tag,
    access: 'authenticated',
    summary: 'Turn the second factor off (with a current code or a recovery code)',
    body: TwoFactorCodeBody,
    response: TwoFactorStatus,
    errors: [400, 409, 429],
  }),
  renewRecoveryCodes: defineOperation({
    id: 'renewRecoveryCodes',
    method: 'POST',
    path: '/api/me/two-factor/recovery-codes',
    tag,
    access: 'authenticated',
    summary: 'Replace the recovery codes with 10 new ones (with a current code or a recovery code)',
    body: TwoFactorCodeBody,
    response: RecoveryCodes,
    errors: [400, 409, 429],
  }),
  resetTwoFactor: defineOperation({
    id: 'resetTwoFactor',
    method: 'DELETE',
    path: '/admin/api/users/{id}/two-factor',
    tag: 'Users',
    access: 'admin',
    summary: "Reset a user's second factor (secret, recovery codes, failure count)",
    description: 'The user logs in with the password alone, or enrols again where `--two-factor-required` demands it.',
    params: IdParams,
    response: User,
    errors: [404],
  }),
} as const;

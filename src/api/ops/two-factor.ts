/** Operations of TOTP second factors (docs/API.md#two-factor-login). */
export const twoFactorOperations = {} as const;

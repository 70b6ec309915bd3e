/** Operations of `monctl login --sso` (docs/API.md#cli-single-sign-on). */
export const ssoOperations = {} as const;

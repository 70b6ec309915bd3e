/** Defaults of the incident settings (daemon/config/settings.ts), apart from the code that uses them. */
export const DEFAULT_AGENT_GRACE_SECONDS = 60;
export const DEFAULT_CERT_EXPIRY_DAYS = [14, 7, 1] as const;

import { domainToASCII } from 'node:url';
import type { RouteSso, RouteSsoInput } from '../../src/api/schemas/tunnel.ts';
import { invalidField } from '../../src/errors.ts';

/** Every account the provider signs in: said explicitly, never the meaning of empty lists. */
export const ANY_ACCOUNT = '*';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const LOCAL = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
/** Printable, no comma: a group travels to the target in one comma-separated header. */
const GROUP = /^[^\u0000-\u001f\u007f,]+$/;

/** A domain as the hostnames are stored: lower-case ASCII (IDNA), no trailing dot; undefined when not a DNS name. */
export function normaliseDomain(text: string): string | undefined {
  const ascii = domainToASCII(text.trim().toLowerCase().normalize('NFC')).replace(/\.$/, '');
  const labels = ascii.split('.');
  return ascii.length <= 253 && labels.length >= 2 && labels.every((l) => LABEL.test(l)) ? ascii : undefined;
}

/** An email address for matching: lower-case local part, its domain as normaliseDomain; undefined when not one. */
export function normaliseEmailRule(text: string): string | undefined {
  const trimmed = text.trim().normalize('NFC').toLowerCase();
  const at = trimmed.lastIndexOf('@');
  if (at <= 0 || at > 64) return undefined;
  const domain = normaliseDomain(trimmed.slice(at + 1));
  const local = trimmed.slice(0, at);
  return domain && LOCAL.test(local) ? `${local}@${domain}` : undefined;
}

function list(field: string, given: string[], normalise: (s: string) => string | undefined): string[] {
  const out = given.map((text, i) => {
    const value = normalise(text);
    if (value === undefined) throw invalidField(`sso.${field}[${i}]`, `"${text.slice(0, 100)}" is not valid`);
    return value;
  });
  return [...new Set(out)];
}

const domainRule = (text: string) => {
  const bare = text.trim().replace(/^@/, '');
  return bare === ANY_ACCOUNT ? ANY_ACCOUNT : normaliseDomain(bare);
};
const groupRule = (text: string) => (GROUP.test(text.trim()) ? text.trim() : undefined);

/**
 * The rules a create or update asks for, normalised (emails and domains lower-case ASCII, `@`
 * dropped, duplicates merged) over the stored ones: lists left out are kept. At least one rule,
 * or `*` in domains: an empty list never means "everyone".
 */
export function ssoDraft(given: RouteSsoInput | null | undefined, stored: RouteSso | null): RouteSso | null {
  if (given === null) return null;
  if (given === undefined) return stored;
  const rules: RouteSso = {
    emails: given.emails ? list('emails', given.emails, normaliseEmailRule) : (stored?.emails ?? []),
    domains: given.domains ? list('domains', given.domains, domainRule) : (stored?.domains ?? []),
    groups: given.groups ? list('groups', given.groups, groupRule) : (stored?.groups ?? []),
    sessionTtl: given.sessionTtl !== undefined ? given.sessionTtl : (stored?.sessionTtl ?? null),
  };
  if (rules.domains.includes(ANY_ACCOUNT) && rules.domains.length > 1)
    throw invalidField('sso.domains', '"*" admits every account: list no other domain beside it');
  return rules;
}

/** The stored rules of a row (`routes.sso_rules`), null when none. */
export function ssoOf(text: string | null): RouteSso | null {
  if (!text) return null;
  const parsed = JSON.parse(text) as Partial<RouteSso>;
  return { emails: parsed.emails ?? [], domains: parsed.domains ?? [], groups: parsed.groups ?? [], sessionTtl: parsed.sessionTtl ?? null };
}

/** Whether rules admit anyone at all: `auth: oidc` needs one. */
export const hasRules = (rules: RouteSso | null) => Boolean(rules && rules.emails.length + rules.domains.length + rules.groups.length);

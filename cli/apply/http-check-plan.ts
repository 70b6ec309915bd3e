import type { Static } from '@sinclair/typebox';
import type { AdminResource } from '../../src/api/schemas/monitoring.ts';
import type { HttpCheckSpec } from './http-check-spec.ts';

type Current = Static<typeof AdminResource>;
type Body = Record<string, unknown>;

/** The fields of a new resource: everything the file gives, secrets included. */
export function httpCheckCreate(spec: HttpCheckSpec | undefined): Body {
  if (!spec) return {};
  const { plain, ...secrets } = spec;
  return Object.fromEntries(Object.entries({ ...plain, ...secrets }).filter(([, v]) => v !== undefined && v !== null));
}

const lower = (names: string[]) => names.map((n) => n.toLowerCase());
/** The names the server has and the file does not, as PATCH's nulls (headers merge in a PATCH). */
const dropped = (server: string[], file: string[]) =>
  Object.fromEntries(server.filter((n) => !lower(file).includes(n.toLowerCase())).map((n) => [n, null]));

/**
 * What differs from the daemon (names for the plan) and the PATCH that makes it match. Secrets
 * cannot be compared (reads say only which are set), so they are in every PATCH (`secrets` true),
 * and the daemon keeps an equal value a no-op; they count as a change only when what reads show
 * differs: a secret header's name, the auth's type or user, a client certificate set or not.
 */
export function httpCheckDiff(spec: HttpCheckSpec | undefined, cur: Current): { changes: string[]; patch: Body; secrets: boolean } {
  const changes: string[] = [];
  const patch: Body = {};
  if (!spec) return { changes, patch, secrets: false };
  const differs = (k: string, file: unknown, server: unknown) => {
    if (file !== undefined && JSON.stringify(file) !== JSON.stringify(server)) {
      changes.push(k);
      patch[k] = file;
    }
  };
  const p = spec.plain;
  differs('method', p.method, cur.method);
  if (p.headers) {
    const norm = (h: Record<string, string>) =>
      JSON.stringify(
        Object.entries(h)
          .map(([k, v]) => [k.toLowerCase(), v])
          .sort(),
      );
    if (norm(p.headers) !== norm(cur.headers)) {
      changes.push('headers');
      patch.headers = { ...dropped(Object.keys(cur.headers), Object.keys(p.headers)), ...p.headers };
    }
  }
  differs('body', p.body, cur.body);
  differs('contentType', p.contentType, cur.contentType);
  differs('followRedirects', p.followRedirects, cur.followRedirects);
  differs('upsideDown', p.upsideDown, cur.upsideDown);
  differs('timeoutSeconds', p.timeoutSeconds, cur.timeoutSeconds);
  // null is the default, which reads show as 200-299.
  if (p.expectStatus !== undefined && JSON.stringify(p.expectStatus ?? ['200-299']) !== JSON.stringify(cur.expectStatus)) {
    changes.push('expectStatus');
    patch.expectStatus = p.expectStatus;
  }

  let secrets = false;
  if (spec.secretHeaders) {
    const names = Object.keys(spec.secretHeaders);
    const server = cur.secrets.headers;
    if (lower(names).sort().join('\n') !== lower(server).sort().join('\n')) changes.push('secretHeaders');
    patch.secretHeaders = { ...dropped(server, names), ...spec.secretHeaders };
    secrets = names.length > 0;
  }
  if (spec.auth !== undefined) {
    const shown = spec.auth && (spec.auth.type === 'basic' ? { type: 'basic', username: spec.auth.username } : { type: 'bearer' });
    if (JSON.stringify(shown) !== JSON.stringify(cur.auth)) changes.push('auth');
    if (shown || cur.auth) patch.auth = spec.auth;
    secrets ||= spec.auth !== null;
  }
  if (spec.clientCert !== undefined) {
    if ((spec.clientCert !== null) !== cur.secrets.clientCert) changes.push('clientCert');
    if (spec.clientCert !== null || cur.secrets.clientCert)
      Object.assign(patch, { clientCert: spec.clientCert, clientKey: spec.clientKey });
    secrets ||= spec.clientCert !== null;
  }
  return { changes, patch, secrets };
}

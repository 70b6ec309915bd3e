import type { IncomingMessage } from 'node:http';
import { badRequest, HttpError, invalidField } from '../../../src/errors.ts';
import { isJson, readBody, readForm } from '../../http/body.ts';
import { decodeUtf8Body } from '../../http/well-formed.ts';
import { normaliseEmail } from './email-address.ts';

/** A sign-up body is one address and some ids: anything larger is not one. */
const MAX_BODY = 16 * 1024;
const MAX_PICKS = 1000;

export interface SignupInput {
  address: string;
  key: string;
  resourceIds: number[];
  groupIds: number[];
}

function ids(field: string, values: unknown[]): number[] {
  if (values.length > MAX_PICKS) throw invalidField(field, `at most ${MAX_PICKS} ids`);
  const out = values.map((v) => (typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : v));
  if (!out.every((v): v is number => Number.isSafeInteger(v) && (v as number) > 0))
    throw invalidField(field, 'must be ids (positive integers)');
  return [...new Set(out)];
}

type Raw = { email: unknown; resourceIds: unknown[]; groupIds: unknown[]; names: [string, string] };

function fromJson(value: unknown): Raw {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidField('body', 'must be a JSON object');
  const body = value as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    if (!['email', 'resourceIds', 'groupIds'].includes(key)) throw invalidField(key, 'is not a field of a sign-up');
  }
  for (const key of ['resourceIds', 'groupIds']) {
    if (body[key] !== undefined && !Array.isArray(body[key])) throw invalidField(key, 'must be an array of ids');
  }
  const picks = (key: string) => (body[key] as unknown[] | undefined) ?? [];
  return { email: body.email, resourceIds: picks('resourceIds'), groupIds: picks('groupIds'), names: ['resourceIds', 'groupIds'] };
}

function fromForm(form: URLSearchParams): Raw {
  for (const key of form.keys()) {
    if (!['email', 'resource', 'group'].includes(key)) throw invalidField(key, 'is not a field of the sign-up form');
  }
  if (form.getAll('email').length > 1) throw invalidField('email', 'give one address');
  const email = form.get('email') ?? undefined;
  return { email, resourceIds: form.getAll('resource'), groupIds: form.getAll('group'), names: ['resource', 'group'] };
}

/**
 * A sign-up as posted: the page's form (`email`, `resource`, `group`,
 * form-encoded) or JSON (`{email, resourceIds?, groupIds?}`). 400 naming the
 * field for anything else, 415 for another media type, 413 past 16 KiB.
 */
export async function readSignup(req: IncomingMessage): Promise<SignupInput> {
  let raw: Raw;
  if (isJson(req)) {
    const text = decodeUtf8Body(await readBody(req, MAX_BODY));
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw badRequest(`Request body is not valid JSON: ${(err as Error).message}`, [{ field: 'body', message: 'is not valid JSON' }]);
    }
    raw = fromJson(value);
  } else {
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (type !== 'application/x-www-form-urlencoded') {
      req.resume();
      throw new HttpError(415, 'unsupported-media-type', 'A sign-up is application/x-www-form-urlencoded (the form) or application/json');
    }
    raw = fromForm(await readForm(req, MAX_BODY));
  }
  if (typeof raw.email !== 'string') throw invalidField('email', raw.email === undefined ? 'is required' : 'must be a string');
  const email = normaliseEmail(raw.email);
  if (typeof email === 'string') throw invalidField('email', email);
  return { ...email, resourceIds: ids(raw.names[0], raw.resourceIds), groupIds: ids(raw.names[1], raw.groupIds) };
}

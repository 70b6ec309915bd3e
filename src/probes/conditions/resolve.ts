/** Turns a placeholder into the text Gatus compares, or a reason it has no value on this check. */
import { byteLength, jsonLength, jsonText, walk } from './json-path.ts';
import type { Observation, PathStep, PlaceholderOperand } from './types.ts';

/** A side with no value: the condition fails, and the message says why. */
export class Invalid {
  reason: string;
  constructor(reason: string) {
    this.reason = reason;
  }
}

const NOT_JSON = new Invalid('the body is not JSON');
const TRUNCATED = new Invalid('the body is over the size cap and was not read whole');
const NO_PATH = new Invalid('no such path in the body');
const NO_HEADER = new Invalid('no such header');
const FAILED_PARSE = Symbol('not JSON');

// Parsed once per check however many conditions read [BODY].path. One entry, not a WeakMap: a
// check's conditions are evaluated together, synchronously, and a WeakMap entry per check cost
// more than the conditions themselves (docs/DECISIONS.md#probe-conditions, Cost).
let lastObservation: Observation | null = null;
let lastBody: string | null | undefined;
let lastJson: unknown;

function bodyJson(observation: Observation): unknown {
  if (observation === lastObservation && observation.body === lastBody) return lastJson;
  let value: unknown;
  try {
    value = JSON.parse(observation.body ?? '');
  } catch {
    value = FAILED_PARSE;
  }
  lastObservation = observation;
  lastBody = observation.body;
  lastJson = value;
  return value;
}

function withFn(value: string, fn: PlaceholderOperand['fn']): string {
  if (fn === 'has') return value === '' ? 'false' : 'true';
  if (fn === 'len') return String(byteLength(value));
  return value;
}

function wholeBody(observation: Observation, fn: PlaceholderOperand['fn']): string {
  const body = observation.body ?? '';
  if (fn === 'has') return body.trim() === '' ? 'false' : 'true';
  if (fn === 'len') {
    // Gatus counts an array body's items, and any other body's bytes.
    if (body.startsWith('[') && body.endsWith(']')) {
      const json = bodyJson(observation);
      if (Array.isArray(json)) return String(json.length);
    }
    return String(byteLength(body));
  }
  return body.trim();
}

function bodyPath(observation: Observation, path: PathStep[], fn: PlaceholderOperand['fn']): string | Invalid {
  const json = bodyJson(observation);
  if (json === FAILED_PARSE) return NOT_JSON;
  const value = walk(json, path);
  if (fn === 'has') return value === undefined ? 'false' : 'true';
  if (value === undefined) return NO_PATH;
  return fn === 'len' ? String(jsonLength(value)) : jsonText(value);
}

function header(observation: Observation, name: string, fn: PlaceholderOperand['fn']): string | Invalid {
  const value = observation.headers?.[name];
  if (value === undefined) return fn === 'has' ? 'false' : NO_HEADER;
  return withFn(Array.isArray(value) ? value.join(', ') : String(value), fn);
}

/** The value of a placeholder on this observation. */
export function resolvePlaceholder(p: PlaceholderOperand, observation: Observation): string | Invalid {
  switch (p.name) {
    case 'STATUS':
      return withFn(String(observation.status ?? 0), p.fn);
    case 'RESPONSE_TIME':
      return withFn(String(Math.trunc(observation.responseTimeMs)), p.fn);
    case 'IP':
      return withFn(observation.ip ?? '', p.fn);
    case 'CONNECTED':
      return withFn(observation.connected ? 'true' : 'false', p.fn);
    case 'CERTIFICATE_EXPIRATION':
      return withFn(String(Math.trunc(observation.certificateExpiresInMs ?? 0)), p.fn);
    case 'HEADER':
      return header(observation, p.header ?? '', p.fn);
    case 'DNS_RCODE':
      return withFn(observation.dnsRcode ?? '', p.fn);
    case 'PACKET_LOSS':
      return withFn(String(observation.packetLoss ?? 100), p.fn);
    case 'TLS_VERSION':
      return withFn(observation.tlsVersion ?? '', p.fn);
    case 'TLS_CIPHER':
      return withFn(observation.tlsCipher ?? '', p.fn);
    case 'BODY':
      if (observation.bodyTruncated) return TRUNCATED;
      return p.path ? bodyPath(observation, p.path, p.fn) : wholeBody(observation, p.fn);
  }
}

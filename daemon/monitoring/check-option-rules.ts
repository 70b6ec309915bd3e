import { isIP } from 'node:net';
import { OPTION_SCHEMAS, type OptionField } from '../../src/api/schemas/check-options.ts';
import type { ResourceType } from '../../src/api/schemas/monitoring.ts';
import { invalidField } from '../../src/errors.ts';
import { type GivenOptions, normaliseOptions, optionFieldOf, optionsColumn, storedOptions } from '../probes/check-options.ts';
import { checkOptionValues } from './check-option-values.ts';

/**
 * The protocol checks' options in create, PATCH and test bodies (docs/API.md#check-types): only the
 * resource type's own object, its values checked whole once merged (400 naming the field).
 */

const OPTION_FIELDS = Object.keys(OPTION_SCHEMAS) as OptionField[];

type OptionBody = Partial<Record<OptionField, GivenOptions>>;

/**
 * 400 naming the first option object of another type than `type` (`dns` on a TLS resource). A
 * PATCH's null for another type is taken: it asks for no options of that type, which holds.
 */
export function checkOptionTypes(type: ResourceType, body: object): void {
  const own = optionFieldOf(type);
  const given = body as OptionBody;
  const other = OPTION_FIELDS.find((f) => f !== own && given[f] !== undefined && given[f] !== null);
  if (other === undefined) return;
  throw invalidField(other, own ? `a ${type} resource takes ${own}, not ${other}` : `a ${type} resource takes no ${other} options`);
}

/** A create (or test) body's options: its type's only, values checked; the column to store. */
export function createOptions(type: ResourceType, body: object): string | null {
  checkOptionTypes(type, body);
  checkSkipTls(type, (body as { skipTLS?: boolean }).skipTLS === true);
  const field = optionFieldOf(type);
  if (!field) return null;
  const given = (body as OptionBody)[field];
  checkOptionValues(field, normaliseOptions(type, given));
  checkPtrTarget(type, (body as { target?: string }).target, given);
  return optionsColumn(type, given);
}

/**
 * The column once a PATCH is applied: the given fields merged over the stored ones (null goes back
 * to the defaults, a field's null to its default); a new type drops the old type's options and
 * takes its own object if given. The merged whole is checked, as create checks it.
 */
export function patchOptions(
  type: ResourceType,
  before: { resource_type: string; target: string; skip_tls: number; check_options: string | null },
  body: object & { skipTLS?: boolean; resourceType?: string },
): string | null {
  checkOptionTypes(type, body);
  if (body.skipTLS !== undefined || body.resourceType !== undefined) checkSkipTls(type, body.skipTLS ?? before.skip_tls === 1);
  const field = optionFieldOf(type);
  if (!field) return null;
  const given = (body as OptionBody)[field];
  const stored = type === before.resource_type ? storedOptions(before.check_options) : null;
  const merged = given === undefined ? stored : given === null ? null : { ...stored, ...given };
  checkOptionValues(field, normaliseOptions(type, merged));
  checkPtrTarget(type, (body as { target?: string }).target ?? before.target, merged);
  return optionsColumn(type, merged);
}

/** The protocol types that never see a certificate; TCP takes skipTLS as it always has (and ignores it). */
const WITHOUT_TLS = new Set<string>(['DNS', 'PING', 'UDP', 'SSH']);

/** skipTLS on a type that makes no TLS connection would say something false about the check: 400 naming it. */
function checkSkipTls(type: ResourceType, skipTLS: boolean): void {
  if (skipTLS && WITHOUT_TLS.has(type))
    throw invalidField('skipTLS', `a ${type} check makes no TLS connection: skipTLS is for HTTP, DOCKER, TLS, GRPC and WEBSOCKET`);
}

/** A DNS target may be an IP address only for a PTR question (the probe asks for its reverse name). */
function checkPtrTarget(type: ResourceType, target: string | undefined, options: GivenOptions): void {
  if (type !== 'DNS' || target === undefined || !isIP(target)) return;
  if (normaliseOptions('DNS', options).recordType !== 'PTR')
    throw invalidField('target', 'an IP address is a DNS target only for dns.recordType PTR: name the host asked about');
}

import type { RouteHealthCheck } from '../../src/api/schemas/route-pools.ts';
import type { RouteType } from '../../src/api/schemas/tunnel.ts';
import { badRequest, invalidField } from '../../src/errors.ts';
import { validateConditions } from '../../src/probes/conditions/index.ts';

/** `200` or `200-299` as the inclusive range the HTTP check takes; null when the range runs backwards. */
export function statusRange(text: string): [from: number, to: number] | null {
  const [from, to = from] = text.split('-').map(Number);
  return from <= to ? [from, to] : null;
}

/**
 * What the schema cannot say of a route's health check (400 naming the field): each condition must
 * parse and read only what the check kind answers (an HTTP route's check is the monitoring engine's
 * HTTP check, a TCP route's a connect: the placeholders of HTTP and TCP resources), as a resource's
 * conditions are refused at creation rather than failed on every check; a status range must not
 * run backwards.
 */
export function checkHealthCheck(type: RouteType, check: RouteHealthCheck | null): void {
  if (!check) return;
  const { problems } = validateConditions(check.conditions ?? [], type);
  if (problems.length) {
    const errors = problems.map((p) => ({
      field: `healthCheck.conditions[${p.index}]`,
      message: `column ${p.column}: ${p.message}`,
    }));
    throw badRequest(`Invalid value for ${errors[0].field}: ${errors[0].message}`, errors);
  }
  check.expectStatus?.forEach((text, i) => {
    if (!statusRange(text)) throw invalidField(`healthCheck.expectStatus[${i}]`, `${text} runs backwards`);
  });
}

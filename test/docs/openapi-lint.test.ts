import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../daemon/docs/openapi.ts';

/**
 * The OpenAPI document, as the daemon serves it, linted with Redocly's
 * `recommended` rules (issue 25): no errors and no warnings.
 */
describe('OpenAPI document lint (Redocly recommended)', () => {
  it('has no problems', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(buildOpenApi()), absoluteRef: 'openapi.json', config });
    const lines = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(', ')}`);
    expect(lines).toEqual([]);
  });
});

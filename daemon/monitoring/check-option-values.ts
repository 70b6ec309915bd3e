import type { OptionField } from '../../src/api/schemas/check-options.ts';
import type { CheckOptions } from '../../src/probes/types.ts';

/**
 * 400 naming the field (`tcp.expect`) for option values the schema lets through but no check could
 * use (docs/API.md#check-types). `options` is the whole object, defaults filled in.
 */
export function checkOptionValues(_field: OptionField, _options: CheckOptions | undefined): void {}

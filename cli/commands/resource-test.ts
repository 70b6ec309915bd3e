import { readFileSync } from 'node:fs';
import type { Static } from '@sinclair/typebox';
import type { Command } from 'commander';
import type { ResourceTestBody } from '../../src/api/schemas/resource-test.ts';
import { ExitCode, usage } from '../../src/errors.ts';
import { namingFlags } from '../api/flag-errors.ts';
import { ops } from '../api/ops.ts';
import { checkOptionsCreate } from '../apply/check-options-spec.ts';
import { httpCheckCreate } from '../apply/http-check-plan.ts';
import { parseSpecText, type ResourceSpec, validateSpec } from '../apply/spec.ts';
import { readStdin } from '../io/prompt.ts';
import { act, type Runtime, withOutput } from '../runtime.ts';
import { createBody, RESOURCE_FLAG_NAMES, type ResourceFlags, resourceFlags } from './resource-flags.ts';
import { testReport } from './resource-test-report.ts';

type Body = Static<typeof ResourceTestBody>;

/** The body from `resources add`'s flags (createBody: the same rules); `--location` names one place here. */
async function bodyFromFlags(rt: Runtime, name: string | undefined, f: ResourceFlags): Promise<Body> {
  if (f.location && f.location.length > 1) usage('resources test checks at one place: give --location once');
  const { locations, name: _name, ...body } = await createBody(rt, name ?? '', f, 'resources test (without -f FILE)');
  return { ...body, ...(name ? { name } : {}), ...(locations ? { location: locations[0] } : {}) } as Body;
}

/**
 * The body from a file in apply's format: a `resources:` list of one resource, or that one
 * resource alone. Checked as apply checks it, so a file that tests well applies well.
 */
async function bodyFromFile(path: string): Promise<Body> {
  let text: string;
  try {
    text = path === '-' ? await readStdin() : readFileSync(path, 'utf8');
  } catch (err) {
    usage(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const raw = await parseSpecText(text, path);
  const one = raw && typeof raw === 'object' && !Array.isArray(raw) && !('resources' in raw) ? { resources: [raw] } : raw;
  const { resources } = validateSpec(one, path);
  if (resources.length !== 1) usage(`${path}: resources test checks one resource; the file has ${resources.length}`);
  const { name, type, groups: _groups, locations, http, options, ...fields } = resources[0] as ResourceSpec;
  const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  const location = locations ? { location: locations[0] } : {};
  return { ...defined, ...httpCheckCreate(http), ...checkOptionsCreate(options), name, resourceType: type, ...location } as Body;
}

/** `monctl resources test`: one check now, stored nothing (docs/API.md#testing-a-check); exit 5 when not AVAILABLE. */
export function registerTest(resources: Command): void {
  withOutput(
    resourceFlags(
      resources
        .command('test')
        .description('check a resource once now without saving it (the flags of add, or -f FILE); exit 5 when not AVAILABLE')
        .argument('[name]', 'a name for the report (optional)'),
    ),
  )
    .option('-f, --file <file>', "one resource in apply's format (YAML or JSON; - for stdin)")
    .action(
      act(async (rt, name: string | undefined, f: ResourceFlags & { file?: string }) => {
        // The file is the whole resource: a --target beside it would be silently ignored.
        if (f.file !== undefined && (f.target || f.type)) usage('give -f FILE or --target/--type, not both');
        let body = f.file === undefined ? await bodyFromFlags(rt, name, f) : await bodyFromFile(f.file);
        if (f.file !== undefined && f.location) {
          if (f.location.length > 1) usage('resources test checks at one place: give --location once');
          body = { ...body, location: f.location[0] };
        }
        const result = await namingFlags({ ...RESOURCE_FLAG_NAMES, location: '--location' }, () =>
          rt.client.call(ops.testResource, { body }),
        );
        if (rt.structured) await rt.show(result);
        else process.stdout.write(testReport(result, rt.colour));
        if (result.status !== 'AVAILABLE') process.exitCode = ExitCode.notAvailable;
      }),
    );
}

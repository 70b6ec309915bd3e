import type { Command } from 'commander';
import { ops } from '../api/ops.ts';
import { confirm } from '../io/prompt.ts';
import { act, withOutput } from '../runtime.ts';

const view = { columns: [{ header: 'ORIGIN', get: (o: string) => o }] };

export function register(program: Command): void {
  const cors = program.command('cors').description('origins allowed to call /api/ from a browser (ADMIN)');

  withOutput(cors.command('list').alias('ls').description('list allowed origins')).action(
    act(async (rt) => {
      const { origins } = await rt.client.call(ops.listCorsOrigins);
      await rt.show(rt.structured ? { origins } : origins, view);
    }),
  );

  withOutput(cors.command('add').description('allow an origin (scheme://host[:port])').argument('<origin>')).action(
    act(async (rt, origin: string) => {
      const result = await rt.client.call(ops.addCorsOrigin, { body: { origin } });
      // The daemon stores the canonical form (what browsers send): show that, not what was typed.
      await rt.done(result, `Allowed ${result.origin ?? origin}.`);
    }),
  );

  cors
    .command('rm')
    .description('remove an allowed origin')
    .argument('<origin>')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, origin: string, opts: { yes?: boolean }) => {
        await confirm(`Remove allowed origin ${origin}`, opts.yes);
        await rt.client.call(ops.removeCorsOrigin, { query: { origin } });
        process.stdout.write(`Removed ${origin}.\n`);
      }),
    );
}

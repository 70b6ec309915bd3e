import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Static } from '@sinclair/typebox';
import type { Announcement } from '../../src/api/schemas/announcements.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { confirm, readStdin, stdinIsTty } from '../io/prompt.ts';
import type { View } from '../output/render.ts';
import { act, withOutput } from '../runtime.ts';

type A = Static<typeof Announcement>;
const preview = (html: string) => {
  const text = html
    .replace(/<[^>]*>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > 50 ? `${text.slice(0, 49)}…` : text;
};
const view: View<A> = {
  columns: [
    { header: 'ID', get: (a) => a.id },
    { header: 'KIND', get: (a) => a.kind },
    { header: 'ACTIVE', get: (a) => a.active },
    { header: 'UNTIL', get: (a) => a.activeUntil },
    { header: 'CONTENT', get: (a) => preview(a.content) },
    { header: 'CREATED BY', get: (a) => a.createdBy, wide: true },
    { header: 'CREATED', get: (a) => a.createdAt, wide: true },
    { header: 'UPDATED', get: (a) => a.updatedAt, wide: true },
    { header: 'HTML', get: (a) => a.content, wide: true },
  ],
};

export type Kind = 'INFORMATION' | 'WARNING' | 'PROBLEM';
export function kind(value: string): Kind {
  const k = value.toUpperCase();
  if (k !== 'INFORMATION' && k !== 'WARNING' && k !== 'PROBLEM')
    throw new MonctlError('usage', `kind must be INFORMATION, WARNING or PROBLEM, not "${value}"`, ExitCode.usage);
  return k;
}

/** Content from `--file` (`-` is stdin), else from stdin when it is piped. */
async function content(file: string | undefined, required: boolean): Promise<string | undefined> {
  if (file === '-' || (file === undefined && !stdinIsTty() && required)) return readStdin();
  if (file !== undefined) {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new MonctlError(
        'usage',
        `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        ExitCode.usage,
      );
    }
  }
  if (required) throw new MonctlError('usage', 'the content comes from --file FILE or stdin', ExitCode.usage);
  return undefined;
}

const numericId = (ref: string) => {
  if (!/^\d+$/.test(ref)) throw new MonctlError('usage', `announcement id must be a number, not "${ref}"`, ExitCode.usage);
  return Number(ref);
};

export function register(program: Command): void {
  const ann = program.command('announcements').alias('ann').description('announcements (HTML notices)');

  withOutput(ann.command('list').alias('ls').description('list announcements, newest first')).action(
    act(async (rt) => rt.show(await rt.client.call(ops.listAnnouncements), view)),
  );

  withOutput(ann.command('get').description('show an announcement').argument('<id>')).action(
    act(async (rt, ref: string) => rt.show(await rt.client.call(ops.getAnnouncement, { params: { id: numericId(ref) } }), view)),
  );

  withOutput(ann.command('add').description('publish an announcement; content from --file or stdin'))
    .option('--kind <kind>', 'INFORMATION, WARNING or PROBLEM', 'INFORMATION')
    .option('-f, --file <file>', 'HTML content (- for stdin)')
    .option('--until <datetime>', 'active until (YYYY-MM-DDTHH:MM:SS or ISO-8601 with an offset)')
    .option('--inactive', 'create it inactive')
    .action(
      act(async (rt, opts: { kind: string; file?: string; until?: string; inactive?: boolean }) => {
        const body = {
          kind: kind(opts.kind),
          content: (await content(opts.file, true))!,
          active: !opts.inactive,
          activeUntil: opts.until ?? null,
        };
        const a = await rt.client.call(ops.createAnnouncement, { body });
        await rt.done(a, `Created announcement ${a.id} (${a.kind}).`);
      }),
    );

  withOutput(ann.command('update').description('change an announcement (fields not given are kept)').argument('<id>'))
    .option('--kind <kind>', 'INFORMATION, WARNING or PROBLEM')
    .option('-f, --file <file>', 'new HTML content (- for stdin)')
    .option('--until <datetime>', 'active until; "none" clears it')
    .option('--active', 'activate')
    .option('--inactive', 'deactivate')
    .action(
      act(async (rt, ref: string, opts: { kind?: string; file?: string; until?: string; active?: boolean; inactive?: boolean }) => {
        const id = numericId(ref);
        // PUT replaces the whole announcement: start from what is stored.
        const cur = await rt.client.call(ops.getAnnouncement, { params: { id } });
        const body = {
          kind: opts.kind ? kind(opts.kind) : cur.kind,
          content: (await content(opts.file, false)) ?? cur.content,
          active: opts.active ? true : opts.inactive ? false : cur.active,
          activeUntil: opts.until === 'none' ? null : (opts.until ?? cur.activeUntil),
        };
        const a = await rt.client.call(ops.replaceAnnouncement, { params: { id }, body });
        await rt.done(a, `Updated announcement ${a.id} (${a.kind}).`);
      }),
    );

  ann
    .command('rm')
    .description('delete an announcement')
    .argument('<id>')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, opts: { yes?: boolean }) => {
        const id = numericId(ref);
        await confirm(`Delete announcement ${id}`, opts.yes);
        await rt.client.call(ops.deleteAnnouncement, { params: { id } });
        process.stdout.write(`Deleted announcement ${id}.\n`);
      }),
    );
}

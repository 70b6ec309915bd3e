import type { Static } from '@sinclair/typebox';
import type { Command } from 'commander';
import type { MaintenanceNotice } from '../../src/api/schemas/status-incidents.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { namingFlags } from '../api/flag-errors.ts';
import { ops } from '../api/ops.ts';
import { confirm } from '../io/prompt.ts';
import type { View } from '../output/render.ts';
import { act, type Runtime, resolveRef, withOutput } from '../runtime.ts';
import { message, numeric } from './status-incidents.ts';

type Notice = Static<typeof MaintenanceNotice>;

const view: View<Notice> = {
  columns: [
    { header: 'ID', get: (n) => n.id },
    { header: 'WINDOW', get: (n) => n.windowId },
    { header: 'TITLE', get: (n) => n.title },
    { header: 'UPDATED', get: (n) => n.updatedAt },
    { header: 'MESSAGE', get: (n) => n.message.replace(/\s+/g, ' '), wide: true },
  ],
};

const windowId = (rt: Runtime, ref: string) =>
  resolveRef(
    ref,
    'maintenance window',
    () => rt.client.call(ops.listMaintenanceWindows),
    (w) => w.name,
  );

interface Flags {
  window?: string;
  title?: string;
  message?: string;
  file?: string;
}

const FLAGS = { windowId: '--window', title: '--title', message: '--message' };

function withNoticeFlags(cmd: Command): Command {
  return cmd
    .option('--window <window>', 'the maintenance window, id or name')
    .option('--title <title>', 'the headline readers see')
    .option('-m, --message <markdown>', 'what readers are told (Markdown)')
    .option('-f, --file <file>', 'the message from a file (- for stdin)');
}

/** `monctl status-pages notice …`: maintenance windows shown on a page with their own text (docs/API.md#posted-incidents). */
export function registerNotices(pages: Command, pageId: (rt: Runtime, ref: string) => Promise<number>): void {
  const notice = pages
    .command('notice')
    .alias('notices')
    .description('maintenance windows shown on a status page, before and during the window');

  withOutput(notice.command('list').alias('ls').description("a page's maintenance notices").argument('<page>', 'id or slug')).action(
    act(async (rt, ref: string) => {
      await rt.show(await rt.client.call(ops.listMaintenanceNotices, { params: { id: await pageId(rt, ref) } }), view);
    }),
  );

  withOutput(
    withNoticeFlags(notice.command('add').description('show a maintenance window on a page').argument('<page>', 'id or slug')),
  ).action(
    act(async (rt, ref: string, f: Flags) => {
      const text = await message(f);
      if (!f.window || !f.title || text === undefined) {
        throw new MonctlError('usage', 'give --window, --title and the text (--message or --file)', ExitCode.usage);
      }
      const id = await pageId(rt, ref);
      const body = { windowId: await windowId(rt, f.window), title: f.title, message: text };
      const created = await namingFlags(FLAGS, () => rt.client.call(ops.createMaintenanceNotice, { params: { id }, body }));
      await rt.done(created, `Created maintenance notice ${created.id} on ${ref} for window ${created.windowId}.`);
    }),
  );

  withOutput(withNoticeFlags(notice.command('update').description("change a notice's text or window")))
    .argument('<page>', 'id or slug')
    .argument('<id>', 'notice id')
    .action(
      act(async (rt, ref: string, noticeRef: string, f: Flags) => {
        const text = await message(f);
        const body = {
          ...(f.window ? { windowId: await windowId(rt, f.window) } : {}),
          ...(f.title ? { title: f.title } : {}),
          ...(text !== undefined ? { message: text } : {}),
        };
        if (Object.keys(body).length === 0)
          throw new MonctlError('usage', 'nothing to update: give --window, --title, --message or --file', ExitCode.usage);
        const params = { id: await pageId(rt, ref), noticeId: numeric('a maintenance notice', noticeRef) };
        const updated = await namingFlags(FLAGS, () => rt.client.call(ops.updateMaintenanceNotice, { params, body }));
        await rt.done(updated, `Updated maintenance notice ${updated.id} on ${ref}.`);
      }),
    );

  notice
    .command('rm')
    .description('take a maintenance notice off a page')
    .argument('<page>', 'id or slug')
    .argument('<id>', 'notice id')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, noticeRef: string, opts: { yes?: boolean }) => {
        const params = { id: await pageId(rt, ref), noticeId: numeric('a maintenance notice', noticeRef) };
        await confirm(`Delete maintenance notice ${noticeRef} of ${ref}`, opts.yes);
        await rt.client.call(ops.deleteMaintenanceNotice, { params });
        process.stdout.write(`Deleted maintenance notice ${noticeRef} of ${ref}.\n`);
      }),
    );
}

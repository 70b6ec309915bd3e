import type { Command } from 'commander';
import type { Static } from '@sinclair/typebox';
import type { StatusSubscriber } from '../../src/api/schemas/status-subscribers.ts';
import { usage } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { confirm } from '../io/prompt.ts';
import type { View } from '../output/render.ts';
import { act, type Runtime, withOutput } from '../runtime.ts';
import { groupIds } from './resources.ts';

type S = Static<typeof StatusSubscriber>;

const view: View<S> = {
  columns: [
    { header: 'ID', get: (s) => s.id },
    { header: 'KIND', get: (s) => s.kind },
    { header: 'ADDRESS', get: (s) => s.address },
    { header: 'CONFIRMED', get: (s) => s.confirmed },
    { header: 'GROUPS', get: (s) => (s.groupIds.length || s.resourceIds.length ? s.groupIds : '(all)') },
    { header: 'RESOURCES', get: (s) => s.resourceIds },
    { header: 'CREATED', get: (s) => s.createdAt, wide: true },
    { header: 'CONFIRMED-AT', get: (s) => s.confirmedAt, wide: true },
  ],
};

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Resource ids as given: numbers only (resource names are not unique across groups). */
function resourceIds(values: string[] | undefined): number[] | undefined {
  if (!values?.length) return undefined;
  return values.map((v) => {
    if (!/^\d+$/.test(v)) usage(`--resource takes resource ids (numbers): ${v}`);
    return Number(v);
  });
}

/**
 * `monctl status-pages subscribers list|add-webhook|remove` (docs/API.md#subscriptions):
 * readers sign themselves up on the page; here ADMIN sees them, adds webhooks and removes either.
 */
export function registerSubscribers(pages: Command, pageId: (rt: Runtime, ref: string) => Promise<number>): void {
  const subs = pages.command('subscribers').alias('subs').description("a page's subscribers (ADMIN): email readers and webhooks");

  withOutput(
    subs.command('list').alias('ls').description('list subscribers, with their addresses').argument('<page>', 'id or slug'),
  ).action(
    act(async (rt, ref: string) => {
      const id = await pageId(rt, ref);
      await rt.show(await rt.client.call(ops.listStatusPageSubscribers, { params: { id } }), view);
    }),
  );

  withOutput(
    subs
      .command('add-webhook')
      .description('add a webhook subscriber; prints its whsec_ signing secret, this once')
      .argument('<page>', 'id or slug')
      .argument('<url>', 'http or https URL that gets the signed deliveries')
      .option('--group <group>', 'only updates about this group, id or name (repeat)', collect)
      .option('--resource <id>', 'only updates about this resource id (repeat)', collect),
  ).action(
    act(async (rt, ref: string, url: string, f: { group?: string[]; resource?: string[] }) => {
      const id = await pageId(rt, ref);
      const body = {
        url,
        ...(f.group?.length ? { groupIds: await groupIds(rt, f.group) } : {}),
        ...(f.resource?.length ? { resourceIds: resourceIds(f.resource) } : {}),
      };
      const created = await rt.client.call(ops.addStatusPageWebhookSubscriber, { params: { id }, body });
      await rt.done(
        created,
        `Added webhook subscriber ${created.id} to ${ref}.\nSigning secret (shown once, verify deliveries with it): ${created.secret}`,
      );
    }),
  );

  subs
    .command('remove')
    .alias('rm')
    .description('remove a subscriber')
    .argument('<page>', 'id or slug')
    .argument('<id>', 'subscriber id (see list)')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, subscriber: string, opts: { yes?: boolean }) => {
        const id = await pageId(rt, ref);
        if (!/^\d{1,15}$/.test(subscriber)) usage(`the subscriber id is a number (see list): ${subscriber}`);
        const subscriberId = Number(subscriber);
        await confirm(`Remove subscriber ${subscriberId} of ${ref}`, opts.yes);
        await rt.client.call(ops.deleteStatusPageSubscriber, { params: { id, subscriberId } });
        process.stdout.write(`Removed subscriber ${subscriberId} of ${ref}.\n`);
      }),
    );
}

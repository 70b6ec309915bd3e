import { operations } from '../../src/api/operations.ts';
import { PostsDb } from './seed-posts.ts';
import { DAY, HOUR, type StatusWorld } from './world.ts';

const MIN = 60_000;

export interface PostedWorld {
  posts: PostsDb;
  /** Open: checkout (web, wiki, vault), vpn (vault only). Resolved: login (3 days ago), old (20 days), ancient (100 days). */
  incidents: Record<'checkout' | 'vpn' | 'login' | 'old' | 'ancient', number>;
  /** The windows of the status world (cdn in progress, the drill upcoming) and one over, each with a notice. */
  windows: Record<'cdn' | 'drill' | 'past', number>;
  /** Makes the daemon read again (a resource change drops its cached pages and re-reads what streams show). */
  touch: () => Promise<void>;
}

/**
 * Posted incidents and maintenance notices on the status world's page, as
 * an operator would have posted them over three months, written into the
 * tables (some lie in the past, where the admin API cannot write).
 */
export async function seedPosted(w: StatusWorld): Promise<PostedWorld> {
  const { d, ids, now, page } = w;
  const posts = await PostsDb.open(d);
  const incidents = {
    checkout: await posts.incident(page.id, {
      title: 'Checkout errors',
      impact: 'major',
      resources: [
        [ids.web, 'major'],
        [ids.wiki, 'minor'],
        [ids.vault, 'critical'],
      ],
      updates: [
        { state: 'investigating', html: '<p>Payments fail for some customers.</p>', at: now - 50 * MIN },
        {
          state: 'identified',
          html: '<p>We found <strong>the cause</strong>: a <a href="https://example.com/pr">bad deploy</a>.</p>',
          at: now - 20 * MIN,
        },
      ],
    }),
    vpn: await posts.incident(page.id, {
      title: 'Internal VPN slow',
      impact: 'minor',
      resources: [[ids.vault, 'minor']],
      updates: [{ state: 'investigating', html: '<p>Connections take long.</p>', at: now - 10 * MIN }],
    }),
    login: await posts.incident(page.id, {
      title: 'Login delays',
      impact: 'minor',
      resources: [[ids.web, 'minor']],
      updates: [
        { state: 'investigating', html: '<p>Logins are slow.</p>', at: now - 3 * DAY - HOUR },
        { state: 'resolved', html: '<p>Fixed.</p>', at: now - 3 * DAY },
      ],
    }),
    old: await posts.incident(page.id, {
      title: 'Storage outage',
      impact: 'critical',
      resources: [[ids.api, 'critical']],
      updates: [
        { state: 'investigating', html: '<p>Storage is down.</p>', at: now - 20 * DAY - HOUR },
        { state: 'resolved', html: '<p>Back.</p>', at: now - 20 * DAY },
      ],
    }),
    ancient: await posts.incident(page.id, {
      title: 'Ancient outage',
      impact: 'major',
      updates: [
        { state: 'investigating', html: '<p>Long ago.</p>', at: now - 100 * DAY - HOUR },
        { state: 'resolved', html: '<p>Over.</p>', at: now - 100 * DAY },
      ],
    }),
  };
  const list = await d.admin.call(operations.listMaintenanceWindows);
  const byName = (name: string) => list.find((x: { name: string }) => x.name === name)!.id;
  const at = (ms: number) => new Date(ms).toISOString();
  const past = await d.admin.call(operations.createMaintenanceWindow, {
    body: { name: 'Past work', kind: 'ONE_OFF', startsAt: at(now - 3 * HOUR), endsAt: at(now - 2 * HOUR), resourceIds: [ids.web] },
  });
  const windows = { cdn: byName('CDN provider upgrade'), drill: byName('Database failover drill'), past: past.id };
  await posts.notice(page.id, windows.cdn, 'CDN upgrade under way', '<p>Images may load <em>slowly</em>.</p>');
  await posts.notice(page.id, windows.drill, 'Failover drill on Saturday', '<p>Expect a short blip.</p>');
  await posts.notice(page.id, windows.past, 'Finished work', '<p>Done already.</p>');
  // A change that emits `resource.changed` (a same-value PATCH changes nothing, and emits nothing).
  let touches = 0;
  const touch = async () => {
    await d.admin.call(operations.updateResource, { params: { id: ids.ci }, body: { intervalSeconds: 3600 + (++touches % 2) } });
  };
  await touch();
  return { posts, incidents, windows, touch };
}

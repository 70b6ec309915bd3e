import type { IncomingMessage, ServerResponse } from 'node:http';
import type { statusPageOperations } from '../../src/api/ops/status-pages.ts';
import type { statusSubscriberOperations } from '../../src/api/ops/status-subscribers.ts';
import { notFound } from '../../src/errors.ts';
import { ANONYMOUS } from '../auth/principal.ts';
import { markRoute } from '../http/app.ts';
import { httpsRedirect } from '../http/https-redirect.ts';
import { sendProblem } from '../http/problem.ts';
import type { ModuleFactory } from '../module.ts';
import type { HandlersOf } from '../http/bind.ts';
import { badgeRoute } from './badges/badges.ts';
import { historyBadgeRoute } from './badges/history-badge.ts';
import { type FeedFormat, StatusFeeds } from './feeds/feeds.ts';
import { assetAdminRoutes, serveAsset } from './branding/assets.ts';
import { ASSET_KINDS } from './branding/image.ts';
import { LiveStreams } from './live.ts';
import { PageTable } from './page-table.ts';
import { pageHandlers } from './pages.ts';
import { postHandlers } from './posts/index.ts';
import { audienceOf, sendRepresentation, servePage } from './serve.ts';
import { StatusState } from './state.ts';
import { subscriberDelivery } from './subscribers/delivery.ts';
import { subscriberHandlers } from './subscribers/admin.ts';
import { type ReaderAction, ReaderRoutes, readerAction } from './subscribers/reader-routes.ts';

type Ops = typeof statusPageOperations & typeof statusSubscriberOperations;

/** A page's feeds on its custom hostname: at `/feed.atom` and `/feed.rss`, and at the paths the page's head links to. */
const edgeFeeds = (slug: string) =>
  new Map<string, FeedFormat>([
    ['/feed.atom', 'atom'],
    ['/feed.rss', 'rss'],
    [`/status/${slug}/feed.atom`, 'atom'],
    [`/status/${slug}/feed.rss`, 'rss'],
  ]);

/**
 * Status pages (docs/API.md#status-pages): their admin API, the public server-rendered page
 * at `/status/{slug}` (and `/status`, and `/` on a page's custom hostname on
 * the edge listener), its JSON summary and live stream, and the badges.
 */
export const statusModule: ModuleFactory = async (ctx) => {
  const pages = new PageTable(ctx);
  await pages.reload();
  const state = new StatusState(ctx, pages);
  const live = new LiveStreams(state);
  const subscribers = subscriberDelivery(ctx);
  const reader = new ReaderRoutes(state);
  const feeds = new StatusFeeds(state);
  // Pods: pages and what they show, changed through another pod.
  ctx.cluster?.onTables(['status_pages'], () => state.pagesChanged());
  ctx.cluster?.onTables(['groups', 'resource_groups', 'resources', 'announcements'], () => state.membersChanged());
  // Posted incidents and maintenance notices: the page's views go, its live streams tell their readers.
  const postsChanged = () => live.dirty(false, true);
  ctx.bus.on('status.posts.changed', postsChanged);
  // Posted through another pod: the same, for every page (the notification names a table, not a page).
  ctx.cluster?.onTables(['status_incidents', 'status_incident_updates', 'status_incident_resources', 'status_maintenance_notices'], () =>
    ctx.bus.emit('status.posts.changed', { pageId: 0 }),
  );
  let reloadTimer: NodeJS.Timeout | undefined;

  const bySlug = (slug: string) => {
    const page = pages.bySlug(slug);
    if (!page) throw notFound(`No status page ${slug}`);
    return page;
  };

  const handlers: HandlersOf<Ops> = {
    ...pageHandlers(state),
    ...subscriberHandlers(state, pages),
    async getStatusPageSummary({ params, principal, req, res }) {
      const audience = audienceOf(principal);
      const view = await state.view(bySlug(params.slug), audience);
      // Written here (304, compression, ETag); test/status/page.test.ts checks the body against its schema.
      await sendRepresentation(req, res, view.json, audience, { 'Content-Type': 'application/json' });
      return view.summary;
    },
    async statusPageEvents({ params, principal, req, res }) {
      await live.serve(req, res, bySlug(params.slug), audienceOf(principal));
    },
  };

  /** `/` and the page's API paths on the edge listener for a custom hostname; everything else is the routes'. */
  const edgeFront = (req: IncomingMessage, res: ServerResponse): boolean => {
    const page = pages.byHost(req.headers.host);
    if (!page) return false;
    const path = (req.url ?? '/').split('?')[0];
    // The form on the page posts to the page's own sign-up paths, on whichever host served it.
    const action = readerAction(page.slug, path);
    if (req.method !== 'GET' && req.method !== 'HEAD' && (req.method !== 'POST' || !action)) return false;
    const fail = (err: unknown) => sendProblem(req, res, err, ctx.log);
    const feed = edgeFeeds(page.slug).get(path);
    const own =
      path === '/' ||
      path === '/history' ||
      path === `/api/status-pages/${page.slug}/summary` ||
      path === `/api/status-pages/${page.slug}/events` ||
      feed !== undefined ||
      ASSET_KINDS.some((k) => path === `/${k}` || path === `/status/${page.slug}/${k}`) ||
      action !== undefined;
    // The page's own paths only: others on this hostname belong to routes (and ACME's HTTP-01 answers).
    const redirect = own && page.https_redirect === 1 ? httpsRedirect(ctx.config, req, page.custom_hostname!, req.url ?? '/') : undefined;
    if (redirect) {
      fail(redirect);
      return true;
    }
    if (path === '/' || path === '/history') {
      servePage(state, req, res, page, ANONYMOUS, path === '/' ? 'page' : 'history').catch(fail);
      return true;
    }
    if (feed) {
      feeds.serveEdge(req, res, page, feed).catch(fail);
      return true;
    }
    // The logo and favicon: the page links `/status/{slug}/…`, which must work here too.
    const asset = ASSET_KINDS.find((k) => path === `/${k}` || path === `/status/${page.slug}/${k}`);
    if (asset) {
      serveAsset(state, req, res, page, asset).catch(fail);
      return true;
    }
    if (action) {
      reader.serve(req, res, page, action, true).catch(fail);
      return true;
    }
    if (path === `/api/status-pages/${page.slug}/summary`) {
      state
        .view(page, 'anonymous')
        .then((view) => sendRepresentation(req, res, view.json, 'anonymous', { 'Content-Type': 'application/json' }))
        .catch(fail);
      return true;
    }
    if (path === `/api/status-pages/${page.slug}/events`) {
      live.serve(req, res, page, 'anonymous').catch(fail);
      return true;
    }
    return false;
  };

  return {
    name: 'status',
    handlers: { ...handlers, ...postHandlers },
    middleware: [
      // `/` shows the status page once there is one (the explorer stays at /api).
      (req, res, next) => {
        if (req.url !== '/' || (req.method !== 'GET' && req.method !== 'HEAD') || !pages.first) return next();
        markRoute(req, '/');
        res.writeHead(302, { Location: '/status', 'Cache-Control': 'no-cache' }).end();
      },
    ],
    routes(router) {
      router.get('/status', (req, res) => servePage(state, req, res, pages.first));
      router.get('/status/:slug', (req, res) =>
        servePage(state, req, res, pages.bySlug((req as { params?: Record<string, string> }).params?.slug ?? '')),
      );
      for (const format of ['atom', 'rss'] as const) {
        router.get(`/status/:slug/feed.${format}`, (req, res) =>
          feeds.serveApi(req, res, pages.bySlug((req as { params?: Record<string, string> }).params?.slug ?? ''), format),
        );
      }
      for (const kind of ASSET_KINDS) {
        const admin = assetAdminRoutes(state, kind);
        router.put(`/admin/api/status-pages/:id/${kind}`, admin.put);
        router.delete(`/admin/api/status-pages/:id/${kind}`, admin.remove);
        router.get(`/status/:slug/${kind}`, (req, res) =>
          serveAsset(state, req, res, pages.bySlug((req as { params?: Record<string, string> }).params?.slug ?? ''), kind),
        );
      }
      const readerRoute = (action: ReaderAction) => (req: IncomingMessage, res: ServerResponse) =>
        reader.serve(req, res, pages.bySlug((req as { params?: Record<string, string> }).params?.slug ?? ''), action);
      for (const [path, action] of [
        ['/status/:slug/subscribe', 'subscribe'],
        ['/status/:slug/subscribe/confirm', 'confirm'],
        ['/status/:slug/unsubscribe', 'unsubscribe'],
      ] as const) {
        router.get(path, readerRoute(action));
        router.post(path, readerRoute(action));
      }
      router.get('/status/:slug/history', (req, res) =>
        servePage(state, req, res, pages.bySlug((req as { params?: Record<string, string> }).params?.slug ?? ''), undefined, 'history'),
      );
      router.get('/api/badges/:id/status.svg', badgeRoute(ctx, 'status'));
      router.get('/api/badges/:id/uptime.svg', badgeRoute(ctx, 'uptime'));
      router.get('/api/badges/:id/response.svg', badgeRoute(ctx, 'response'));
      router.get('/api/badges/:id/history.svg', historyBadgeRoute(ctx));
    },
    edgeFront,
    async start() {
      live.start();
      await subscribers.start();
      feeds.start();
      // Pages changed through another daemon on the same database show up within a minute.
      reloadTimer = setInterval(() => void pages.reload().catch((err) => ctx.log.warn({ err }, 'status pages reload failed')), 60_000);
      reloadTimer.unref();
    },
    async stop() {
      clearInterval(reloadTimer);
      ctx.bus.off('status.posts.changed', postsChanged);
      live.stop();
      await subscribers.stop();
      feeds.stop();
    },
  };
};

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { statusPageOperations } from '../../src/api/ops/status-pages.ts';
import { notFound } from '../../src/errors.ts';
import { ANONYMOUS } from '../auth/principal.ts';
import { markRoute } from '../http/app.ts';
import { httpsRedirect } from '../http/https-redirect.ts';
import { sendProblem } from '../http/problem.ts';
import type { ModuleFactory } from '../module.ts';
import type { HandlersOf } from '../http/bind.ts';
import { badgeRoute } from './badges/badges.ts';
import { LiveStreams } from './live.ts';
import { PageTable } from './page-table.ts';
import { pageHandlers } from './pages.ts';
import { postHandlers } from './posts/index.ts';
import { audienceOf, sendRepresentation, servePage } from './serve.ts';
import { StatusState } from './state.ts';

type Ops = typeof statusPageOperations;

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
  // Pods: pages and what they show, changed through another pod.
  ctx.cluster?.onTables(['status_pages'], () => state.pagesChanged());
  ctx.cluster?.onTables(['groups', 'resource_groups', 'resources', 'announcements'], () => state.membersChanged());
  // Posted incidents and maintenance notices: the page's views go, its live streams tell their readers.
  const postsChanged = () => live.dirty(false, true);
  ctx.bus.on('status.posts.changed', postsChanged);
  let reloadTimer: NodeJS.Timeout | undefined;

  const bySlug = (slug: string) => {
    const page = pages.bySlug(slug);
    if (!page) throw notFound(`No status page ${slug}`);
    return page;
  };

  const handlers: HandlersOf<Ops> = {
    ...pageHandlers(state),
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
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const page = pages.byHost(req.headers.host);
    if (!page) return false;
    const path = (req.url ?? '/').split('?')[0];
    const fail = (err: unknown) => sendProblem(req, res, err, ctx.log);
    const own =
      path === '/' ||
      path === '/history' ||
      path === `/api/status-pages/${page.slug}/summary` ||
      path === `/api/status-pages/${page.slug}/events`;
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
      router.get('/status/:slug/history', (req, res) =>
        servePage(state, req, res, pages.bySlug((req as { params?: Record<string, string> }).params?.slug ?? ''), undefined, 'history'),
      );
      router.get('/api/badges/:id/status.svg', badgeRoute(ctx, 'status'));
      router.get('/api/badges/:id/uptime.svg', badgeRoute(ctx, 'uptime'));
      router.get('/api/badges/:id/response.svg', badgeRoute(ctx, 'response'));
    },
    edgeFront,
    start() {
      live.start();
      // Pages changed through another daemon on the same database show up within a minute.
      reloadTimer = setInterval(() => void pages.reload().catch((err) => ctx.log.warn({ err }, 'status pages reload failed')), 60_000);
      reloadTimer.unref();
    },
    stop() {
      clearInterval(reloadTimer);
      ctx.bus.off('status.posts.changed', postsChanged);
      live.stop();
    },
  };
};

import type { IncomingMessage, ServerResponse } from 'node:http';
import { MONITORING_CHANNEL } from '../../src/api/schemas/monitoring.ts';
import { formatDateTime } from '../../src/time.ts';
import type { Channel } from '../events/channel.ts';
import { serveStream } from '../events/sse.ts';
import { AUDIENCES, type Audience, type LiveState, type PageRow, readLiveState, shownNames, shownStatus } from './live-state.ts';
import { MAX_POSTED, POSTED_RECENT_MS, readNotices, readPosted } from './posted-read.ts';
import { postsPart } from './render/posted-html.ts';
import { updatedText } from './render/page-html.ts';
import { registerStreamCapMetrics } from './live-metrics.ts';
import { StreamCaps } from './live-caps.ts';
import type { StatusState } from './state.ts';

/** Changes are gathered this long before the watched pages are read again (a burst of results is one read). */
const DEBOUNCE_MS = 200;
/** Watched pages are also read this often: maintenance windows start and end by the clock alone. */
const TICK_MS = 30_000;
/** Kinds on the monitoring channel that can change what a page shows. */
const TRIGGERS = new Set(['STATUS_CHANGED', 'INCIDENT_OPENED', 'INCIDENT_RESOLVED']);

interface Shown {
  overall: LiveState['overall'];
  statuses: Map<number, { status: string; label: string }>;
  /** The tag of the posted part (posted-html.ts postsPart): the page script fetches the page again when its own differs. */
  posts: string;
}
type Frame = {
  overall?: LiveState['overall'];
  resources: Array<{ id: number; status: string; label: string }>;
  posts?: string;
  at: string;
};

const channelName = (page: PageRow, audience: Audience) => `status-page:${page.id}:${audience}`;

function shownOf(live: LiveState, posts: string): Shown {
  const statuses = new Map<number, { status: string; label: string }>();
  for (const g of live.groups)
    for (const r of g.resources) {
      const s = shownStatus(r);
      statuses.set(r.id, { status: s.key, label: s.label });
    }
  return { overall: live.overall, statuses, posts };
}

/** The tag of what the page shows of its posted incidents and maintenance notices to this audience (the same reads as the summary's). */
async function postsTag(ctx: StatusState['ctx'], page: PageRow, live: LiveState): Promise<string> {
  const [posted, notices] = await Promise.all([
    readPosted(ctx, page.id, shownNames(live), live.now - POSTED_RECENT_MS, MAX_POSTED),
    readNotices(ctx, page.id, live.now),
  ]);
  return postsPart(posted, notices).tag;
}

function frameOf(shown: Shown, at: number): Frame {
  return {
    overall: shown.overall,
    resources: [...shown.statuses].map(([id, s]) => ({ id, ...s })),
    posts: shown.posts,
    at: updatedText(formatDateTime(at)),
  };
}

/** What changed from `before` to `after`, or undefined when nothing did. */
function diff(before: Shown, after: Shown, at: number): Frame | undefined {
  const resources: Frame['resources'] = [];
  for (const [id, s] of after.statuses) {
    const was = before.statuses.get(id);
    if (!was || was.status !== s.status) resources.push({ id, ...s });
  }
  const overall = before.overall.state !== after.overall.state ? after.overall : undefined;
  const posts = before.posts !== after.posts ? after.posts : undefined;
  if (!overall && !posts && resources.length === 0) return undefined;
  return { ...(overall ? { overall } : {}), resources, ...(posts ? { posts } : {}), at: updatedText(formatDateTime(at)) };
}

/**
 * The public stream of each page (`/api/status-pages/{slug}/events`), one
 * channel per page and audience. Changes to checks, incidents and resources
 * mark the pages dirty; the watched ones are read again once per debounce
 * window and what changed on them goes out as `PAGE_CHANGED`. Streams are
 * bounded like every SSE stream (replay buffer, unsent bytes per subscriber)
 * and in number: all together, per client address and per connection
 * (live-caps.ts: anyone may open them).
 */
export class LiveStreams {
  readonly #state: StatusState;
  /** What each channel's subscribers were last shown: the baseline of the next diff. */
  readonly #last = new WeakMap<Channel, Shown>();
  /** Channels a refresh passed over while their first snapshot was read. */
  readonly #behindSnapshot = new WeakSet<Channel>();
  #timer: NodeJS.Timeout | undefined;
  #tick: NodeJS.Timeout | undefined;
  readonly #caps: StreamCaps;
  readonly #cleanup: Array<() => void> = [];

  constructor(state: StatusState) {
    this.#state = state;
    const shed = registerStreamCapMetrics(state.ctx.metrics.registry, () => this.#caps.open);
    this.#caps = new StreamCaps(state.ctx.config.statusStreams, (limit) => shed.inc({ limit }));
  }

  start(): void {
    const { ctx } = this.#state;
    this.#cleanup.push(
      ctx.events.channel(MONITORING_CHANNEL).listen((event) => {
        if (!TRIGGERS.has(event.kind)) return;
        const id = (event.data as { resourceId?: unknown }).resourceId;
        if (typeof id !== 'number' || this.#state.members.shows(id)) this.dirty(false);
      }),
    );
    const members = () => this.dirty(true);
    ctx.bus.on('resource.changed', members);
    ctx.bus.on('resource.deleted', members);
    this.#cleanup.push(() => {
      ctx.bus.off('resource.changed', members);
      ctx.bus.off('resource.deleted', members);
    });
    // The tick reads the posted part too: a maintenance notice turns "in progress" and goes by the clock alone.
    this.#tick = setInterval(() => {
      this.#postsDirty = true;
      void this.#refresh();
    }, TICK_MS);
    this.#tick.unref();
    this.#state.onPagesChanged = () => {
      const live = new Set(this.#state.pages.all.map((p) => p.id));
      // A deleted page's streams end (a changed page's go on: its id stays).
      for (const page of this.#known.values()) {
        if (!live.has(page.id)) for (const a of AUDIENCES) ctx.events.drop(channelName(page, a));
      }
      this.dirty(false, true);
    };
  }

  stop(): void {
    this.#state.members.stop();
    clearTimeout(this.#timer);
    clearInterval(this.#tick);
    for (const undo of this.#cleanup.splice(0)) undo();
  }

  /**
   * Something pages show may have changed: cached pages go now, watched pages
   * are read again shortly, their posted part too when `posts` (posted
   * incidents or notices changed) or `members` (which resources an incident
   * may name changed). Status changes alone leave it: it does not depend on them.
   */
  dirty(members: boolean, posts = members): void {
    if (members) this.#state.membersChanged();
    else this.#state.changed();
    if (posts) this.#postsDirty = true;
    this.#schedule();
  }

  /** Whether the next refresh reads the posted part of the pages again (else each channel keeps its last tag). */
  #postsDirty = false;

  /** Reads the watched pages again once the debounce window has passed. */
  #schedule(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      void this.#refresh();
    }, DEBOUNCE_MS);
  }

  /** Pages that have had a stream, by id (their channels may still exist). */
  readonly #known = new Map<number, PageRow>();

  async #refresh(): Promise<void> {
    const { ctx } = this.#state;
    const posts = this.#postsDirty;
    this.#postsDirty = false;
    let postsMoved = false;
    for (const page of this.#state.pages.all) {
      for (const audience of AUDIENCES) {
        const name = channelName(page, audience);
        if (!ctx.events.has(name)) continue;
        const channel = ctx.events.channel(name);
        if (channel.subscriberCount === 0) continue;
        const before = this.#last.get(channel);
        if (!before) {
          // Its first subscriber's snapshot is still being read, and will be the baseline (a frame sent
          // now would repeat the whole page behind it). It may be older than this read: read again after it.
          this.#behindSnapshot.add(channel);
          if (posts) this.#postsDirty = true;
          continue;
        }
        try {
          const now = Date.now();
          const live = await readLiveState(ctx, page, audience, now);
          const after = shownOf(live, posts ? await postsTag(ctx, page, live) : before.posts);
          this.#last.set(channel, after);
          const change = diff(before, after, now);
          // Readers fetch the page on a new tag: a cached one (changed by the clock alone) must not answer them.
          if (change?.posts && !postsMoved) {
            postsMoved = true;
            this.#state.changed();
          }
          if (change) channel.publish('PAGE_CHANGED', change);
        } catch (err) {
          if (posts) this.#postsDirty = true;
          if (!ctx.draining) ctx.log.warn({ err, page: page.slug }, 'status page: reading live state failed');
        }
      }
    }
  }

  /** Serves one subscriber: `SNAPSHOT` (or a replay after Last-Event-ID), then `PAGE_CHANGED`. */
  async serve(req: IncomingMessage, res: ServerResponse, page: PageRow, audience: Audience): Promise<void> {
    const { ctx } = this.#state;
    const release = this.#caps.admit(req, res);
    this.#known.set(page.id, page);
    const name = channelName(page, audience);
    const channel = ctx.events.channel(name);
    await serveStream(req, res, channel, {
      heartbeatMs: ctx.config.sseHeartbeatMs,
      maxQueuedBytes: ctx.config.sseMaxQueuedBytes,
      snapshot: async () => {
        const now = Date.now();
        const live = await readLiveState(ctx, page, audience, now);
        const shown = shownOf(live, await postsTag(ctx, page, live));
        if (!this.#last.has(channel)) {
          this.#last.set(channel, shown);
          if (this.#behindSnapshot.delete(channel)) this.#schedule();
        }
        return frameOf(shown, now);
      },
      onClose: () => {
        release();
        // With no one left, what they were shown is no one's baseline: the next reader's snapshot is.
        if (channel.subscriberCount === 0) this.#last.delete(channel);
        ctx.events.dropWhenIdle(name, 60_000);
      },
    });
  }
}

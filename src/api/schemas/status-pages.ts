import { Type } from '@sinclair/typebox';
import { AnnouncementKind } from './announcements.ts';
import { Body, DateTime, Id, NullableDateTime, StringEnum } from './common.ts';
import { CurrentStatus, GroupIds, Name, ResourceType } from './monitoring.ts';
import { PostedIncident } from './status-incidents.ts';

/** Status pages (docs/API.md#status-pages): what the public sees, as a resource of the admin API and as a summary. */
export const Slug = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$',
  description: '1 to 64 of a-z, 0-9 and -, not starting or ending with -',
});
export const SlugParams = Type.Object({ slug: Slug });

const Text = (max: number) => Type.String({ maxLength: max, description: `plain text, at most ${max} characters` });
const Nullable = <T extends ReturnType<typeof Text>>(t: T) => Type.Union([t, Type.Null()]);
const Hostname = Type.String({ minLength: 1, maxLength: 253, description: 'a DNS name (the Host the edge listener serves the page for)' });
const ErrorDetails = Type.Boolean({
  description:
    "anonymous visitors also see the probes' own error messages (addresses, ports); otherwise they see a generic cause (`connection refused`, `timeout`, `HTTP 503 Service Unavailable`). Logged-in visitors always see them",
});
/** Branding (docs/API.md#branding). */
const AccentColor = Type.String({
  pattern: '^#[0-9a-fA-F]{6}$',
  description:
    '`#rrggbb`: links in the light scheme, and the fill under the header link (white text) in both; refused (400) below the WCAG AA contrast ratio (docs/API.md#branding)',
});
const HeaderLink = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'an http or https URL (your site, say)' }),
    text: Type.String({ minLength: 1, maxLength: 100, description: 'the link text, plain' }),
  },
  { additionalProperties: false },
);
const HttpsRedirect = Type.Boolean({
  description: 'plain-HTTP requests for the page on its custom hostname get a 308 to HTTPS (needs --edge-tls-listen)',
});
const Subscriptions = Type.Boolean({
  description: 'readers may subscribe (docs/API.md#subscriptions): the email form shows when emailNotifierId is set too',
});
const EmailNotifierId = Type.Union([Id, Type.Null()], {
  description: 'an EMAIL notifier whose SMTP settings send subscriber mail; null: no email sign-ups',
});

export const StatusPage = Type.Object(
  {
    id: Id,
    slug: Slug,
    title: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    groupIds: Type.Array(Id, { description: 'the sections, in this order; empty: every group the visitor may see, by name' }),
    showAnnouncements: Type.Boolean(),
    showIncidents: Type.Boolean(),
    showErrorDetails: ErrorDetails,
    customHostname: Type.Union([Type.String(), Type.Null()]),
    httpsRedirect: HttpsRedirect,
    footer: Type.Union([Type.String(), Type.Null()]),
    accentColor: Type.Union([Type.String(), Type.Null()], { description: 'branding: `#rrggbb`; null: the default' }),
    headerLink: Type.Union([Type.Object({ url: Type.String(), text: Type.String() }), Type.Null()]),
    subscriptions: Subscriptions,
    emailNotifierId: EmailNotifierId,
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'StatusPage' },
);

export const StatusPageCreate = Body(
  {
    slug: Slug,
    title: Name,
    description: Type.Optional(Nullable(Text(2000))),
    groupIds: Type.Optional(GroupIds),
    showAnnouncements: Type.Optional(Type.Boolean({ default: true })),
    showIncidents: Type.Optional(Type.Boolean({ default: true })),
    showErrorDetails: Type.Optional(Type.Boolean({ ...ErrorDetails, default: false })),
    customHostname: Type.Optional(Type.Union([Hostname, Type.Null()])),
    httpsRedirect: Type.Optional(Type.Boolean({ ...HttpsRedirect, default: false })),
    footer: Type.Optional(Nullable(Text(2000))),
    accentColor: Type.Optional(Type.Union([AccentColor, Type.Null()])),
    headerLink: Type.Optional(Type.Union([HeaderLink, Type.Null()])),
    subscriptions: Type.Optional(Type.Boolean({ ...Subscriptions, default: false })),
    emailNotifierId: Type.Optional(EmailNotifierId),
  },
  'StatusPageCreate',
);

export const StatusPagePatch = Body(
  {
    slug: Type.Optional(Slug),
    title: Type.Optional(Name),
    description: Type.Optional(Nullable(Text(2000))),
    groupIds: Type.Optional(GroupIds),
    showAnnouncements: Type.Optional(Type.Boolean()),
    showIncidents: Type.Optional(Type.Boolean()),
    showErrorDetails: Type.Optional(ErrorDetails),
    customHostname: Type.Optional(Type.Union([Hostname, Type.Null()])),
    httpsRedirect: Type.Optional(HttpsRedirect),
    footer: Type.Optional(Nullable(Text(2000))),
    accentColor: Type.Optional(Type.Union([AccentColor, Type.Null()])),
    headerLink: Type.Optional(Type.Union([HeaderLink, Type.Null()])),
    subscriptions: Type.Optional(Subscriptions),
    emailNotifierId: Type.Optional(EmailNotifierId),
  },
  'StatusPagePatch',
);

export const OVERALL_STATES = ['OPERATIONAL', 'DEGRADED', 'PARTIAL_OUTAGE', 'MAJOR_OUTAGE', 'MAINTENANCE'] as const;
export type OverallState = (typeof OVERALL_STATES)[number];

const Percent = Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()], {
  description: 'percent of AVAILABLE checks; null without checks',
});

const SummaryResource = Type.Object(
  {
    id: Id,
    name: Type.String(),
    resourceType: ResourceType,
    currentStatus: CurrentStatus,
    inMaintenance: Type.Boolean(),
    down: Type.Boolean({ description: 'an incident is open and the resource is not in maintenance' }),
    uptime: Type.Object({ h24: Percent, d30: Percent, d90: Percent }),
    daily: Type.Array(Percent, { description: 'uptime of each day of `days`, oldest first' }),
    dailyIncidents: Type.Array(Type.Integer({ minimum: 0 }), { description: 'incidents open on each day of `days`' }),
  },
  { title: 'StatusSummaryResource' },
);

const SummaryIncident = Type.Object(
  {
    id: Id,
    resourceId: Id,
    resourceName: Type.String(),
    openedAt: DateTime,
    resolvedAt: NullableDateTime,
    durationSeconds: Type.Integer({ minimum: 0, description: 'until resolvedAt, or until now while open' }),
    cause: Type.Union([Type.String(), Type.Null()], {
      description:
        "the probe's message for logged-in visitors and on pages with showErrorDetails; else a generic cause (`connection refused`, `timeout`, `HTTP 503 Service Unavailable`)",
    }),
    errorCode: Type.Union([Type.String(), Type.Null()]),
    maintenance: Type.Boolean(),
  },
  { title: 'StatusSummaryIncident' },
);

const SummaryWindow = Type.Object(
  {
    id: Id,
    name: Type.String(),
    startsAt: DateTime,
    endsAt: DateTime,
    resourceIds: Type.Array(Id, { description: 'the shown resources it covers' }),
  },
  { title: 'StatusSummaryMaintenance' },
);

/** A maintenance window posted on the page with its own text, shown before and during its (current or next) opening. */
export const SummaryNotice = Type.Object(
  {
    id: Id,
    windowId: Id,
    title: Type.String(),
    messageHtml: Type.String({ description: 'the Markdown message rendered and sanitised' }),
    startsAt: DateTime,
    endsAt: DateTime,
    inProgress: Type.Boolean(),
  },
  { title: 'StatusSummaryMaintenanceNotice' },
);

export const StatusSummary = Type.Object(
  {
    page: Type.Object({
      slug: Slug,
      title: Type.String(),
      description: Type.Union([Type.String(), Type.Null()]),
      footer: Type.Union([Type.String(), Type.Null()]),
      accentColor: Type.Union([Type.String(), Type.Null()], { description: 'branding: `#rrggbb`; null: the default' }),
      logoUrl: Type.Union([Type.String(), Type.Null()], { description: 'branding: the logo, a path on this host' }),
      faviconUrl: Type.Union([Type.String(), Type.Null()], { description: 'branding: the favicon, a path on this host' }),
      headerLink: Type.Union([Type.Object({ url: Type.String(), text: Type.String() }), Type.Null()]),
      subscribe: Type.Object({ email: Type.Boolean({ description: 'readers may sign up by email here' }) }),
      feeds: Type.Object({ atom: Type.String(), rss: Type.String() }, { description: 'the posted incidents as feeds, paths on this host' }),
    }),
    generatedAt: DateTime,
    overall: Type.Object({ state: StringEnum(OVERALL_STATES), label: Type.String() }),
    announcements: Type.Array(
      Type.Object({
        id: Id,
        kind: AnnouncementKind,
        content: Type.String({ description: 'sanitized HTML' }),
        activeUntil: NullableDateTime,
        createdAt: DateTime,
      }),
    ),
    days: Type.Array(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' }), {
      description: 'the 90 UTC days of the daily bars, oldest first',
    }),
    groups: Type.Array(Type.Object({ id: Id, name: Type.String(), resources: Type.Array(SummaryResource) })),
    incidents: Type.Array(SummaryIncident, { description: 'open ones and those resolved in the last 14 days, newest first (at most 50)' }),
    postedIncidents: Type.Array(PostedIncident, {
      description: 'incidents posted on the page: open ones first, then those resolved in the last 14 days, newest first',
    }),
    maintenance: Type.Object({
      active: Type.Array(SummaryWindow),
      upcoming: Type.Array(SummaryWindow, { description: 'starting in the next 7 days' }),
      notices: Type.Array(SummaryNotice, { description: 'notices posted on the page for windows in progress or to come, soonest first' }),
    }),
  },
  { title: 'StatusSummary' },
);

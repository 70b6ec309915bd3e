import { Type } from '@sinclair/typebox';
import { Body, DateTime, Id, NullableDateTime, StringEnum } from './common.ts';

/** Posted incidents of status pages (docs/API.md#posted-incidents): what an operator tells readers. */
export const POSTED_IMPACTS = ['none', 'minor', 'major', 'critical'] as const;
export const POSTED_STATES = ['investigating', 'identified', 'monitoring', 'resolved'] as const;
export const PostedImpact = StringEnum(POSTED_IMPACTS, { description: "the incident's impact, as Statuspage grades it" });
export const PostedState = StringEnum(POSTED_STATES, { description: 'where the work stands; `resolved` ends the incident' });

/** One entry of the timeline. */
export const PostedUpdate = Type.Object({
  id: Id,
  state: PostedState,
  message: Type.String({ description: 'Markdown, as posted' }),
  messageHtml: Type.String({ description: 'the message rendered and sanitised, as the page shows it' }),
  automatic: Type.Boolean({ description: 'copied from the automatic incident this one was promoted from' }),
  createdAt: DateTime,
});

export const PostedIncident = Type.Object(
  {
    id: Id,
    pageId: Id,
    title: Type.String(),
    impact: PostedImpact,
    state: PostedState,
    sourceIncidentId: Type.Union([Id, Type.Null()], { description: 'the automatic incident it was promoted from' }),
    resources: Type.Array(Type.Object({ id: Id, name: Type.String(), impact: PostedImpact })),
    updates: Type.Array(PostedUpdate, { description: 'newest first' }),
    createdAt: DateTime,
    updatedAt: DateTime,
    resolvedAt: NullableDateTime,
  },
  { title: 'PostedIncident' },
);

/** A message of a posted update or a maintenance notice: Markdown, 64 KiB of UTF-8 at most (the handler counts bytes). */
export const MAX_MESSAGE_BYTES = 64 * 1024;
/** Resources one incident may name, and updates one incident may hold: bounds on what one request can make the page carry. */
export const MAX_INCIDENT_RESOURCES = 200;
export const MAX_INCIDENT_UPDATES = 200;

const Title = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^(?=[\\s\\S]*\\S)[^\\u0000-\\u001f\\u007f]+$',
  description: 'plain text, 1 to 200 characters',
});
const Message = Type.String({
  minLength: 1,
  maxLength: MAX_MESSAGE_BYTES,
  description: 'Markdown, at most 64 KiB; rendered and sanitised as announcements are',
});
const AffectedResources = Type.Array(
  Type.Object(
    { id: Id, impact: Type.Optional(PostedImpact) },
    { additionalProperties: false, description: "`impact` left out: the incident's" },
  ),
  { maxItems: MAX_INCIDENT_RESOURCES, description: 'resources on the page, each once; the list replaces the one before' },
);

export const PostedIncidentParams = Type.Object({ id: Id, incidentId: Id });

export const PostedIncidentQuery = Type.Object({
  state: Type.Optional(StringEnum(['open', 'resolved'] as const)),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
});

export const PostedIncidentOpen = Body(
  {
    title: Type.Optional(Title),
    impact: Type.Optional(PostedImpact),
    resources: Type.Optional(AffectedResources),
    state: Type.Optional(PostedState),
    message: Type.Optional(Message),
    fromIncidentId: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'promote this automatic incident: its opening (and resolution) start the timeline, its resource is affected',
      }),
    ),
  },
  'PostedIncidentOpen',
);

export const PostedUpdateBody = Body(
  {
    state: PostedState,
    message: Message,
    title: Type.Optional(Title),
    impact: Type.Optional(PostedImpact),
    resources: Type.Optional(AffectedResources),
  },
  'PostedUpdateBody',
);

/** A maintenance window shown on a page with its own text (docs/API.md#posted-incidents). */
export const MaintenanceNotice = Type.Object(
  {
    id: Id,
    pageId: Id,
    windowId: Id,
    title: Type.String(),
    message: Type.String({ description: 'Markdown, as posted' }),
    messageHtml: Type.String({ description: 'the message rendered and sanitised, as the page shows it' }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'MaintenanceNotice' },
);

export const MaintenanceNoticeCreate = Body({ windowId: Id, title: Title, message: Message }, 'MaintenanceNoticeCreate');
export const MaintenanceNoticePatch = Body(
  { windowId: Type.Optional(Id), title: Type.Optional(Title), message: Type.Optional(Message) },
  'MaintenanceNoticePatch',
);
export const MaintenanceNoticeParams = Type.Object({ id: Id, noticeId: Id });

import { Type } from '@sinclair/typebox';
import { DateTime, Id, NullableDateTime, StringEnum } from './common.ts';

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

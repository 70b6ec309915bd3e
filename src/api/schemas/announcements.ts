import { Type } from '@sinclair/typebox';
import { Body, DateTime, DateTimeInput, Id, NullableDateTime, StringEnum } from './common.ts';

/** Announcements of the monitoring seed: HTML notices, sanitized on write. */
export const ANNOUNCEMENT_KINDS = ['INFORMATION', 'WARNING', 'PROBLEM'] as const;
export const AnnouncementKind = StringEnum(ANNOUNCEMENT_KINDS);

/** 64 KiB of UTF-8; the schema caps characters, the handler counts bytes. */
export const MAX_CONTENT_BYTES = 64 * 1024;

export const Announcement = Type.Object(
  {
    id: Id,
    kind: AnnouncementKind,
    content: Type.String({ description: 'sanitized HTML' }),
    createdBy: Type.String(),
    active: Type.Boolean({ description: 'false once activeUntil has passed' }),
    activeUntil: NullableDateTime,
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'Announcement' },
);

export const AnnouncementBody = Body(
  {
    kind: AnnouncementKind,
    content: Type.String({ maxLength: MAX_CONTENT_BYTES, description: 'HTML, at most 64 KiB' }),
    active: Type.Boolean(),
    activeUntil: Type.Optional(Type.Union([DateTimeInput, Type.Null()])),
  },
  'AnnouncementBody',
);

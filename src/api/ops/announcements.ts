import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { Announcement, AnnouncementBody } from '../schemas/announcements.ts';
import { Deleted, IdParams } from '../schemas/common.ts';

const tag = 'Announcements';

export const announcementOperations = {
  listAnnouncements: defineOperation({
    id: 'listAnnouncements',
    method: 'GET',
    path: '/api/announcements',
    tag,
    access: 'public',
    summary: 'Every announcement, active and inactive, newest creation first',
    response: Type.Array(Announcement),
  }),
  getAnnouncement: defineOperation({
    id: 'getAnnouncement',
    method: 'GET',
    path: '/api/announcements/{id}',
    tag,
    access: 'public',
    summary: 'One announcement',
    params: IdParams,
    response: Announcement,
    errors: [404],
  }),
  createAnnouncement: defineOperation({
    id: 'createAnnouncement',
    method: 'POST',
    path: '/api/announcements',
    tag,
    access: 'admin',
    summary: 'Publish an announcement',
    description: 'The HTML is sanitized to a safe subset before it is stored.',
    body: AnnouncementBody,
    response: Announcement,
  }),
  replaceAnnouncement: defineOperation({
    id: 'replaceAnnouncement',
    method: 'PUT',
    path: '/api/announcements/{id}',
    tag,
    access: 'admin',
    summary: 'Replace an announcement',
    description: '`createdBy` and `createdAt` are kept.',
    params: IdParams,
    body: AnnouncementBody,
    response: Announcement,
    errors: [404],
  }),
  deleteAnnouncement: defineOperation({
    id: 'deleteAnnouncement',
    method: 'DELETE',
    path: '/api/announcements/{id}',
    tag,
    access: 'admin',
    summary: 'Delete an announcement',
    params: IdParams,
    response: Deleted,
    errors: [404],
  }),
} as const;

import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { Deleted, IdParams } from '../schemas/common.ts';
import { SlugParams, StatusPage, StatusPageCreate, StatusPagePatch, StatusSummary } from '../schemas/status-pages.ts';

const tag = 'Status pages';

/** Status pages: ADMIN management, the public summary and the public stream of a page's changes (docs/API.md#status-pages). */
export const statusPageOperations = {
  listStatusPages: defineOperation({
    id: 'listStatusPages',
    method: 'GET',
    path: '/admin/api/status-pages',
    tag,
    access: 'admin',
    summary: 'Every status page, by id',
    response: Type.Array(StatusPage),
  }),
  getStatusPage: defineOperation({
    id: 'getStatusPage',
    method: 'GET',
    path: '/admin/api/status-pages/{id}',
    tag,
    access: 'admin',
    summary: 'One status page',
    params: IdParams,
    response: StatusPage,
    errors: [404],
  }),
  createStatusPage: defineOperation({
    id: 'createStatusPage',
    method: 'POST',
    path: '/admin/api/status-pages',
    tag,
    access: 'admin',
    summary: 'Create a status page',
    description:
      'Slugs and custom hostnames are unique (409). A custom hostname also clashes (409) with an HTTP route on the same hostname with the prefix `/`. The page is public at `/status/{slug}` (the first page also at `/status`).',
    body: StatusPageCreate,
    response: StatusPage,
    errors: [409],
  }),
  updateStatusPage: defineOperation({
    id: 'updateStatusPage',
    method: 'PATCH',
    path: '/admin/api/status-pages/{id}',
    tag,
    access: 'admin',
    summary: 'Change some fields of a status page',
    params: IdParams,
    body: StatusPagePatch,
    response: StatusPage,
    errors: [404, 409],
  }),
  deleteStatusPage: defineOperation({
    id: 'deleteStatusPage',
    method: 'DELETE',
    path: '/admin/api/status-pages/{id}',
    tag,
    access: 'admin',
    summary: 'Delete a status page',
    params: IdParams,
    response: Deleted,
    errors: [404],
  }),
  getStatusPageSummary: defineOperation({
    id: 'getStatusPageSummary',
    method: 'GET',
    path: '/api/status-pages/{slug}/summary',
    tag,
    access: 'public',
    summary: 'What the status page shows, as JSON',
    description:
      'Exactly the data of `GET /status/{slug}` for the same caller: anonymous callers see PUBLIC groups, authenticated ones also AUTHENTICATED groups; HIDDEN never shows. Carries an `ETag`; cacheable for a few seconds.',
    params: SlugParams,
    response: StatusSummary,
    errors: [404],
  }),
  statusPageEvents: defineOperation({
    id: 'statusPageEvents',
    method: 'GET',
    path: '/api/status-pages/{slug}/events',
    tag,
    access: 'public',
    stream: true,
    summary: 'Live changes of a status page (SSE)',
    description:
      'Starts with `SNAPSHOT` (`{overall, resources: [{id, status}]}`) unless `Last-Event-ID` can be replayed, then `PAGE_CHANGED` with the same shape holding what changed: the overall banner and the resources whose shown status moved. Only what the caller may see on the page.',
    params: SlugParams,
    errors: [404],
  }),
} as const;

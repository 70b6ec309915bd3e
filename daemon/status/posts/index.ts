import type { statusIncidentOperations } from '../../../src/api/ops/status-incidents.ts';
import type { HandlersOf } from '../../http/bind.ts';
import { postedIncidentHandlers } from './incidents.ts';
import { noticeHandlers } from './notices.ts';

/** What operators post on status pages: incidents with their timeline, and maintenance notices (docs/API.md#posted-incidents). */
export const postHandlers: HandlersOf<typeof statusIncidentOperations> = { ...postedIncidentHandlers, ...noticeHandlers };

import { announcementOperations } from './announcements.ts';
import { monitoringAdminOperations } from './monitoring-admin.ts';
import { resourceOperations } from './resources.ts';

/** Every operation of the monitoring capability (docs/API.md#resources, docs/API.md#announcements). */
export const monitoringOperations = {
  ...resourceOperations,
  ...announcementOperations,
  ...monitoringAdminOperations,
} as const;

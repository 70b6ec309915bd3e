import { announcementOperations } from './announcements.ts';
import { monitoringAdminOperations } from './monitoring-admin.ts';
import { resourceOperations } from './resources.ts';

/** Every operation of the monitoring capability (seed 000 and CONTRACT section 4). */
export const monitoringOperations = {
  ...resourceOperations,
  ...announcementOperations,
  ...monitoringAdminOperations,
} as const;

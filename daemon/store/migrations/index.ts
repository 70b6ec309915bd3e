import type { Migration, MigrationProvider } from 'kysely';
import * as auth from './0001-auth.ts';
import * as monitoring from './0002-monitoring.ts';
import * as tunnel from './0003-tunnel.ts';
import * as monitoringUniqueNames from './0004-monitoring-unique-names.ts';
import * as probes from './0005-probes.ts';
import * as tunnelAdmin from './0006-tunnel-admin.ts';
import * as routeEncodedSlashes from './0007-route-encoded-slashes.ts';
import * as alerts from './0008-alerts.ts';
import * as incidents from './0009-incidents.ts';
import * as statusPages from './0010-status-pages.ts';
import * as edge from './0011-edge.ts';
import * as pods from './0012-pods.ts';
import * as probeLocations from './0013-probe-locations.ts';
import * as edgeFollowups from './0014-edge-followups.ts';
import * as streamCredentials from './0015-stream-credentials.ts';
import * as statusPageErrorDetails from './0016-status-page-error-details.ts';
import * as resourceConditions from './0017-resource-conditions.ts';
import * as httpRequest from './0018-http-request.ts';
import * as checkTiming from './0019-check-timing.ts';
import * as push from './0020-push.ts';
import * as pushApi from './0021-push-api.ts';
import * as checkOptions from './0022-check-options.ts';
import * as notifierChannels from './0023-notifier-channels.ts';
import * as alertEventsIncident from './0024-alert-events-incident.ts';
import * as routePools from './0025-route-pools.ts';
import * as statusCommunication from './0026-status-communication.ts';
import * as statusCommunicationPods from './0027-status-communication-pods.ts';
import * as identity from './0028-identity.ts';
import * as compactHistory from './0029-compact-history.ts';
import * as dropNextRunIndex from './0030-drop-next-run-index.ts';

/**
 * Versioned migrations, run in name order at start. Listed statically (not
 * read from the folder) so that nothing depends on the working directory.
 * Add a new file with the next number; never edit one that has shipped.
 */
const migrations: Record<string, Migration> = {
  '0001-auth': auth,
  '0002-monitoring': monitoring,
  '0003-tunnel': tunnel,
  '0004-monitoring-unique-names': monitoringUniqueNames,
  '0005-probes': probes,
  '0006-tunnel-admin': tunnelAdmin,
  '0007-route-encoded-slashes': routeEncodedSlashes,
  '0008-alerts': alerts,
  '0009-incidents': incidents,
  '0010-status-pages': statusPages,
  '0011-edge': edge,
  '0012-pods': pods,
  '0013-probe-locations': probeLocations,
  '0014-edge-followups': edgeFollowups,
  '0015-stream-credentials': streamCredentials,
  '0016-status-page-error-details': statusPageErrorDetails,
  '0017-resource-conditions': resourceConditions,
  '0018-http-request': httpRequest,
  '0019-check-timing': checkTiming,
  '0020-push': push,
  '0021-push-api': pushApi,
  '0022-check-options': checkOptions,
  '0023-notifier-channels': notifierChannels,
  '0024-alert-events-incident': alertEventsIncident,
  '0025-route-pools': routePools,
  '0026-status-communication': statusCommunication,
  '0027-status-communication-pods': statusCommunicationPods,
  '0028-identity': identity,
  '0029-compact-history': compactHistory,
  '0030-drop-next-run-index': dropNextRunIndex,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};

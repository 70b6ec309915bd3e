import type { ColumnType, Generated, Selectable, Updateable } from 'kysely';
import type { ClusterTables } from './schema-cluster.ts';

/**
 * The database as kysely sees it. Times are epoch milliseconds (integers) so
 * the same columns work on SQLite and PostgreSQL (bigint); booleans are 0/1.
 */
export interface Database extends ClusterTables {
  settings: SettingsTable;
  users: UsersTable;
  user_recovery_codes: UserRecoveryCodesTable;
  sso_handoffs: SsoHandoffsTable;
  api_keys: ApiKeysTable;
  sessions: SessionsTable;
  groups: GroupsTable;
  resources: ResourcesTable;
  resource_groups: ResourceGroupsTable;
  check_history: CheckHistoryTable;
  check_outcomes: CheckOutcomesTable;
  check_details: CheckDetailsTable;
  history_hours: HistoryHoursTable;
  resource_locations: ResourceLocationsTable;
  location_results: LocationResultsTable;
  check_rollups_hourly: CheckRollupsTable;
  check_rollups_daily: CheckRollupsTable;
  announcements: AnnouncementsTable;
  registry_credentials: RegistryCredentialsTable;
  cors_origins: CorsOriginsTable;
  pods: PodsTable;
  agents: AgentsTable;
  routes: RoutesTable;
  route_agents: RouteAgentsTable;
  route_agent_health: RouteAgentHealthTable;
  route_log: RouteLogTable;
  incidents: IncidentsTable;
  alert_events: AlertEventsTable;
  maintenance_windows: MaintenanceWindowsTable;
  notifiers: NotifiersTable;
  alert_rules: AlertRulesTable;
  notifications: NotificationsTable;
  notification_items: NotificationItemsTable;
  notification_attempts: NotificationAttemptsTable;
  resource_dependencies: ResourceDependenciesTable;
  alert_reminders: AlertRemindersTable;
  status_pages: StatusPagesTable;
  certificates: CertificatesTable;
  acme_challenges: AcmeChallengesTable;
  push_checks: PushChecksTable;
  ping_keys: PingKeysTable;
  status_incidents: StatusIncidentsTable;
  status_incident_resources: StatusIncidentResourcesTable;
  status_incident_updates: StatusIncidentUpdatesTable;
  status_maintenance_notices: StatusMaintenanceNoticesTable;
  status_subscribers: StatusSubscribersTable;
  subscriber_messages: SubscriberMessagesTable;
  subscriber_deliveries: SubscriberDeliveriesTable;
  status_page_assets: StatusPageAssetsTable;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface UsersTable {
  id: Generated<number>;
  username: string;
  /** Empty for a user created by single sign-on: no password matches it. */
  password_hash: string;
  role: string;
  created_at: number;
  updated_at: number;
  /** The provider account the user is linked to (migration 0028). */
  sso_issuer: ColumnType<string | null, string | null | undefined, string | null>;
  sso_subject: ColumnType<string | null, string | null | undefined, string | null>;
  /** TOTP: the sealed secret (SecretBox `totp-secrets`); enabled once the enrolment is confirmed. */
  totp_secret: ColumnType<string | null, string | null | undefined, string | null>;
  totp_enabled_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** The last accepted 30 s step: a code is never accepted twice. */
  totp_last_step: ColumnType<number | null, number | null | undefined, number | null>;
  totp_failures: ColumnType<number, number | undefined, number>;
  totp_failed_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** password, password+totp or sso. */
  last_login_method: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface UserRecoveryCodesTable {
  id: Generated<number>;
  user_id: number;
  /** sha256 of the normalised code. */
  code_hash: string;
  created_at: number;
  used_at: number | null;
}

/** One-time codes handing an SSO login to `monctl login --sso` (loopback redirect), hashed. */
export interface SsoHandoffsTable {
  code_hash: string;
  user_id: number;
  created_at: number;
  expires_at: number;
}

export interface ApiKeysTable {
  id: Generated<number>;
  name: string;
  role: string;
  created_by: string;
  created_by_user_id: number | null;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  /** JSON array of route ids (migration 0011): a key for those routes at the edge, refused by the API. */
  route_ids: string | null;
}

export interface SessionsTable {
  /** sha256 of the cookie value: a leaked database does not leak live sessions. */
  id_hash: string;
  user_id: number;
  csrf_token: string;
  created_at: number;
  expires_at: number;
  /** How the session logged in: password, password+totp or sso (migration 0028). */
  method: ColumnType<string, string | undefined, string>;
}

export interface GroupsTable {
  id: Generated<number>;
  name: string;
  visibility: string;
  created_at: number;
  updated_at: number;
}

export interface ResourcesTable {
  id: Generated<number>;
  name: string;
  resource_type: string;
  target: string;
  skip_tls: number;
  recursive: number;
  active: number;
  interval_seconds: number;
  created_at: number;
  updated_at: number;
  /** When the scheduler runs it next; persisted so a restart resumes on schedule. */
  next_run_at: number | null;
  /** `available` | `not_available` | `unknown` (inactive is derived from `active`). */
  current_status: string;
  latest_check_status: string | null;
  latest_checked_at: number | null;
  latest_message: string | null;
  latest_error_code: string | null;
  latest_duration_ms: number | null;
  /** Alerting (migration 0008): thresholds, streaks, the open incident, the HTTPS peer certificate. */
  failure_threshold: Generated<number>;
  success_threshold: Generated<number>;
  fail_streak: Generated<number>;
  ok_streak: Generated<number>;
  open_incident_id: number | null;
  cert_expires_at: number | null;
  cert_alerted_days: number | null;
  /** The first failing check of the current streak (migration 0009): the cause of the incident it may open. */
  fail_since: number | null;
  fail_message: string | null;
  fail_error_code: string | null;
  /** How the locations' results decide the status (migration 0013): `any`, `majority` or `all`. */
  quorum: Generated<string>;
  /** Its conditions' texts as a JSON array (migration 0017); NULL when none. */
  conditions: Generated<string | null>;
  /** An HTTP check's plain request fields as JSON (migration 0018); NULL when none. */
  http_request: Generated<string | null>;
  /** Its secret values, sealed with the install secret (SecretBox `resource-secrets`); NULL when none. */
  http_secrets: Generated<string | null>;
  /** This resource's timeout (1..120); NULL: the daemon's --http-timeout. */
  timeout_seconds: Generated<number | null>;
  /** 1: AVAILABLE exactly when the check would otherwise fail; NULL: not upside down. */
  upside_down: Generated<number | null>;
  /** The phases of the latest check as JSON (migration 0019, daemon/probes/check-timing.ts); NULL when none were timed. */
  latest_timing: Generated<string | null>;
  /** The type's own options as JSON (migration 0022, src/probes/types.ts CheckOptionsByType); NULL when it has none. */
  check_options: Generated<string | null>;
  /** `critical` | `warning` | `info` (migration 0023): rules match on it, pagers receive it. */
  severity: Generated<string>;
}

/** Where a resource is checked (migration 0013); `agent_id` null is the daemon. No rows: the daemon alone. */
export interface ResourceLocationsTable {
  resource_id: number;
  position: number;
  agent_id: number | null;
}

/** The latest result of each location of a resource (migration 0013); `agent_id` 0 is the daemon. */
export interface LocationResultsTable {
  resource_id: number;
  agent_id: number;
  /** `available` | `not_available` | `unknown` */
  status: string;
  message: string | null;
  error_code: string | null;
  checked_at: number;
  duration_ms: number;
  /** Its phases as JSON (migration 0019); NULL when none were timed. */
  timing: Generated<string | null>;
}

export interface ResourceGroupsTable {
  resource_id: number;
  group_id: number;
}

/** One check (compact since migration 0029: its outcome is an id into `check_outcomes`). */
export interface CheckHistoryTable {
  id: Generated<number>;
  resource_id: number;
  outcome_id: number;
  checked_at: number;
  duration_ms: number;
  /** 1 where this check's status differs from the resource's previous check (kept past the size budget). */
  changed: Generated<number>;
}

/** A check's rare columns (migration 0029), for the rows that have any. */
export interface CheckDetailsTable {
  history_id: number;
  /** The location that checked: an agent's name, or null for the daemon (migration 0013). */
  location: string | null;
  /** A push check's ping (migration 0020): its PingDetail as JSON, without the body; NULL otherwise. */
  ping: Generated<string | null>;
  /** That ping's kept body (at most 100 KiB); NULL when it sent none. */
  ping_body: Generated<string | null>;
}

/** Each distinct check outcome once (migration 0029); `key` is `outcomeKey` of the three. */
export interface CheckOutcomesTable {
  id: Generated<number>;
  key: string;
  status: string;
  error_code: string | null;
  message: string | null;
}

/** The first history id written for each hour (epoch ms of its start): time ranges as id ranges. */
export interface HistoryHoursTable {
  hour_start: number;
  first_id: number;
}

/** One PUSH resource's ping identity, schedule and deadline (migration 0020, daemon/push/). */
export interface PushChecksTable {
  resource_id: number;
  uuid: string;
  slug: string;
  /** A period, or (NULL) a cron expression in `timezone`. */
  period_seconds: number | null;
  cron: string | null;
  timezone: string | null;
  grace_seconds: number;
  /** The latest ping that finished a run (success or failure), and its kind. */
  last_ping_at: number | null;
  last_ping_kind: string | null;
  /** A start not yet followed by a finish. */
  started_at: number | null;
  /** When it turns NOT_AVAILABLE unless a ping comes first; NULL once judged (until the next ping). */
  late_at: number | null;
  /** When it began to count, by `ctx.clock` (migration 0021); NULL for rows from before it. */
  created_at: Generated<number | null>;
}

/** `/ping/{key}/{slug}` keys: the daemon's (group_id NULL) and one per group (migration 0020). */
export interface PingKeysTable {
  id: Generated<number>;
  key: string;
  group_id: number | null;
  allow_create: Generated<number>;
  created_at: number;
}

/** A summary of one resource's checks in one hour or one UTC day (migration 0005). */
export interface CheckRollupsTable {
  resource_id: number;
  bucket_start: number;
  checks: number;
  available: number;
  duration_sum_ms: number;
  duration_p95_ms: number;
}

export interface AnnouncementsTable {
  id: Generated<number>;
  kind: string;
  content: string;
  created_by: string;
  active: number;
  active_until: number | null;
  created_at: number;
  updated_at: number;
}

export interface RegistryCredentialsTable {
  id: Generated<number>;
  registry: string;
  username: string;
  /** Encrypted with the install's secret box (daemon/auth/secret-box.ts), never returned. */
  password_enc: string;
  created_at: number;
}

export interface CorsOriginsTable {
  origin: string;
  created_at: number;
}

export interface PodsTable {
  id: Generated<number>;
  name: string;
  started_at: number;
  version: string;
  last_seen_at: number;
  stopped_at: number | null;
}

export interface AgentsTable {
  id: Generated<number>;
  name: string;
  token_hash: string | null;
  token_created_at: number | null;
  status: string;
  connected_at: number | null;
  last_seen_at: number | null;
  pod_id: number | null;
  remote_address: string | null;
  version: string | null;
  created_at: number;
  /** The agent's open incident (migration 0009): set only WHERE it is null, so one daemon opens it. */
  open_incident_id: number | null;
}

export interface RoutesTable {
  id: Generated<number>;
  name: string;
  type: string;
  agent_id: number;
  target: string;
  hostname: string | null;
  path_prefix: string | null;
  listen_port: number | null;
  allow_encoded_slashes: Generated<number>;
  enabled: number;
  created_at: number;
  updated_at: number;
  /** Access control (migration 0011): none | basic | apiKey; JSON lists; requests per second and burst per client IP. */
  auth: Generated<string>;
  basic_users: string | null;
  ip_allow: string | null;
  ip_deny: string | null;
  rate_per_second: number | null;
  rate_burst: number | null;
  https_redirect: Generated<number>;
  /** Pools and rules (migration 0025): round-robin | least-outstanding | failover; none | client-ip; JSON or NULL. */
  policy: Generated<string>;
  affinity: Generated<string>;
  health_check: string | null;
  request_headers: string | null;
  response_headers: string | null;
  host_header: string | null;
  /** `auth: oidc` (migration 0028): JSON `{emails, domains, groups, sessionTtl}`; NULL otherwise. */
  sso_rules: ColumnType<string | null, string | null | undefined, string | null>;
  preserve_host: Generated<number>;
  strip_prefix: Generated<number>;
}

/** A route's pool (migration 0025): `position` 0 is the first agent; `target` NULL: the route's. */
export interface RouteAgentsTable {
  route_id: number;
  agent_id: number;
  position: number;
  target: string | null;
}

/** The last health verdict of a pool agent (migration 0025), written by the pod holding its session. */
export interface RouteAgentHealthTable {
  route_id: number;
  agent_id: number;
  healthy: number;
  checked_at: number;
  error: string | null;
}

export interface RouteLogTable {
  id: Generated<number>;
  route_id: number;
  at: number;
  method: string | null;
  path: string | null;
  status: number | null;
  duration_ms: number;
  bytes_in: number;
  bytes_out: number;
  client_ip: string | null;
  agent_id: number | null;
  pod_id: number | null;
  error: string | null;
}

/** Alerting tables (migration 0008); lists of ids are JSON text. */
export interface IncidentsTable {
  id: Generated<number>;
  subject_type: 'resource' | 'agent';
  resource_id: number | null;
  agent_id: number | null;
  opened_at: number;
  resolved_at: number | null;
  cause_message: string | null;
  cause_error_code: string | null;
  checks: Generated<number>;
  maintenance: Generated<number>;
}

export interface AlertEventsTable {
  id: Generated<number>;
  kind: string;
  subject_type: 'resource' | 'agent' | 'certificate';
  resource_id: number | null;
  agent_id: number | null;
  incident_id: number | null;
  /** JSON of `AlertEventPayload` (daemon/alerts/types.ts). */
  payload: string;
  suppressed: string | null;
  created_at: number;
  routed_at: number | null;
  routed_by: string | null;
}

export interface MaintenanceWindowsTable {
  id: Generated<number>;
  name: string;
  kind: 'ONE_OFF' | 'WEEKLY';
  starts_at: number | null;
  ends_at: number | null;
  days: string | null;
  start_time: string | null;
  duration_minutes: number | null;
  time_zone: string | null;
  resource_ids: string;
  group_ids: string;
  agent_ids: string;
  created_at: number;
  updated_at: number;
}

export interface NotifiersTable {
  id: Generated<number>;
  name: string;
  type: string;
  enabled: Generated<number>;
  config: string;
  secrets_enc: string | null;
  created_at: number;
  updated_at: number;
  /** Liquid templates (migration 0023); NULL: the default message. */
  title_template: Generated<string | null>;
  body_template: Generated<string | null>;
}

/** Resource `resource_id` depends on `depends_on_id` (migration 0023). */
export interface ResourceDependenciesTable {
  resource_id: number;
  depends_on_id: number;
}

export interface AlertRulesTable {
  id: Generated<number>;
  name: string;
  enabled: Generated<number>;
  events: string;
  notifier_ids: string;
  resource_ids: string;
  group_ids: string;
  agent_ids: string;
  group_wait_seconds: number | null;
  repeat_interval_seconds: number | null;
  created_at: number;
  updated_at: number;
  /** JSON array of the severities the rule covers (migration 0023); NULL: all. */
  severities: Generated<string | null>;
  /** What PAGERDUTY and OPSGENIE receive for this rule's alerts instead of the resource's severity; NULL: the resource's. */
  severity_override: Generated<string | null>;
}

export interface NotificationsTable {
  id: Generated<number>;
  notifier_id: number;
  message_id: string;
  state: 'pending' | 'sent' | 'failed';
  created_at: number;
  send_after: number;
  next_attempt_at: number;
  attempts: Generated<number>;
  claimed_by: string | null;
  claimed_until: number | null;
  sent_at: number | null;
  last_error: string | null;
}

export interface NotificationItemsTable {
  notification_id: number;
  event_id: number;
  reminder: Generated<number>;
  /** What this notifier receives as the alert's severity (a rule's override, else the alert's), frozen when routed (migration 0023); NULL: the payload's. */
  severity: Generated<string | null>;
}

export interface NotificationAttemptsTable {
  id: Generated<number>;
  notifier_id: number;
  notification_id: number | null;
  message_id: string;
  attempt: number;
  at: number;
  ok: number;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
  /** What else the attempt has to say (migration 0023): why the templates were not used. */
  note: Generated<string | null>;
}

export interface AlertRemindersTable {
  rule_id: number;
  incident_id: number;
  last_at: number;
}

/** Status pages (migration 0010); `group_ids` is a JSON array, in the page's order. */
export interface StatusPagesTable {
  id: Generated<number>;
  slug: string;
  title: string;
  description: string | null;
  group_ids: string;
  show_announcements: number;
  show_incidents: number;
  /** 1: anonymous visitors see the probes' own error messages (migration 0015). */
  show_error_details: Generated<number>;
  custom_hostname: string | null;
  footer: string | null;
  /** Migration 0014: plain-HTTP requests for the page on its custom hostname get a 308 to HTTPS. */
  https_redirect: Generated<number>;
  created_at: number;
  updated_at: number;
  /** Branding (migration 0026): `#rrggbb`, checked against WCAG AA; NULL: the default. */
  accent_color: Generated<string | null>;
  header_link_url: Generated<string | null>;
  header_link_text: Generated<string | null>;
  /** The EMAIL notifier whose SMTP settings send subscriber mail (migration 0026); NULL: no email sign-ups. */
  email_notifier_id: Generated<number | null>;
  /** 1: readers may subscribe (the form, the feeds are always there). */
  subscriptions: Generated<number>;
}

/** Certificates for the edge (migration 0011): uploaded, or ordered through ACME (one row per name). */
export interface CertificatesTable {
  id: Generated<number>;
  source: 'UPLOAD' | 'ACME';
  acme_name: string | null;
  /** JSON array of the names served (wildcards as `*.example.com`). */
  hostnames: string;
  cert_pem: string | null;
  /** The private key, sealed with the install's SecretBox; never returned. */
  key_enc: string | null;
  issuer: string | null;
  serial: string | null;
  not_before: number | null;
  not_after: number | null;
  challenge: string | null;
  issued_at: number | null;
  last_error: string | null;
  last_error_at: number | null;
  failures: Generated<number>;
  next_attempt_at: number | null;
  claimed_by: string | null;
  claimed_until: number | null;
  created_at: number;
  updated_at: number;
}

export interface AcmeChallengesTable {
  token: string;
  hostname: string;
  type: string;
  key_authorization: string;
  cert_pem: string | null;
  key_enc: string | null;
  expires_at: number;
}

export type CertificateRow = Selectable<CertificatesTable>;
export type UserRow = Selectable<UsersTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type ResourceUpdate = Updateable<ResourcesTable>;
export type PodRow = Selectable<PodsTable>;
export type ResourceRow = Selectable<ResourcesTable>;
export type AgentRow = Selectable<AgentsTable>;
export type RouteRow = Selectable<RoutesTable>;
export type RouteAgentRow = Selectable<RouteAgentsTable>;
export type RouteAgentHealthRow = Selectable<RouteAgentHealthTable>;
export type RouteLogRow = Selectable<RouteLogTable>;

export type PostedImpact = 'none' | 'minor' | 'major' | 'critical';
export type PostedState = 'investigating' | 'identified' | 'monitoring' | 'resolved';

/** Incidents posted on a status page (migration 0026); `state` is the latest update's. */
export interface StatusIncidentsTable {
  id: Generated<number>;
  page_id: number;
  title: string;
  impact: PostedImpact;
  state: PostedState;
  /** The automatic incident it was promoted from; NULL: posted by hand. */
  source_incident_id: number | null;
  created_at: number;
  updated_at: number;
  resolved_at: number | null;
}

export interface StatusIncidentResourcesTable {
  incident_id: number;
  resource_id: number;
  impact: PostedImpact;
}

/** One entry of a posted incident's timeline: `message` is Markdown, `message_html` it rendered and sanitised. */
export interface StatusIncidentUpdatesTable {
  id: Generated<number>;
  incident_id: number;
  state: PostedState;
  message: string;
  message_html: string;
  /** 1: copied from the automatic incident it was promoted from. */
  automatic: Generated<number>;
  created_at: number;
}

/** A maintenance window shown on a page with its own text, before and during the window. */
export interface StatusMaintenanceNoticesTable {
  id: Generated<number>;
  page_id: number;
  window_id: number;
  title: string;
  message: string;
  message_html: string;
  created_at: number;
  updated_at: number;
}

/** A reader of a page, by email (double opt-in) or webhook. */
export interface StatusSubscribersTable {
  id: Generated<number>;
  page_id: number;
  kind: 'EMAIL' | 'WEBHOOK';
  /** As given (the email address, or the webhook URL). */
  address: string;
  /** Normalised for uniqueness: the email lower-cased, the URL as WHATWG URL serialises it. */
  address_key: string;
  /** JSON arrays of ids; empty: everything on the page. */
  resource_ids: Generated<string>;
  group_ids: Generated<string>;
  /** Random; the confirm and unsubscribe links are HMACs over it (a new nonce voids them). */
  token_nonce: string;
  /** WEBHOOK: the signing secret (`whsec_…`), sealed with the install's SecretBox. */
  secret_enc: string | null;
  created_at: number;
  /** EMAIL: NULL until the owner clicks the confirmation link; WEBHOOK: set when created. */
  confirmed_at: number | null;
  confirm_sent_at: number | null;
  created_ip: string | null;
}

/** The subscribers' outbox: written in the transaction that posts an update or signs a reader up. */
export interface SubscriberMessagesTable {
  id: Generated<number>;
  page_id: number;
  /** CONFIRM (to `subscriber_id` alone), INCIDENT_UPDATE, MAINTENANCE. */
  kind: string;
  subscriber_id: number | null;
  incident_id: number | null;
  update_id: number | null;
  /** JSON: what the message says, frozen when written. */
  payload: string;
  created_at: number;
  fanned_at: number | null;
  fanned_by: string | null;
}

/** One message to one subscriber, claimed and retried as alert notifications are. */
export interface SubscriberDeliveriesTable {
  id: Generated<number>;
  message_id: number;
  subscriber_id: number;
  /** The webhook-id and Message-ID: the same on every attempt, so a receiver drops a repeat. */
  delivery_key: string;
  state: 'pending' | 'sent' | 'failed';
  created_at: number;
  next_attempt_at: number;
  attempts: Generated<number>;
  claimed_by: string | null;
  claimed_until: number | null;
  sent_at: number | null;
  last_error: string | null;
}

/** A page's logo and favicon (PNG or SVG, size-capped). */
export interface StatusPageAssetsTable {
  page_id: number;
  kind: 'logo' | 'favicon';
  content_type: string;
  bytes: Buffer;
  sha256: string;
  updated_at: number;
}

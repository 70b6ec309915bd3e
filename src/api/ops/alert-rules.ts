import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { AlertRule, AlertRuleBody } from '../schemas/alert-rules.ts';
import { Deleted, IdParams } from '../schemas/common.ts';

const tag = 'Alert rules';

/** `/admin/api/alert-rules`: which notifiers get which alert events, for which resources and agents. */
export const alertRuleOperations = {
  listAlertRules: defineOperation({
    id: 'listAlertRules',
    method: 'GET',
    path: '/admin/api/alert-rules',
    tag,
    access: 'admin',
    summary: 'List alert rules',
    response: Type.Array(AlertRule),
  }),
  getAlertRule: defineOperation({
    id: 'getAlertRule',
    method: 'GET',
    path: '/admin/api/alert-rules/{id}',
    tag,
    access: 'admin',
    summary: 'One alert rule',
    params: IdParams,
    response: AlertRule,
    errors: [404],
  }),
  createAlertRule: defineOperation({
    id: 'createAlertRule',
    method: 'POST',
    path: '/admin/api/alert-rules',
    tag,
    access: 'admin',
    summary: 'Create an alert rule',
    description:
      'With no `resourceIds`, `groupIds` or `agentIds` the rule covers every resource and agent. Names are unique (409); ' +
      'every listed notifier, resource, group and agent must exist (400 naming the field).',
    body: AlertRuleBody,
    response: AlertRule,
    errors: [409],
  }),
  updateAlertRule: defineOperation({
    id: 'updateAlertRule',
    method: 'PUT',
    path: '/admin/api/alert-rules/{id}',
    tag,
    access: 'admin',
    summary: 'Replace an alert rule',
    params: IdParams,
    body: AlertRuleBody,
    response: AlertRule,
    errors: [404, 409],
  }),
  deleteAlertRule: defineOperation({
    id: 'deleteAlertRule',
    method: 'DELETE',
    path: '/admin/api/alert-rules/{id}',
    tag,
    access: 'admin',
    summary: 'Delete an alert rule',
    description: 'Notifications already grouped still leave.',
    params: IdParams,
    response: Deleted,
    errors: [404],
  }),
} as const;

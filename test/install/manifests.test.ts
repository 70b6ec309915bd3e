import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT } from '../helpers/daemon.ts';

/**
 * contrib/kubernetes and contrib/compose: each Kubernetes object checked
 * against the Kubernetes OpenAPI schema (the `kubernetes-models` package's
 * validators: kubectl's client dry-run needs a cluster's OpenAPI, kubeconform is
 * not in Debian), then what monctl needs of it: probes, non-root, volumes.
 */
type Obj = Record<string, any>;
const HEALTHCHECK = ['CMD', '/usr/local/bin/node', '/opt/monctl/healthcheck.mjs'];
const docs = (file: string): Obj[] =>
  parseAllDocuments(readFileSync(join(ROOT, 'contrib/kubernetes', file), 'utf8')).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS();
  });
const compose = (file: string): Obj => parse(readFileSync(join(ROOT, 'contrib/compose', file), 'utf8'), { merge: true });

const MODELS: Record<string, string> = {
  Service: 'kubernetes-models/v1/Service',
  StatefulSet: 'kubernetes-models/apps/v1/StatefulSet',
  Deployment: 'kubernetes-models/apps/v1/Deployment',
};
let models: string | undefined;
try {
  models = createRequire(import.meta.url).resolve('kubernetes-models/package.json');
} catch {
  console.warn('kubernetes-models is not installed (npm install -D kubernetes-models): the Kubernetes schema check is skipped');
}

async function validate(obj: Obj): Promise<void> {
  const module = await import(MODELS[obj.kind]);
  new module[obj.kind](obj).validate();
}

/** The pod template's one container, with what every monctl pod must have. */
function checkPod(workload: Obj): Obj {
  const pod = workload.spec.template.spec;
  expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, fsGroup: 10001 });
  const [container] = pod.containers;
  expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
  for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
    expect(container[probe].httpGet).toEqual({ path: '/actuator/health', port: 'api' });
  }
  expect(container.ports.map((p: Obj) => p.containerPort)).toEqual([8080, 8081]);
  expect(container.volumeMounts.map((m: Obj) => m.mountPath).sort()).toEqual(['/tmp', '/var/lib/monctl']);
  return container;
}

describe('contrib/kubernetes', () => {
  it.skipIf(!models).each(['sqlite.yaml', 'postgres.yaml'])('%s: every object is valid against the Kubernetes schema', async (file) => {
    for (const obj of docs(file)) await validate(obj);
  });

  it.skipIf(!models)('the schema check catches a wrong type (so it is not vacuous)', async () => {
    const [service] = docs('sqlite.yaml');
    service.spec.ports[0].port = 'eighty';
    await expect(validate(service)).rejects.toThrow(/port/);
  });

  it('sqlite.yaml: one StatefulSet replica on a claim from its template, the API and edge Services', () => {
    const objs = docs('sqlite.yaml');
    expect(objs.map((o) => o.kind)).toEqual(['Service', 'Service', 'StatefulSet']);
    const set = objs[2];
    expect(set.spec.replicas).toBe(1);
    expect(set.spec.volumeClaimTemplates.map((t: Obj) => t.metadata.name)).toEqual(['data']);
    const container = checkPod(set);
    expect(container.volumeMounts.find((m: Obj) => m.mountPath === '/var/lib/monctl').name).toBe('data');
    expect(objs[1].metadata.name).toBe('monctl-edge');
    expect(objs[1].spec.ports[0].targetPort).toBe('edge');
    for (const svc of objs.slice(0, 2)) expect(svc.spec.selector).toEqual(set.spec.template.metadata.labels);
  });

  it('postgres.yaml: a Deployment of 2 whose database URL comes from a Secret, each pod named and reachable at its IP', () => {
    const objs = docs('postgres.yaml');
    expect(objs.map((o) => o.kind)).toEqual(['Service', 'Service', 'Deployment']);
    const deployment = objs[2];
    expect(deployment.spec.replicas).toBe(2);
    const env = Object.fromEntries(checkPod(deployment).env.map((e: Obj) => [e.name, e.value ?? e.valueFrom]));
    expect(env.MONCTL_DATABASE_URL).toEqual({ secretKeyRef: { name: 'monctl-database', key: 'url' } });
    expect(env.MONCTL_POD_NAME).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(env.MONCTL_LISTEN).toBe('$(POD_IP):8080');
    expect(objs[1].spec.type).toBe('LoadBalancer');
  });
});

describe('contrib/compose', () => {
  it('compose.yaml: the daemon on SQLite, its data dir in a named volume, the image health check', () => {
    const c = compose('compose.yaml');
    expect(Object.keys(c.services)).toEqual(['monctl']);
    const monctl = c.services.monctl;
    expect(monctl.volumes).toEqual(['monctl-data:/var/lib/monctl']);
    expect(Object.keys(c.volumes)).toEqual(['monctl-data']);
    expect(monctl.healthcheck.test).toEqual(HEALTHCHECK);
    expect(monctl.ports).toEqual(['8080:8080', '8081:8081']);
    expect(monctl.read_only).toBe(true);
    expect(monctl.environment.MONCTL_DATABASE_URL).toBeUndefined();
  });

  it('compose-postgres.yaml: two daemons on one PostgreSQL service, each with its pod name, waiting for the database', () => {
    const c = compose('compose-postgres.yaml');
    expect(Object.keys(c.services).sort()).toEqual(['monctl-a', 'monctl-b', 'postgres']);
    for (const name of ['monctl-a', 'monctl-b']) {
      const pod = c.services[name];
      expect(pod.environment.MONCTL_DATABASE_URL).toBe('postgres://monctl@postgres:5432/monctl');
      expect(pod.command).toEqual(['--pod-name', name]);
      expect(pod.hostname).toBe(name);
      expect(pod.depends_on.postgres.condition).toBe('service_healthy');
      expect(pod.healthcheck.test).toEqual(HEALTHCHECK);
      expect(pod.volumes).toEqual([`${name}-data:/var/lib/monctl`]);
    }
    expect(c.services['monctl-a'].ports).not.toEqual(c.services['monctl-b'].ports);
    expect(c.services.postgres.environment.POSTGRES_DB).toBe('monctl');
    expect(Object.keys(c.volumes).sort()).toEqual(['monctl-a-data', 'monctl-b-data', 'postgres-data']);
  });
});

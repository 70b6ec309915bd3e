import { describe, expect, it } from 'vitest';
import { normaliseOrigin } from '../../daemon/monitoring/cors.ts';
import { checkTarget } from '../../daemon/monitoring/targets.ts';

describe('target validation', () => {
  const ok = (type: 'HTTP' | 'TCP' | 'DOCKER', target: string, recursive = false) =>
    expect(checkTarget(type, target, recursive), `${type} ${target}`).toBeUndefined();
  const bad = (type: 'HTTP' | 'TCP' | 'DOCKER', target: string, recursive = false) =>
    expect(checkTarget(type, target, recursive), `${type} ${target}`).toEqual(expect.any(String));

  it('HTTP: absolute http(s) URLs only', () => {
    for (const t of ['http://127.0.0.1:8080/health', 'https://example.com', 'https://[::1]:8443/x?y=1']) ok('HTTP', t);
    for (const t of ['example.com', 'ftp://example.com/', '/relative', 'http://', 'http://exa mple.com/', 'javascript:alert(1)'])
      bad('HTTP', t);
  });

  it('TCP: host:port, IPv6 in brackets, port 1..65535', () => {
    for (const t of ['127.0.0.1:22', 'db.example.com:5432', '[::1]:6379', 'localhost:1', 'h:65535']) ok('TCP', t);
    for (const t of ['127.0.0.1', '::1:80', '[::1]', 'host:0', 'host:65536', 'host:http', ':80', 'bad_host:80', '[nope]:80', '1.2.3:80'])
      bad('TCP', t);
  });

  it('DOCKER: image references, and namespaces when recursive', () => {
    for (const t of [
      'nginx',
      'nginx:1.27',
      'library/nginx:latest',
      'ghcr.io/org/app:v1.2.3',
      'localhost:5000/team/app',
      `registry.example.com/app@sha256:${'a'.repeat(64)}`,
      '[::1]:5000/app:tag',
    ])
      ok('DOCKER', t);
    for (const t of ['Nginx', 'nginx:', 'nginx:-bad', 'ghcr.io/', 'a//b', 'app@sha256:short', 'UPPER/Case', 'a b', '']) bad('DOCKER', t);
    for (const t of ['ghcr.io/org', 'localhost:5000', 'registry.example.com', 'team']) ok('DOCKER', t, true);
    for (const t of ['ghcr.io/org/app:v1', `app@sha256:${'a'.repeat(64)}`]) bad('DOCKER', t, true);
  });
});

describe('CORS origins', () => {
  it('accepts scheme://host[:port] and canonicalises it', () => {
    expect(normaliseOrigin('https://example.com')).toBe('https://example.com');
    expect(normaliseOrigin('https://App.Example.com:443')).toBe('https://app.example.com');
    expect(normaliseOrigin('http://localhost:5173')).toBe('http://localhost:5173');
    expect(normaliseOrigin('https://example.com:8443')).toBe('https://example.com:8443');
    expect(normaliseOrigin('http://[::1]:3000')).toBe('http://[::1]:3000');
  });

  it('refuses each invalid form with its reason', () => {
    const reason = (o: string) => {
      try {
        normaliseOrigin(o);
        return 'accepted';
      } catch (err) {
        return (err as { errors: Array<{ field: string; message: string }> }).errors[0];
      }
    };
    expect(reason('example.com')).toEqual({ field: 'origin', message: expect.stringMatching(/scheme/) });
    expect(reason('https://example.com/')).toEqual({ field: 'origin', message: expect.stringMatching(/slash/) });
    expect(reason('https://example.com/app')).toEqual({ field: 'origin', message: expect.stringMatching(/path/) });
    expect(reason('*')).toEqual({ field: 'origin', message: expect.stringMatching(/wildcard/) });
    expect(reason('https://*.example.com')).toEqual({ field: 'origin', message: expect.stringMatching(/wildcard/) });
    expect(reason('https://example.com:99999')).toEqual({ field: 'origin', message: expect.stringMatching(/port/) });
    expect(reason('https://user@example.com')).toEqual({ field: 'origin', message: expect.stringMatching(/user/) });
  });
});

import { Agent, request } from 'undici';
import { tunnelBody } from './soak-targets.ts';

/** Unexpected errors of a soak run: all counted, the first few kept verbatim. */
export class ErrorLog {
  count = 0;
  readonly first: string[] = [];
  add(source: string, detail: string): void {
    this.count++;
    if (this.first.length < 50) this.first.push(`[${source}] ${detail.slice(0, 2000)}`);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)];

/** Patient timeouts: on a loaded 2-core machine a slow answer is not an error, a missing one is. */
const dispatcherOptions = { headersTimeout: 120_000, bodyTimeout: 120_000, connectTimeout: 60_000, keepAliveTimeout: 10_000 };

export interface ReadLoadOptions {
  url: string;
  adminKey: string;
  userKey: string;
  resourceIds: number[];
  routeId: number;
  clients: number;
  /** Pause of each client between two requests. */
  pauseMs: number;
}

/** The read mix: public, authenticated and admin views, each with the credential it needs. */
function readPaths(o: ReadLoadOptions): Array<() => [string, string | undefined]> {
  const id = () => pick(o.resourceIds);
  return [
    () => ['/api/resources', undefined],
    () => ['/api/resources', o.userKey],
    () => [`/api/resources/${id()}`, undefined],
    () => [`/api/resources/${id()}`, o.adminKey],
    () => [`/api/resources/${id()}/history?limit=20`, o.userKey],
    () => [`/api/resources/${id()}/history?limit=100`, o.adminKey],
    () => [`/admin/api/resources/${id()}`, o.adminKey],
    () => ['/admin/api/resources', o.adminKey],
    () => ['/admin/api/agents', o.adminKey],
    () => ['/admin/api/routes', o.adminKey],
    () => [`/admin/api/routes/${o.routeId}/log?limit=50`, o.adminKey],
    () => ['/admin/api/topology', o.adminKey],
    () => ['/admin/api/groups', o.adminKey],
    () => ['/api/announcements', undefined],
    () => ['/api/me', o.userKey],
    () => ['/actuator/health', undefined],
    () => ['/actuator/prometheus', undefined],
  ];
}

/** A running load: `stop()` ends every loop after its current request and resolves with the count. */
export interface Load {
  done: () => number;
  stop(): Promise<number>;
}

function loops(clients: number, one: () => Promise<void>, pauseMs: number, close: () => Promise<void>): Load {
  let running = true;
  let done = 0;
  const loop = async () => {
    while (running) {
      await one();
      done++;
      if (pauseMs > 0) await sleep(pauseMs);
    }
  };
  const all = Array.from({ length: clients }, loop);
  return {
    done: () => done,
    async stop() {
      running = false;
      await Promise.all(all);
      await close();
      return done;
    },
  };
}

/** `clients` keep-alive clients reading the API in a loop; anything but a 2xx is an error. */
export function startReads(o: ReadLoadOptions, errors: ErrorLog): Load {
  const dispatcher = new Agent({ ...dispatcherOptions, connections: o.clients });
  const paths = readPaths(o);
  const one = async () => {
    const [path, key] = pick(paths)();
    try {
      const res = await request(o.url + path, { dispatcher, headers: key ? { 'x-api-key': key } : {} });
      const body = await res.body.text();
      if (res.statusCode < 200 || res.statusCode > 299) errors.add('api', `GET ${path}: ${res.statusCode} ${body}`);
    } catch (err) {
      errors.add('api', `GET ${path}: ${(err as Error).message}`);
    }
  };
  return loops(o.clients, one, o.pauseMs, () => dispatcher.close());
}

/** Requests through the edge to the route's upstream; each must be a 200 with the upstream's body. */
export function startTunnelLoad(o: { edgeUrl: string; host: string; clients: number; pauseMs: number }, errors: ErrorLog): Load {
  const dispatcher = new Agent({ ...dispatcherOptions, connections: o.clients });
  let n = 0;
  const one = async () => {
    const path = `/soak/${++n}?q=${n % 7}`;
    try {
      const res = await request(o.edgeUrl + path, { dispatcher, headers: { host: o.host } });
      const body = await res.body.text();
      if (res.statusCode !== 200 || body !== tunnelBody(path)) errors.add('tunnel', `GET ${path}: ${res.statusCode} ${body}`);
    } catch (err) {
      errors.add('tunnel', `GET ${path}: ${(err as Error).message}`);
    }
  };
  return loops(o.clients, one, o.pauseMs, () => dispatcher.close());
}

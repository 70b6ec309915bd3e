import { randomUUID } from 'node:crypto';

/** What the observer tells of exchanges through pool agents (pool/balancer.ts counts them). */
export interface PoolCounting {
  acquire(routeId: number, agentId: number): void;
  release(routeId: number, agentId: number): void;
}

/** One request or TCP connection through a route, from arrival to its last byte. */
export interface Exchange {
  /** The agent the exchange goes through (a retry moves it: see `moveTo`). */
  readonly agentId: number;
  /** The exchange is retried through another agent: the access log and the pool counters follow it. */
  moveTo(agentId: number): void;
  bytesIn: number;
  bytesOut: number;
  /** Records the outcome once (later calls are ignored): log entry, metrics, REQUEST_COMPLETED. */
  finish(status: number | null, error?: string): void;
}

export interface ExchangeInfo {
  method: string;
  /** Path without the query string: queries may carry credentials, and the log never stores them. */
  path: string;
  clientIp: string | null;
}

/** Where a finished exchange is recorded (observe.ts). */
export interface ExchangeSink {
  completed(exchange: ObservedExchange, status: number | null, error: string | undefined): void;
}

/** One exchange's record: a class (methods shared) rather than closures made per request. */
export class ObservedExchange implements Exchange {
  readonly started = process.hrtime.bigint();
  readonly at = Date.now();
  readonly requestId = randomUUID();
  readonly #sink: ExchangeSink;
  readonly routeId: number;
  readonly info: ExchangeInfo;
  readonly #pool: PoolCounting | undefined;
  #agentId: number;
  #done = false;
  bytesIn = 0;
  bytesOut = 0;

  constructor(sink: ExchangeSink, routeId: number, info: ExchangeInfo, agentId: number, pool: PoolCounting | undefined) {
    this.#sink = sink;
    this.routeId = routeId;
    this.info = info;
    this.#agentId = agentId;
    this.#pool = pool;
  }

  get agentId(): number {
    return this.#agentId;
  }

  moveTo(agentId: number): void {
    if (this.#done) return;
    this.#pool?.release(this.routeId, this.#agentId);
    this.#agentId = agentId;
    this.#pool?.acquire(this.routeId, agentId);
  }

  finish(status: number | null, error?: string): void {
    if (this.#done) return;
    this.#done = true;
    this.#pool?.release(this.routeId, this.#agentId);
    this.#sink.completed(this, status, error);
  }
}

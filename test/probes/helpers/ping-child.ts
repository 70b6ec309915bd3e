/**
 * Runs PING checks in a process of its own (in a network namespace of the test's): argv[2] is a
 * JSON list of [target, options]; prints {results, modes} as JSON.
 */
import { probePing } from '../../../src/probes/ping-probe.ts';
import { icmpMode } from '../../../src/probes/ping/pinger.ts';
import type { PingOptions } from '../../../src/probes/types.ts';

const checks: [string, PingOptions][] = JSON.parse(process.argv[2]);
const ctx = { timeoutMs: 2_000, conditions: null, report: false, skipTLS: false };
const results = await Promise.all(checks.map(([target, options]) => probePing(target, options, ctx)));
process.stdout.write(JSON.stringify({ results, modes: { ipv4: icmpMode(4), ipv6: icmpMode(6) } }));

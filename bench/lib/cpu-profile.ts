import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * The top entries of V8 CPU profiles (`--cpu-prof`) in a directory: self time per
 * function, and total time (self and callees) per function, as shares of all samples
 * outside idle. What bench:tunnel prints when it profiles the daemon.
 */
export function profileTop(dir: string, top = 25): string[] {
  const lines: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const p = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const name = (n: ProfileNode) => {
      const { functionName, url, lineNumber } = n.callFrame;
      const where = url ? `${url.replace(/^.*\/(node_modules|daemon|src|cli|dist)\//, '$1/')}:${lineNumber + 1}` : '';
      return `${functionName || '(anonymous)'} ${where}`.trim();
    };
    const self = new Map<string, number>();
    const total = new Map<string, number>();
    let all = 0;
    p.samples.forEach((id, i) => {
      const node = byId.get(id)!;
      const dt = p.timeDeltas[i] ?? 0;
      if (node.callFrame.functionName === '(idle)') return;
      all += dt;
      self.set(name(node), (self.get(name(node)) ?? 0) + dt);
      const seen = new Set<string>();
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const key = name(byId.get(at)!);
        if (seen.has(key)) continue;
        seen.add(key);
        total.set(key, (total.get(key) ?? 0) + dt);
      }
    });
    const pct = (v: number) => `${((100 * v) / all).toFixed(1).padStart(5)} %`;
    const list = (m: Map<string, number>) =>
      [...m]
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([k, v]) => `  ${pct(v)}  ${k}`);
    lines.push(
      `${file}: ${(all / 1e6).toFixed(2)} s of CPU outside idle`,
      'self:',
      ...list(self),
      'total (self and callees):',
      ...list(total),
    );
  }
  return lines;
}

if (process.argv[1] === import.meta.filename)
  for (const line of profileTop(process.argv[2], Number(process.argv[3] ?? 25))) console.log(line);

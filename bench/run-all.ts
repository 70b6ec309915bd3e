/**
 * `npm run bench`: runs every `bench:*` script of package.json one after the
 * other (never in parallel: they measure the same 2 cores) and writes their
 * output, with the machine they ran on, to docs/BENCHMARKS.md.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, release } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const names = Object.keys(pkg.scripts)
  .filter((s) => s.startsWith('bench:'))
  .sort();
const extra = process.argv.slice(2);

const sections: string[] = [];
for (const name of names) {
  console.log(`\n=== ${name}`);
  const started = Date.now();
  const run = spawnSync('npm', ['run', '--silent', name, '--', ...extra], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.stdout.write(run.stdout ?? '');
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  sections.push(`## ${name}\n\nExit code ${run.status}, ${seconds} s.\n\n\`\`\`\n${(run.stdout ?? '').trim()}\n\`\`\`\n`);
}

const cpu = cpus();
const machine = `${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Linux ${release()}, Node ${process.version}`;
const report =
  `# Benchmarks\n\nWritten by \`npm run bench\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC.\n\n` +
  `Machine: ${machine}.\n\nEach benchmark measures monctl and its baseline in the same run and prints the ratio; ` +
  `the figures vary between runs on a shared machine, the ratios much less.\n\n${sections.join('\n')}`;
writeFileSync(join(root, 'docs/BENCHMARKS.md'), report);
console.log('\nwrote docs/BENCHMARKS.md');

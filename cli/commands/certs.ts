import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Certificate } from '../../src/api/schemas/certificates.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { confirm } from '../io/prompt.ts';
import type { View } from '../output/render.ts';
import { act, resolveRef, withOutput } from '../runtime.ts';

const view: View<Certificate> = {
  columns: [
    { header: 'ID', get: (c) => c.id },
    { header: 'HOSTNAMES', get: (c) => c.hostnames },
    { header: 'SOURCE', get: (c) => c.source },
    { header: 'STATE', get: (c) => c.state },
    { header: 'NOT-AFTER', get: (c) => c.notAfter },
    { header: 'ISSUER', get: (c) => c.issuer },
    { header: 'LAST-ERROR', get: (c) => c.lastError },
    { header: 'RENEW-AT', get: (c) => c.renewAt, wide: true },
    { header: 'NEXT-ATTEMPT', get: (c) => c.nextAttemptAt, wide: true },
    { header: 'CHALLENGE', get: (c) => c.challenge, wide: true },
    { header: 'SERIAL', get: (c) => c.serial, wide: true },
    { header: 'CREATED', get: (c) => c.createdAt, wide: true },
  ],
};

const collect = (value: string, previous: string[] = []) => [
  ...previous,
  ...value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean),
];

function readPem(file: string, flag: string): string {
  try {
    return file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  } catch (err) {
    throw new MonctlError(
      'usage',
      `${flag} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      ExitCode.usage,
    );
  }
}

/** A certificate by id, or by one of its hostnames. */
const certId = (rt: Parameters<Parameters<typeof act>[0]>[0], ref: string) =>
  resolveRef(
    ref,
    'certificate',
    async () => {
      const list = await rt.client.call(ops.listCertificates);
      return list.flatMap((c) => c.hostnames.map((h) => ({ id: c.id, h })));
    },
    (x) => x.h,
  );

export function register(program: Command): void {
  const certs = program.command('certs').description('certificates of the HTTPS edge, uploaded or from ACME (ADMIN)');

  withOutput(certs.command('list').alias('ls').description('list certificates (keys are never shown)')).action(
    act(async (rt) => rt.show(await rt.client.call(ops.listCertificates), view)),
  );

  withOutput(certs.command('get').description('show a certificate').argument('<certificate>', 'id or hostname')).action(
    act(async (rt, ref: string) => rt.show(await rt.client.call(ops.getCertificate, { params: { id: await certId(rt, ref) } }), view)),
  );

  withOutput(certs.command('add').description('upload a PEM certificate chain and its key; the edge serves it by SNI at once'))
    .requiredOption('--cert <file>', 'PEM: the leaf certificate, then its intermediates')
    .requiredOption('--key <file>', 'PEM: its unencrypted private key (- reads stdin); sealed by the daemon, never shown again')
    .option(
      '--hostname <name>',
      'serve it only for these names (each covered by it, *.wildcards too); repeatable; default: all its names',
      collect,
    )
    .action(
      act(async (rt, opts: { cert: string; key: string; hostname?: string[] }) => {
        const body = {
          certificate: readPem(opts.cert, '--cert'),
          privateKey: readPem(opts.key, '--key'),
          ...(opts.hostname?.length ? { hostnames: opts.hostname } : {}),
        };
        const cert = await rt.client.call(ops.uploadCertificate, { body });
        await rt.done(cert, `Uploaded certificate ${cert.id} for ${cert.hostnames.join(', ')} (valid until ${cert.notAfter}).`);
      }),
    );

  certs
    .command('rm')
    .description('delete a certificate (the edge stops serving it at once)')
    .argument('<certificate>', 'id or hostname')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, opts: { yes?: boolean }) => {
        const id = await certId(rt, ref);
        await confirm(`Delete certificate ${ref}`, opts.yes);
        await rt.client.call(ops.deleteCertificate, { params: { id } });
        process.stdout.write(`Deleted certificate ${ref}.\n`);
      }),
    );
}

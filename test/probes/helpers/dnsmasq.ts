/**
 * A real dnsmasq on a loopback port (UDP and TCP), authoritative for `x.test` and its reverse zones
 * (192.0.2.0/24, 2001:db8::/32), with a record of each type the DNS checks ask for, an addn-hosts file whose
 * records change on `setMoving()` (SIGHUP rereads it) and NXDOMAIN for any other name in x.test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, listeningOn } from '../../helpers/free-port.ts';

export interface Dnsmasq {
  port: number;
  /** `moving.x.test`'s A record from now on. */
  setMoving(address: string): Promise<void>;
  stop(): Promise<void>;
}

/** The records served, as a check prints them (`dig +short`). */
export const RECORDS = {
  A: ['www.x.test', '192.0.2.1'],
  AAAA: ['www.x.test', '2001:db8::1'],
  CNAME: ['alias.x.test', 'www.x.test.'],
  MX: ['x.test', '10 mail.x.test.'],
  TXT: ['x.test', '"v=spf1 -all"'],
  NS: ['x.test', 'ns1.x.test.\nns2.x.test.'],
  SOA: ['x.test', 'ns1.x.test. hostmaster.x.test. 2026112801 1200 180 1209600 600'],
  SRV: ['_sip._tcp.x.test', '10 20 5060 sip.x.test.'],
  CAA: ['x.test', '0 issue "ca.test"'],
  PTR: ['192.0.2.1', 'www.x.test.'],
} as const;

export async function startDnsmasq(): Promise<Dnsmasq> {
  const dir = mkdtempSync(join(tmpdir(), 'monctl-dnsmasq-'));
  // dnsmasq started as root drops to `nobody`, which must still read the hosts file on SIGHUP.
  chmodSync(dir, 0o755);
  const hosts = join(dir, 'hosts');
  const writeHosts = (address: string) => {
    writeFileSync(hosts, `${address} moving.x.test\n`);
    chmodSync(hosts, 0o644);
  };
  writeHosts('192.0.2.10');
  const port = await freePort();
  const proc: ChildProcess = spawn(
    'dnsmasq',
    [
      '--keep-in-foreground',
      '--conf-file=/dev/null',
      '--pid-file=',
      '--log-facility=-',
      `--port=${port}`,
      '--no-resolv',
      '--no-hosts',
      '--listen-address=127.0.0.1',
      '--bind-interfaces',
      // Authoritative on 127.0.0.1: NS and SOA answered, NXDOMAIN for names it does not have.
      '--auth-server=ns1.x.test,127.0.0.1',
      '--auth-sec-servers=ns2.x.test',
      '--auth-zone=x.test,192.0.2.0/24,2001:db8::/32',
      '--auth-soa=2026112801,hostmaster.x.test',
      '--host-record=www.x.test,192.0.2.1,2001:db8::1',
      '--cname=alias.x.test,www.x.test',
      '--mx-host=x.test,mail.x.test,10',
      '--txt-record=x.test,v=spf1 -all',
      '--srv-host=_sip._tcp.x.test,sip.x.test,5060,10,20',
      '--caa-record=x.test,0,issue,ca.test',
      `--addn-hosts=${hosts}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += String(d)));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  try {
    await Promise.race([listeningOn(port, 10_000), exited.then(() => Promise.reject(new Error(`dnsmasq exited: ${stderr}`)))]);
  } catch (err) {
    proc.kill();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    async setMoving(address) {
      writeHosts(address);
      // dnsmasq logs each reread of an addn-hosts file ("read …/hosts - 1 names"): wait for it.
      const reread = new Promise<void>((resolve) => {
        const onData = (d: Buffer) => {
          if (String(d).includes(`read ${hosts}`)) {
            proc.stderr!.off('data', onData);
            resolve();
          }
        };
        proc.stderr!.on('data', onData);
      });
      proc.kill('SIGHUP');
      await reread;
    },
    async stop() {
      if (proc.exitCode === null) {
        proc.kill();
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

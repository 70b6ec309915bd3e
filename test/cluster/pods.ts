import { startDaemon, type StartOptions, type TestDaemon } from '../helpers/daemon.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

/** Several daemons (pods) on one fresh PostgreSQL database of the test cluster. */
export interface Pods {
  url: string;
  /** In the order they listened (the first one bootstrapped the database). */
  pods: TestDaemon[];
  /** By pod name. */
  pod(name: string): TestDaemon;
  /** Starts one more pod on the database (named `pod-<n>` unless given). */
  add(name?: string, opts?: StartOptions): Promise<TestDaemon>;
  stop(): Promise<void>;
}

export async function startPods(n: number, opts: StartOptions = {}): Promise<Pods> {
  const url = await createTestDatabase();
  const pods: TestDaemon[] = [];
  const byName = new Map<string, TestDaemon>();
  let counter = 0;
  const add = async (name = `pod-${String.fromCharCode(97 + counter++)}`, more: StartOptions = {}) => {
    const pod = await startDaemon({
      ...opts,
      ...more,
      databaseUrl: url,
      ...(pods[0] ? { adminKeyFrom: pods[0] } : {}),
      args: ['--pod-name', name, ...(opts.args ?? []), ...(more.args ?? [])],
    });
    pods.push(pod);
    byName.set(name, pod);
    return pod;
  };
  await add(); // the first pod bootstraps the database (user admin, its key); the others find it done
  await Promise.all(Array.from({ length: n - 1 }, () => add()));
  return {
    url,
    pods,
    add,
    pod(name) {
      const found = byName.get(name);
      if (!found) throw new Error(`no pod ${name}`);
      return found;
    },
    async stop() {
      await Promise.all(pods.map((p) => p.stop()));
    },
  };
}

import { generateKeyPairSync } from 'node:crypto';
import type { DaemonContext } from '../../context.ts';
import { certBox } from '../box.ts';

const SETTING = 'acme_account_key';

/** A new P-256 private key, PEM (certificates and the ACME account alike). */
export const newKey = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

/**
 * The ACME account's key, sealed in the settings table: one account for
 * every daemon of the database (the first to need it inserts it; the others
 * read the winner's).
 */
export async function accountKey(ctx: DaemonContext): Promise<string> {
  const read = async () => (await ctx.db.selectFrom('settings').select('value').where('key', '=', SETTING).executeTakeFirst())?.value;
  let sealed = await read();
  if (sealed === undefined) {
    await ctx.db
      .insertInto('settings')
      .values({ key: SETTING, value: certBox(ctx).seal(newKey()) })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    sealed = await read();
  }
  const key = sealed && certBox(ctx).open(sealed);
  if (!key) throw new Error('the ACME account key cannot be opened (was the database copied from another install?)');
  return key;
}

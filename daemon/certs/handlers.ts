import type { certificateOperations } from '../../src/api/ops/certificates.ts';
import { notFound } from '../../src/errors.ts';
import type { HandlersOf } from '../http/bind.ts';
import { certBox } from './box.ts';
import { toCertificate } from './mappers.ts';
import { checkUpload } from './pem.ts';
import type { CertStore } from './store.ts';

/** Handlers of `/admin/api/certificates`. Every change is served at once by this daemon (others within a minute). */
export function certificateHandlers(store: CertStore, changed: () => void): HandlersOf<typeof certificateOperations> {
  return {
    async listCertificates({ ctx }) {
      const rows = await ctx.db.selectFrom('certificates').selectAll().orderBy('id').execute();
      return rows.map((row) => toCertificate(row, ctx.config.acmeRenewAt));
    },

    async getCertificate({ ctx, params }) {
      const row = await ctx.db.selectFrom('certificates').selectAll().where('id', '=', params.id).executeTakeFirst();
      if (!row) throw notFound(`Certificate ${params.id} does not exist`);
      return toCertificate(row, ctx.config.acmeRenewAt);
    },

    async uploadCertificate({ ctx, body }) {
      const pair = checkUpload(body.certificate, body.privateKey, body.hostnames);
      const now = Date.now();
      const row = await ctx.db
        .insertInto('certificates')
        .values({
          source: 'UPLOAD',
          acme_name: null,
          hostnames: JSON.stringify(pair.hostnames),
          cert_pem: pair.chainPem,
          key_enc: certBox(ctx).seal(pair.keyPem),
          issuer: pair.issuer,
          serial: pair.serial,
          not_before: pair.notBefore,
          not_after: pair.notAfter,
          challenge: null,
          issued_at: null,
          last_error: null,
          last_error_at: null,
          next_attempt_at: null,
          claimed_by: null,
          claimed_until: null,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await store.reload();
      changed();
      return toCertificate(row, ctx.config.acmeRenewAt);
    },

    async deleteCertificate({ ctx, params }) {
      const result = await ctx.db.deleteFrom('certificates').where('id', '=', params.id).executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) throw notFound(`Certificate ${params.id} does not exist`);
      await store.reload();
      changed();
      return { status: 'deleted' as const };
    },
  };
}

import type { DaemonContext } from '../context.ts';
import { boxFor } from '../auth/secret-box.ts';

/** Private keys of certificates (and of ACME challenges and the ACME account) are sealed with this box. */
export const certBox = (ctx: Pick<DaemonContext, 'installSecret'>) => boxFor(ctx.installSecret, 'certificates');

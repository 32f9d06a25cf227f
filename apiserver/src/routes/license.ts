import type { FastifyInstance } from 'fastify';
import { License, LicenseAck } from '@vtl/api';
import type { AppContext } from '../context.js';
import { acknowledgeLicense, licenseView } from '../services/license.js';

/** §2.12: the support fingerprint; computed locally, never uploaded. */
export async function licenseRoutes(app: FastifyInstance, ctx: AppContext) {
  const files = ctx.config.machineIdFiles;
  app.get(
    '/api/license',
    {
      config: {
        role: 'read-only',
        doc: { summary: 'Support fingerprint and whether it changed', response: License },
      },
    },
    async () => License.parse(await licenseView(ctx.store, files)),
  );

  app.post(
    '/api/license/ack',
    {
      config: {
        role: 'admin',
        action: 'license.ack',
        doc: { summary: 'Acknowledge the current fingerprint', response: LicenseAck },
      },
    },
    async (request) => {
      const fingerprint = await acknowledgeLicense(ctx.store, files);
      request.auditSubject = fingerprint;
      return LicenseAck.parse({ ok: true, fingerprint });
    },
  );
}

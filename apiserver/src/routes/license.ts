import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { License, LicenseAck } from '@vtl/api';
import type { AppContext } from '../context.js';
import { acknowledgeLicense, licenseView } from '../services/license.js';

/** §2.12: the support fingerprint; computed locally, never uploaded. */
export async function licenseRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const files = ctx.config.machineIdFiles;
  r.get(
    '/api/license',
    {
      schema: { response: { 200: License } },
      config: {
        role: 'read-only',
        doc: { summary: 'Support fingerprint and whether it changed' },
      },
    },
    async () => License.parse(await licenseView(ctx.store, files)),
  );

  r.post(
    '/api/license/ack',
    {
      schema: { response: { 200: LicenseAck } },
      config: {
        role: 'admin',
        action: 'license.ack',
        doc: { summary: 'Acknowledge the current fingerprint' },
      },
    },
    async (request) => {
      const fingerprint = await acknowledgeLicense(ctx.store, files);
      request.auditSubject = fingerprint;
      return LicenseAck.parse({ ok: true, fingerprint });
    },
  );
}

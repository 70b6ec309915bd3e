import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { Certificate, CertificateUpload } from '../schemas/certificates.ts';
import { Deleted, IdParams } from '../schemas/common.ts';

const tag = 'Certificates';

/** `/admin/api/certificates`: the certificates of the HTTPS edge (docs/API.md#certificates). */
export const certificateOperations = {
  listCertificates: defineOperation({
    id: 'listCertificates',
    method: 'GET',
    path: '/admin/api/certificates',
    tag,
    access: 'admin',
    summary: 'Certificates of the HTTPS edge, uploaded and ACME (keys never returned)',
    response: Type.Array(Certificate),
  }),
  getCertificate: defineOperation({
    id: 'getCertificate',
    method: 'GET',
    path: '/admin/api/certificates/{id}',
    tag,
    access: 'admin',
    summary: 'One certificate',
    params: IdParams,
    response: Certificate,
    errors: [404],
  }),
  uploadCertificate: defineOperation({
    id: 'uploadCertificate',
    method: 'POST',
    path: '/admin/api/certificates',
    tag,
    access: 'admin',
    summary: 'Upload a certificate chain and its key',
    description:
      'The chain (leaf first) and its unencrypted key, as PEM. The key must match the leaf, and every hostname ' +
      'must be covered by it (a wildcard *.example.com covers a.example.com). An uploaded certificate wins over ACME for its names; ' +
      'ACME orders none for them. The key is sealed at rest and never returned.',
    body: CertificateUpload,
    response: Certificate,
  }),
  deleteCertificate: defineOperation({
    id: 'deleteCertificate',
    method: 'DELETE',
    path: '/admin/api/certificates/{id}',
    tag,
    access: 'admin',
    summary: 'Delete a certificate',
    description: 'The edge stops serving it at once. With ACME on, a route hostname it covered gets an ACME certificate.',
    params: IdParams,
    response: Deleted,
    errors: [404],
  }),
} as const;

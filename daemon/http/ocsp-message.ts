import { createHash, type KeyObject, verify, X509Certificate } from 'node:crypto';
import {
  BasicOCSPResponse,
  CertID,
  id_kp_OCSPSigning,
  id_pkix_ocsp_basic,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  Request,
  TBSRequest,
} from '@peculiar/asn1-ocsp';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, Certificate } from '@peculiar/asn1-x509';

/** What an OCSP query is about: one certificate, named as RFC 6960 does (by its issuer and serial). */
export interface OcspSubject {
  /** The responder's URL, from the certificate's Authority Information Access. */
  url: string;
  /** The DER OCSP request (SHA-1 CertID, no nonce: responders answer it from their cache, RFC 5019). */
  request: Buffer;
  certId: CertID;
  issuer: X509Certificate;
}

export interface OcspAnswer {
  status: 'good' | 'revoked' | 'unknown';
  thisUpdate: number;
  nextUpdate?: number;
}

const SHA1 = '1.3.14.3.2.26';
const SHA256 = '2.16.840.1.101.3.4.2.1';
const HASHES: Record<string, string> = {
  [SHA1]: 'sha1',
  [SHA256]: 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};
/** Signature algorithms of responses, by OID: the digest node's verify() needs (null: the key type says, Ed25519). */
const SIGNATURES: Record<string, string | null> = {
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.1': 'sha1',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.3.101.112': null,
};

const digest = (algorithm: string, data: ArrayBuffer | Buffer) =>
  createHash(algorithm)
    .update(Buffer.from(data as ArrayBuffer))
    .digest();

/** The OCSP responder URL of a certificate (the first http(s) one), or undefined. */
export function ocspUrl(cert: X509Certificate): string | undefined {
  for (const line of (cert.infoAccess ?? '').split('\n')) {
    const match = /^OCSP - URI:(https?:\/\/\S+)$/.exec(line.trim());
    if (match) return match[1];
  }
  return undefined;
}

/** The query for `leaf`, issued by `issuer`; undefined when the leaf names no OCSP responder. */
export function ocspSubject(leafDer: Buffer, issuerDer: Buffer): OcspSubject | undefined {
  const leaf = new X509Certificate(leafDer);
  const url = ocspUrl(leaf);
  if (!url) return undefined;
  const issuer = new X509Certificate(issuerDer);
  if (!leaf.checkIssued(issuer)) throw new Error(`the certificate next in the chain (${issuer.subject}) did not issue it`);
  const tbs = AsnConvert.parse(issuerDer, Certificate).tbsCertificate;
  const certId = new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: SHA1, parameters: null }),
    issuerNameHash: new OctetString(digest('sha1', AsnConvert.serialize(tbs.subject))),
    issuerKeyHash: new OctetString(digest('sha1', tbs.subjectPublicKeyInfo.subjectPublicKey)),
    serialNumber: AsnConvert.parse(leafDer, Certificate).tbsCertificate.serialNumber,
  });
  const request = new OCSPRequest({ tbsRequest: new TBSRequest({ requestList: [new Request({ reqCert: certId })] }) });
  return { url, request: Buffer.from(AsnConvert.serialize(request)), certId, issuer };
}

const same = (a: ArrayBuffer | Buffer, b: ArrayBuffer | Buffer) => Buffer.from(a as ArrayBuffer).equals(Buffer.from(b as ArrayBuffer));

/**
 * Reads a responder's answer about `subject` and checks it as a client would
 * before it is stapled: a successful basic response, about this certificate,
 * signed by its issuer or by a responder certificate the issuer made for
 * OCSP signing, current (thisUpdate not ahead by more than `skewMs`, nextUpdate
 * not past). Throws naming what is wrong.
 */
export function readOcspResponse(der: Buffer, subject: OcspSubject, now = Date.now(), skewMs = 5 * 60_000): OcspAnswer {
  const response = AsnConvert.parse(der, OCSPResponse);
  if (response.responseStatus !== OCSPResponseStatus.successful)
    throw new Error(`responder status ${OCSPResponseStatus[response.responseStatus] ?? response.responseStatus}`);
  if (response.responseBytes?.responseType !== id_pkix_ocsp_basic) throw new Error('not a basic OCSP response');
  const basic = AsnConvert.parse(response.responseBytes.response, BasicOCSPResponse);
  if (!signedBy(basic, subject.issuer))
    throw new Error('signature does not verify against the issuer or a responder certificate it issued');
  const mine = basic.tbsResponseData.responses.find((r) => {
    const hash = HASHES[r.certID.hashAlgorithm.algorithm];
    if (!hash || !same(r.certID.serialNumber, subject.certId.serialNumber)) return false;
    if (r.certID.hashAlgorithm.algorithm === SHA1) {
      return (
        same(r.certID.issuerNameHash.buffer, subject.certId.issuerNameHash.buffer) &&
        same(r.certID.issuerKeyHash.buffer, subject.certId.issuerKeyHash.buffer)
      );
    }
    const tbs = AsnConvert.parse(subject.issuer.raw, Certificate).tbsCertificate;
    return (
      same(r.certID.issuerNameHash.buffer, digest(hash, AsnConvert.serialize(tbs.subject))) &&
      same(r.certID.issuerKeyHash.buffer, digest(hash, tbs.subjectPublicKeyInfo.subjectPublicKey))
    );
  });
  if (!mine) throw new Error('no answer about this certificate in the response');
  const thisUpdate = mine.thisUpdate.getTime();
  const nextUpdate = mine.nextUpdate?.getTime();
  if (thisUpdate > now + skewMs) throw new Error(`thisUpdate ${mine.thisUpdate.toISOString()} is in the future`);
  if (nextUpdate !== undefined && nextUpdate <= now) throw new Error(`nextUpdate ${mine.nextUpdate!.toISOString()} has passed`);
  const status = mine.certStatus.revoked ? 'revoked' : mine.certStatus.good !== undefined ? 'good' : 'unknown';
  return { status, thisUpdate, ...(nextUpdate !== undefined ? { nextUpdate } : {}) };
}

/** RFC 6960 4.2.2.2: the issuer signs, or a certificate it issued with the OCSPSigning extended key usage. */
function signedBy(basic: BasicOCSPResponse, issuer: X509Certificate): boolean {
  const hash = SIGNATURES[basic.signatureAlgorithm.algorithm];
  if (hash === undefined || !basic.tbsResponseDataRaw) return false;
  const data = Buffer.from(basic.tbsResponseDataRaw);
  const signature = Buffer.from(basic.signature);
  const check = (key: KeyObject) => {
    try {
      return verify(hash, data, key, signature);
    } catch {
      return false;
    }
  };
  if (check(issuer.publicKey)) return true;
  return (basic.certs ?? []).some((c) => {
    const delegate = new X509Certificate(Buffer.from(AsnConvert.serialize(c)));
    return (
      delegate.checkIssued(issuer) &&
      delegate.verify(issuer.publicKey) &&
      (delegate.keyUsage ?? []).includes(id_kp_OCSPSigning) &&
      check(delegate.publicKey)
    );
  });
}

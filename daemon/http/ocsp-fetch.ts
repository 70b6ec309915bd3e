import { request } from 'undici';

/** A responder's answer is cut off past this size (answers are 1 to 4 KiB) and this time. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const FETCH_TIMEOUT_MS = 10_000;

/**
 * POSTs a DER OCSP request to a responder (RFC 6960 A.1) and reads the answer,
 * bounded in time and size; no redirects are followed. `signal` aborts it (the daemon stops).
 */
export async function fetchOcspResponse(url: string, body: Buffer, signal: AbortSignal): Promise<Buffer> {
  const timeout = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  const res = await request(url, {
    method: 'POST',
    body,
    signal: AbortSignal.any([signal, timeout]),
    headers: { 'content-type': 'application/ocsp-request', accept: 'application/ocsp-response' },
  }).catch((err: Error) => {
    throw timeout.aborted ? new Error(`no answer within ${FETCH_TIMEOUT_MS} ms`) : err;
  });
  if (res.statusCode !== 200) {
    res.body.destroy();
    throw new Error(`HTTP ${res.statusCode}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_RESPONSE_BYTES) throw new Error(`answer larger than ${MAX_RESPONSE_BYTES} bytes`);
      chunks.push(chunk);
    }
  } catch (err) {
    res.body.destroy();
    throw timeout.aborted ? new Error(`no complete answer within ${FETCH_TIMEOUT_MS} ms`) : err;
  }
  return Buffer.concat(chunks);
}

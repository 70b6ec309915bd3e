/** An otpauth URI as a QR code drawn with block characters, for an authenticator app to scan off the terminal. */
export async function printQr(uri: string, out: NodeJS.WritableStream = process.stderr): Promise<void> {
  const { default: QRCode } = await import('qrcode');
  out.write(await QRCode.toString(uri, { type: 'terminal', small: true }));
}

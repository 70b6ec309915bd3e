import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/**
 * A real SMTP server (the `smtp-server` package) for the EMAIL notifier: STARTTLS
 * (or TLS from the first byte) with the given certificate, AUTH required
 * before any mail, and every received message parsed with `mailparser`.
 */
export interface ReceivedMail {
  mail: ParsedMail;
  /** The session was encrypted when the message came (after STARTTLS, or TLS from the start). */
  secure: boolean;
  user: string | undefined;
  envelopeTo: string[];
}

export interface SmtpReceiver {
  port: number;
  mails: ReceivedMail[];
  authFailures: number;
  close(): Promise<void>;
}

export async function startSmtpServer(opts: {
  cert: string;
  key: string;
  user: string;
  pass: string;
  secure?: boolean;
  rejectTo?: string;
}): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const state = { authFailures: 0 };
  const server = new SMTPServer({
    secure: opts.secure ?? false,
    key: opts.key,
    cert: opts.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    // AUTH only over TLS: an EMAIL notifier that skipped STARTTLS would fail here.
    allowInsecureAuth: false,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === opts.user && auth.password === opts.pass) return callback(null, { user: auth.username });
      state.authFailures++;
      return callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onMailFrom(_address, session, callback) {
      if (!session.user) return callback(Object.assign(new Error('Authentication required'), { responseCode: 530 }));
      return callback();
    },
    onRcptTo(address, _session, callback) {
      if (address.address === opts.rejectTo) return callback(Object.assign(new Error('No such user here'), { responseCode: 550 }));
      return callback();
    },
    onData(stream, session, callback) {
      simpleParser(stream).then((mail) => {
        mails.push({
          mail,
          secure: session.secure,
          user: session.user as string | undefined,
          envelopeTo: session.envelope.rcptTo.map((r) => r.address),
        });
        callback();
      }, callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    mails,
    get authFailures() {
      return state.authFailures;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

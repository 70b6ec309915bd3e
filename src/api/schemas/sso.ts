import { Type } from '@sinclair/typebox';
import { Body, Id, StringEnum } from './common.ts';
import { Role } from './auth.ts';

/** The CLI's host name, for the name of the API key it gets (`monctl <user>@<host> <date>`). */
const Host = Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._-]+$', description: "the CLI's host name" }));

export const SsoDevice = Type.Object(
  {
    userCode: Type.String({ description: 'the code the user confirms at the provider' }),
    verificationUri: Type.String(),
    verificationUriComplete: Type.Union([Type.String(), Type.Null()], {
      description: 'the URL with the code in it, if the provider gives one',
    }),
    expiresIn: Type.Integer({ description: 'seconds' }),
    interval: Type.Integer({ description: 'seconds to wait between polls' }),
    handle: Type.String({ description: 'the grant, sealed by the daemon: send it to poll' }),
  },
  { title: 'SsoDevice' },
);

export const SsoDevicePoll = Body({ handle: Type.String({ minLength: 1, maxLength: 4096 }), host: Host }, 'SsoDevicePoll');

export const SsoHandoff = Body({ code: Type.String({ minLength: 1, maxLength: 128 }), host: Host }, 'SsoHandoff');

const Login = {
  token: Type.String({ description: 'the API key for the CLI, shown once' }),
  keyId: Id,
  username: Type.String(),
  role: Role,
};

export const SsoCliLogin = Type.Object({ status: Type.Literal('complete'), ...Login }, { title: 'SsoCliLogin' });

export const SsoDeviceResult = Type.Object(
  {
    status: StringEnum(['pending', 'slow_down', 'complete'] as const),
    token: Type.Optional(Login.token),
    keyId: Type.Optional(Id),
    username: Type.Optional(Login.username),
    role: Type.Optional(Role),
  },
  { title: 'SsoDeviceResult' },
);

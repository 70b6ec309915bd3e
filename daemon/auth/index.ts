import type { ModuleFactory } from '../module.ts';
import { bootstrap } from './bootstrap.ts';
import { keyHandlers } from './keys.ts';
import { loginRoutes } from './login-routes.ts';
import { cliSsoHandlers, cliSsoRoutes } from './oidc/cli-routes.ts';
import { ssoLoginRoutes } from './oidc/login-routes.ts';
import { twoFactorHandlers, twoFactorRoutes } from './two-factor/routes.ts';
import { userHandlers } from './users.ts';

/** Users, API keys, sessions, the login form, single sign-on and second factors. */
export const authModule: ModuleFactory = async (ctx) => {
  await bootstrap(ctx);
  const routes = [loginRoutes(ctx), ssoLoginRoutes(ctx), cliSsoRoutes(ctx), twoFactorRoutes(ctx)];
  return {
    name: 'auth',
    handlers: { ...userHandlers, ...keyHandlers, ...twoFactorHandlers, ...cliSsoHandlers },
    routes: (router) => {
      for (const add of routes) add(router);
    },
  };
};

import type { ModuleFactory } from '../module.ts';
import { bootstrap } from './bootstrap.ts';
import { keyHandlers } from './keys.ts';
import { loginRoutes } from './login-routes.ts';
import { userHandlers } from './users.ts';

/** Users, API keys, sessions and the login form. */
export const authModule: ModuleFactory = async (ctx) => {
  await bootstrap(ctx);
  return {
    name: 'auth',
    handlers: { ...userHandlers, ...keyHandlers },
    routes: loginRoutes(ctx),
  };
};

import { authModule } from './auth/index.ts';
import type { ModuleFactory } from './module.ts';
import { systemModule } from './system/index.ts';

/**
 * The daemon's capabilities, in start order. A new capability adds its
 * factory here; its operations live in src/api/ops/ and its code in its folder.
 */
export const moduleFactories: ModuleFactory[] = [
  systemModule,
  authModule,
];
